"""ONNX operators deliberately not supported, each refused with the reason: the training
losses, sequence and optional values, string processing, the ops whose output shape
depends on the values (NonZero, Unique, Compress, NonMaxSuppression), random sampling and
image decoding. Registering them (rather
than leaving them unknown) makes the refusal name why, and lets the conformance suite
count their cases as named exclusions."""

from .node_builder import NodeBuilder
from .onnx_converters import CONVERTERS
from .onnx_types import OnnxImportError

REASONS = {
    **dict.fromkeys(("NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"),
                    "a training loss: inference graphs do not compute it"),
    **dict.fromkeys(("SequenceAt", "SequenceConstruct", "SequenceEmpty", "SequenceErase", "SequenceInsert",
                     "SequenceLength", "SequenceMap", "SplitToSequence", "ConcatFromSequence"),
                    "sequence values are not modelled (tensors only)"),
    **dict.fromkeys(("Optional", "OptionalGetElement", "OptionalHasElement"),
                    "optional values are not modelled (tensors only)"),
    **dict.fromkeys(("StringNormalizer", "StringSplit", "StringConcat", "RegexFullMatch"),
                    "the string element type is not modelled"),
    **dict.fromkeys(("NonZero", "Unique", "Compress", "NonMaxSuppression"),
                    "its output shape depends on the input values, and shapes are static here"),
    **dict.fromkeys(("Bernoulli", "RandomUniformLike", "RandomNormalLike", "RandomUniform", "RandomNormal",
                     "Multinomial"), "random sampling: compiled outputs must be deterministic"),
    "ImageDecoder": "decoding image files is not a tensor computation",
}


def _refuse(node: NodeBuilder):
    raise OnnxImportError(f"{node.info}: not supported: {REASONS[node.info.op_type]}")


for _op_type in REASONS:
    CONVERTERS[_op_type] = _refuse
