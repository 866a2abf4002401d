"""The hostile-input campaign (issue 15, part 2): invalid, mutated and truncated ONNX
files and MLIR text go through dnnf-translate, dnnf-opt, dnnf-run and dnnf-compile,
each run a process of its own (``forkserver``) that must end with a one-line error
and a non-zero exit (never a traceback, a crash signal or a hang) and leave no
partial output.

    python -m dnnf_mlir.hostile 500 --seed 1 --jobs 2     # or: bash tools/hostile.sh 500
"""

from .campaign import Outcome, Summary, judge, run_campaign
from .onnx_cases import Case

__all__ = ["Case", "Outcome", "Summary", "judge", "run_campaign"]
