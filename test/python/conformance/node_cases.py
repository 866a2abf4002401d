"""Which ONNX backend node test cases the importer covers, and how to run one.

ONNX's node tests (``onnx.backend.test``, generated in memory from
``onnx/backend/test/case/node``) are one small model each. A case is *covered*
when every node of its graph (subgraphs included) is in the default ONNX domain
and has a converter in ``onnx_converters.CONVERTERS``. Covered cases run in
``test_onnx_backend.py``, except the ``EXCLUDED`` ones: features the project
deliberately does not support, which the importer must reject with an
``OnnxImportError`` (the test checks that it still does), and the ``DEVIATIONS``,
where the project follows ONNX Runtime rather than ONNX's reference outputs (the
test compares them with onnxruntime's instead).

Shape-like operands (Reshape's shape, Slice's starts, reduction axes, ...) must be
known at compile time; the node tests often feed them as graph inputs, so those
inputs are bound to their test values (``constant_inputs``), as onnx-mlir's
backend tests do. Computing such operands from runtime values stays unsupported.
"""

import re
import warnings

import numpy as np
from onnx.backend.test.runner import Runner

from dnnf_mlir import make_context
from dnnf_mlir.frontend.onnx_converters import CONVERTERS
from dnnf_mlir.frontend.onnx_importer import ONNX_DOMAINS
from dnnf_mlir.onnx_backend import DnnfBackend

# Pattern (matching a whole case name, without the _cpu suffix) -> why it does not run.
EXCLUDED = {
    r"test_cast(like)?_.*(FLOAT8E8M0|FLOAT4|INT4|INT2).*": "float8e8m0/float4/int4/int2 element types are not modelled",
    r"test_equal_string(_broadcast)?": "string element type is not modelled",
    r"test_identity_(opt|sequence)": "optional and sequence values are not supported (tensors only)",
    r"test_batchnorm_(epsilon|example)_training_mode": "training-mode BatchNormalization (batch statistics) is not supported",
    r"test_training_dropout.*": "training-mode Dropout (random masks) is not supported",
    r"test_maxpool_with_argmax_2d_precomputed_(pads|strides)": "MaxPool's Indices output is not supported",
    r"test_reduce_(max|min|log_sum_exp)_empty_set(_bool)?": "Max/Min/LogSumExp over an empty axis is rejected by the ECG verifier by design",
    r"test_(de)?quantizelinear_(float4e2m1|u?int4|u?int2)(_.*)?":
        "float4/int4/int2 quantized element types are not modelled",
    r"test_(nllloss_(?!.*_expanded$)|sce_).*": "training only: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss are not supported",
    r"test_(sequence|split_to_sequence)_.*": "sequence values are not supported (tensors only)",
    r"test_optional_.*": "optional values are not supported (tensors only)",
    r"test_(nonzero|unique|compress|nonmaxsuppression)_.*": "data-dependent output shapes are not supported (static shapes)",
    r"test_(bernoulli|randomuniformlike|randomnormallike)(_.*)?": "random sampling is not supported (deterministic outputs)",
    r"test_image_decoder_.*": "image decoding is not supported (not a tensor computation)",
    r"test_(strnormalizer|string_split|string_concat|regex_full_match)(_.*)?": "string processing: the string element type is not modelled",
}

# Cases where the project follows ONNX Runtime rather than ONNX's reference implementation
# (ResizeOp deliberately, float16 rounding): they are checked against onnxruntime's outputs instead.
DEVIATIONS = {
    r"test_resize_downsample_scales_(linear|cubic)_align_corners":
        "align_corners with a non-integral input*scale: (out-1) uses the floored output size, as ONNX Runtime does",
    r"test_attention_4d_causal_fp16(_expanded)?":
        "float16: onnxruntime and this backend both differ from ONNX's reference by one float16 ulp (4.9e-4 at 0.47), past its rtol of 1e-3",
}

# Cases checked against ONNX's reference with a looser absolute tolerance: pattern -> (atol, why).
LOOSER_ATOL = {
    r"test_dft_inverse(_opset19)?": (1e-6, "elements that cancel to 0: the reference's FFT leaves 1.9e-7 of float32 "
                                           "round-off there (onnxruntime 2e-7), past the case's atol of 1e-7"),
}

