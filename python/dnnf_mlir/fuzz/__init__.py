"""Differential fuzzing of the whole pipeline: random well-typed ONNX graphs
(``strategies``), run through onnxruntime, the interpreter, ecg-rewrite, every fusion
mode and the compiled host code and compared (``differential``), in campaigns over
worker processes that save shrunk failures as regression cases (``campaign``).

Needs Hypothesis (the ``test`` extra); ``tools/fuzz.sh N`` runs a campaign.
"""
