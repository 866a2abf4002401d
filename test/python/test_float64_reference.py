"""tools/float64_reference.py: the model run in float64 by onnxruntime or, where it has
no double kernel, by the interpreter; without either, the check stays on float32."""

import threading
import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnnf_mlir.tools import float64_reference
from dnnf_mlir.tools.float64_reference import Float64Reference, as_float64, judged_reference, weightless

RNG = np.random.default_rng(0)
X = RNG.standard_normal((1, 3, 8, 8)).astype(np.float32)
W = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)


def model(node, output_shape) -> onnx.ModelProto:
    graph = helper.make_graph(
        [node, helper.make_node("Cast", ["y"], ["z"], to=TensorProto.FLOAT)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(X.shape))],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, output_shape)],
        [numpy_helper.from_array(W, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def conv_float64(x, w):
    """Conv with no padding, in float64."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    windows = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))  # n, c, h, w, kh, kw
    return np.einsum("nchwij,ocij->nohw", windows, w)


def test_every_float_tensor_becomes_float64():
    converted = as_float64(model(helper.make_node("Conv", ["x", "w"], ["y"]), [1, 4, 6, 6]))
    assert converted.graph.input[0].type.tensor_type.elem_type == TensorProto.DOUBLE
    assert converted.graph.initializer[0].data_type == TensorProto.DOUBLE
    assert converted.graph.node[1].attribute[0].i == TensorProto.DOUBLE  # Cast to float: to double


@pytest.mark.parametrize("raw", [True, False])
def test_weights_keep_their_values_in_float64(raw):
    """Weights stored as raw bytes (converted in place) or as a list of floats."""
    values = RNG.standard_normal(W.shape).astype(np.float32)
    weight = helper.make_tensor("w", TensorProto.FLOAT, W.shape, values.tobytes() if raw else values.ravel(), raw=raw)
    float32 = model(helper.make_node("Conv", ["x", "w"], ["y"]), [1, 4, 6, 6])
    float32.graph.initializer[0].CopyFrom(weight)
    converted = as_float64(float32).graph.initializer[0]
    assert converted.name == "w" and converted.data_type == TensorProto.DOUBLE
    got = numpy_helper.to_array(converted)
    assert got.dtype == np.float64 and np.array_equal(got, values.astype(np.float64))
    assert float32.graph.initializer[0] == weight  # the model given is left as it was


def test_the_weightless_model_takes_its_weights_as_inputs():
    """What onnxruntime is first asked to load: the graph, without the weights' bytes."""
    conv = as_float64(model(helper.make_node("Conv", ["x", "w"], ["y"]), [1, 4, 6, 6]))
    skeleton = weightless(conv)
    assert not skeleton.graph.initializer and skeleton.graph.node == conv.graph.node
    assert [i.name for i in skeleton.graph.input] == ["x", "w"]
    w = skeleton.graph.input[1].type.tensor_type
    assert w.elem_type == TensorProto.DOUBLE and [d.dim_value for d in w.shape.dim] == list(W.shape)
    assert skeleton.opset_import == conv.opset_import and skeleton.graph.output == conv.graph.output
    onnx.checker.check_model(skeleton, full_check=True)


@pytest.mark.parametrize("node,shape,source", [
    (helper.make_node("Conv", ["x", "w"], ["y"]), [1, 4, 6, 6], "the interpreter in float64"),  # no double Conv
    (helper.make_node("Mul", ["x", "x"], ["y"]), list(X.shape), "onnxruntime in float64"),
])
def test_the_reference_computes_in_float64(node, shape, source):
    reference = Float64Reference(model(node, shape))
    assert reference.source == source
    got = reference.run({"x": X})[0]
    want = conv_float64(X, W) if node.op_type == "Conv" else X.astype(np.float64) ** 2
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)  # float32 would be off by ~1e-7


def test_without_a_float64_reference_the_check_stays_on_float32():
    det = helper.make_model(helper.make_graph(
        [helper.make_node("Det", ["a"], ["d"])], "g",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3, 3])],
        [helper.make_tensor_value_info("d", TensorProto.FLOAT, [2])]), opset_imports=[helper.make_opsetid("", 17)])
    fp32 = [np.ones(2, np.float32)]
    judged = judged_reference(det, {"a": np.ones((2, 3, 3), np.float32)}, fp32)
    assert judged.name == "onnxruntime" and judged.outputs == fp32 and judged.noises == [None]
    assert "no float64 reference" in judged.note and "'Det'" in judged.note


def test_processes_that_need_one_reference_at_once_make_it_once(monkeypatch, tmp_path):
    """The second waits on the key's lock and reads what the first stored (the lock is
    per open file, so two threads contend for it as two processes do)."""
    monkeypatch.setenv("DNNF_CACHE_DIR", str(tmp_path / "compiled"))
    made = []

    class Slow(Float64Reference):
        def run(self, feeds):
            made.append(1)
            time.sleep(0.5)  # the other thread asks meanwhile
            return super().run(feeds)

    monkeypatch.setattr(float64_reference, "Float64Reference", Slow)
    mul = model(helper.make_node("Mul", ["x", "x"], ["y"]), list(X.shape))
    fp32 = [(X * X).astype(np.float32)]
    results = []
    threads = [threading.Thread(target=lambda: results.append(judged_reference(mul, {"x": X}, fp32)))
               for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(made) == 1 and len(results) == 2
    for judged in results:
        assert judged.name == "float64"
        np.testing.assert_array_equal(judged.outputs[0], X.astype(np.float64) ** 2)