# Operands the importer needs at compile time (``NodeBuilder.known``): ONNX op type -> input indices.
CONSTANT_OPERANDS = {
    "Reshape": (1,), "Expand": (1,), "Squeeze": (1,), "Unsqueeze": (1,), "Slice": (1, 2, 3, 4),
    "Split": (1,), "Tile": (1,), "Pad": (1, 2, 3), "Clip": (1, 2), "ConstantOfShape": (0,),
    "Range": (0, 1, 2), "Resize": (1, 2, 3), "Upsample": (1,), "Dropout": (2,),
    "Trilu": (1,), "CumSum": (1,), "CumProd": (1,), "OneHot": (1,), "CenterCropPad": (1,),
    "HannWindow": (0,), "HammingWindow": (0,), "BlackmanWindow": (0,), "TopK": (1,),
    "DFT": (1, 2), "AffineGrid": (1,),
    **{op: (1,) for op in (
        "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
        "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp",
    )},
}
# Ops whose result depends only on their input's shape, not its values.
_SHAPE_ONLY = ("Shape", "Size")


def load_cases() -> list:
    """ONNX's node test cases."""
    from onnx.backend.test.loader import load_model_tests

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the case generators overflow casts on purpose
        return load_model_tests(kind="node")


def graph_ops(graph) -> set:
    """(domain, op_type) of every node, including nodes of subgraphs."""
    ops = set()
    for node in graph.node:
        ops.add((node.domain, node.op_type))
        for attribute in node.attribute:
            for subgraph in [attribute.g] if attribute.HasField("g") else list(attribute.graphs):
                ops |= graph_ops(subgraph)
    return ops


def op_types(model) -> set:
    """Op types of ``model``; those of other domains are prefixed with the domain."""
    return {op if domain in ONNX_DOMAINS else f"{domain}::{op}" for domain, op in graph_ops(model.graph)}


def uncovered_ops(model) -> set:
    """Op types of ``model`` the importer does not cover."""
    return {op for op in op_types(model) if op not in CONVERTERS}


def excluded_reason(name: str, patterns=EXCLUDED):
    for pattern, reason in patterns.items():
        if re.fullmatch(pattern, name):
            return reason
    return None


def classify(cases=None) -> dict:
    """name -> (kind, case, detail): "covered" (None), "excluded", "deviation" or "looser" (reason),
    or "uncovered" (missing ops)."""
    result = {}
    for case in cases if cases is not None else load_cases():
        missing = uncovered_ops(case.model)
        if missing:
            result[case.name] = ("uncovered", case, sorted(missing))
        elif excluded_reason(case.name):
            result[case.name] = ("excluded", case, excluded_reason(case.name))
        elif excluded_reason(case.name, DEVIATIONS):
            result[case.name] = ("deviation", case, excluded_reason(case.name, DEVIATIONS))
        elif excluded_reason(case.name, LOOSER_ATOL):
            result[case.name] = ("looser", case, excluded_reason(case.name, LOOSER_ATOL)[1])
        else:
            result[case.name] = ("covered", case, None)
    return result


def constant_inputs(model) -> list:
    """Graph inputs whose values the importer needs: they reach a ``CONSTANT_OPERANDS`` slot."""
    needed = set()
    for node in reversed(model.graph.node):
        if node.op_type not in _SHAPE_ONLY and needed.intersection(node.output):
            needed.update(node.input)
        for index in CONSTANT_OPERANDS.get(node.op_type, ()) if node.domain in ONNX_DOMAINS else ():
            if index < len(node.input):
                needed.add(node.input[index])
    initializers = {i.name for i in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name in needed and i.name not in initializers]


def _array(value):
    from onnx import TensorProto, numpy_helper

    return numpy_helper.to_array(value) if isinstance(value, TensorProto) else np.asarray(value)


_CONTEXT = []


def prepare_kwargs(case) -> dict:
    """DnnfBackend.prepare's keyword arguments for ``case``: its constant inputs and a shared context."""
    if not _CONTEXT:
        _CONTEXT.append(make_context())
    return {"constant_inputs": constant_inputs(case.model), "context": _CONTEXT[0]}


def run_case(case, against_onnxruntime: bool = False):
    """Run ``case`` on DnnfBackend as ONNX's runner does; raises on a mismatch or an import error.

    With ``against_onnxruntime`` (``DEVIATIONS``) the expected outputs are onnxruntime's.
    """
    rep = DnnfBackend.prepare(case.model, "CPU", **prepare_kwargs(case))
    for inputs, expected in case.data_sets:
        inputs = [_array(x) for x in inputs]
        outputs = rep.run(inputs)
        if against_onnxruntime:
            import onnxruntime

            session = onnxruntime.InferenceSession(case.model.SerializeToString(), providers=["CPUExecutionProvider"])
            expected = session.run(None, {i.name: x for i, x in zip(case.model.graph.input, inputs)})
        looser = excluded_reason(case.name, LOOSER_ATOL)
        atol = looser[0] if looser else case.atol
        Runner.assert_similar_outputs([_array(y) for y in expected], list(outputs), rtol=case.rtol, atol=atol)
