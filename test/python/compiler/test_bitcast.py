"""BitCast compiled for the host: each element's bits, checked against numpy's ``view``
on values whose bits a value conversion would change (NaN payloads, negative integers
read as unsigned, float8 codes, subnormals)."""

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper

from dnnf_mlir import InferenceSession
from dnnf_mlir.frontend.onnx_types import OnnxImportError

PAIRS = [  # (source, target) ONNX types
    (TensorProto.FLOAT, TensorProto.INT32), (TensorProto.INT32, TensorProto.FLOAT),
    (TensorProto.DOUBLE, TensorProto.UINT64), (TensorProto.UINT16, TensorProto.FLOAT16),
    (TensorProto.FLOAT16, TensorProto.BFLOAT16), (TensorProto.FLOAT8E4M3FN, TensorProto.UINT8),
    (TensorProto.INT8, TensorProto.FLOAT8E5M2FNUZ), (TensorProto.BOOL, TensorProto.UINT8),
]


def _model(nodes, inputs, outputs):
    graph = helper.make_graph(nodes, "bitcast", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26)])


def _bits(dtype, rng, count):
    """``count`` values of ``dtype`` from random bytes (every bit pattern is fair)."""
    if dtype == np.bool_:
        return rng.integers(0, 2, count).astype(np.bool_)
    return rng.integers(0, 256, count * dtype.itemsize, dtype=np.uint8).view(dtype)


def test_bits_are_kept():
    rng = np.random.default_rng(11)
    nodes, inputs, outputs, feeds = [], [], [], {}
    for index, (source, target) in enumerate(PAIRS):
        x, y = f"x{index}", f"y{index}"
        feeds[x] = _bits(np.dtype(helper.tensor_dtype_to_np_dtype(source)), rng, 512)
        inputs.append(helper.make_tensor_value_info(x, source, [512]))
        nodes.append(helper.make_node("BitCast", [x], [y], to=target))
        outputs.append(helper.make_tensor_value_info(y, target, [512]))
    got = InferenceSession(_model(nodes, inputs, outputs), use_cache=False, threads=1).run(None, feeds)
    for (source, target), x, result in zip(PAIRS, feeds.values(), got):
        want = x.view(helper.tensor_dtype_to_np_dtype(target))
        assert result.dtype == want.dtype
        np.testing.assert_array_equal(result.view(np.uint8), want.view(np.uint8), err_msg=f"{source} -> {target}")
    assert np.isnan(got[0].view(np.float32)).any() and np.isnan(feeds["x3"].view(np.float16)).any()


@pytest.mark.parametrize("source, target, message", [
    (TensorProto.FLOAT, TensorProto.INT64, "widths differ"),
    (TensorProto.UINT8, TensorProto.BOOL, "BitCast to bool"),
])
def test_refused_with_a_clear_error(source, target, message):
    model = _model([helper.make_node("BitCast", ["x"], ["y"], to=target)],
                   [helper.make_tensor_value_info("x", source, [4])], [helper.make_tensor_value_info("y", target, [4])])
    with pytest.raises(OnnxImportError, match=f"BitCast.*opset 26.*{message}"):
        InferenceSession(model, use_cache=False, threads=1)
