"""The ops lowered to sequential loops (the scatters, TopK) compiled for every target in a
graph around them: the host CPU, and the GPU targets (Vulkan on lavapipe, OpenCL on
PoCL), where a scatter's copy of the data runs over workgroups and threads, then each
loop as a dispatch of one invocation (``codegen/gpu/loop_kernels.py``). Each scatter
graph reads the scattered data again after the scatter, so a loop that updated its input
in place instead of the copy fails. TopK's indices must equal onnxruntime's; other
outputs are compared with onnxruntime (``checking.compare``: |got - want| <= 3e-5 + 1e-4
* |want| per element).
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from dnnf_mlir.checking import compare
from dnnf_mlir import InferenceSession
from dnnf_mlir.compiler import Artifact, compile_model
from dnnf_mlir.tools.common import onnxruntime_session


def _scatter_model(op_type: str, shapes: dict, **attrs) -> onnx.ModelProto:
    """relu(data) scattered, the sigmoid of the result plus relu(data) again."""
    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64 if name == "indices" else TensorProto.FLOAT, shape)
              for name, shape in shapes.items()]
    nodes = [helper.make_node("Relu", ["data"], ["r"]),
             helper.make_node(op_type, ["r", "indices", "updates"], ["s"], **attrs),
             helper.make_node("Sigmoid", ["s"], ["g"]), helper.make_node("Add", ["g", "r"], ["y"])]
    output = helper.make_tensor_value_info("y", TensorProto.FLOAT, shapes["data"])
    graph = helper.make_graph(nodes, "g", inputs, [output])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


_RNG = np.random.default_rng(0)
CASES = {  # name -> (model, the index input)
    "scatter_nd_add": (_scatter_model("ScatterND", {"data": [16, 8, 4], "indices": [5, 1], "updates": [5, 8, 4]},
                              reduction="add"), _RNG.integers(-16, 16, (5, 1))),
    "scatter_elements_axis1": (_scatter_model("ScatterElements", {"data": [6, 9], "indices": [4, 7], "updates": [4, 7]},
                                      axis=1), np.stack([_RNG.permutation(9)[:7] - 9 * (i % 2) for i in range(4)])),
    "scatter_elements_max": (_scatter_model("ScatterElements", {"data": [40], "indices": [25], "updates": [25]},
                                    reduction="max"), _RNG.integers(-40, 40, (25,))),
}


@pytest.mark.parametrize("target", ["host", "vulkan", "opencl"])
@pytest.mark.parametrize("name", CASES)
def test_scatter_matches_onnxruntime(name, target, tmp_path):
    model, indices = CASES[name]
    onnx.save(model, str(tmp_path / "model.onnx"))
    compile_model(tmp_path / "model.onnx", tmp_path / "out", target=target)
    artifact = Artifact(tmp_path / "out")
    rng = np.random.default_rng(1)
    inputs = [indices.astype(dtype) if input_name == "indices" else rng.standard_normal(shape).astype(dtype)
              for input_name, dtype, shape in artifact.inputs]
    (got,), _ = artifact.run(inputs)
    (want,) = onnxruntime_session(artifact.manifest["model"]).run(
        None, {input_name: array for (input_name, _, _), array in zip(artifact.inputs, inputs)})
    result = compare(got, want)
    assert result.ok and not result.degenerate, result


def _top_k_model(shape, k: int, **attrs) -> onnx.ModelProto:
    """TopK of sigmoid(x), its values negated."""
    nodes = [helper.make_node("Sigmoid", ["x"], ["s"]), helper.make_node("TopK", ["s", "k"], ["v", "indices"], **attrs),
             helper.make_node("Neg", ["v"], ["values"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("values", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("indices", TensorProto.INT64, None)],
                              [helper.make_tensor("k", TensorProto.INT64, [1], [k])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


TOP_K = {
    "last_axis_largest": _top_k_model([4, 100], 5, axis=-1, largest=1),
    "middle_axis_smallest": _top_k_model([3, 17, 4], 6, axis=1, largest=0),
}


@pytest.mark.parametrize("target", ["host", "vulkan", "opencl"])
@pytest.mark.parametrize("name", TOP_K)
def test_top_k_matches_onnxruntime(name, target, tmp_path):
    onnx.save(TOP_K[name], str(tmp_path / "model.onnx"))
    compile_model(tmp_path / "model.onnx", tmp_path / "out", target=target)
    artifact = Artifact(tmp_path / "out")
    x = np.random.default_rng(2).standard_normal(artifact.inputs[0][2]).astype(np.float32)
    (values, indices), _ = artifact.run([x])
    want_values, want_indices = onnxruntime_session(artifact.manifest["model"]).run(None, {"x": x})
    np.testing.assert_array_equal(indices, want_indices)
    result = compare(values, want_values)
    assert result.ok and not result.degenerate, result


def test_scatters_and_top_k_on_aarch64(aarch64_toolchain, tmp_path):
    """Both scatters and TopK in one model, compiled for AArch64 and run under qemu: equal
    to onnxruntime (every output is selected or summed once, so exactly)."""
    nodes = [helper.make_node("ScatterND", ["d", "i", "u"], ["s"], reduction="add"),
             helper.make_node("TopK", ["s", "k"], ["values", "indices"], axis=-1),
             helper.make_node("ScatterElements", ["d", "ie", "ue"], ["t"], axis=1, reduction="max")]
    shapes = {"d": [16, 64], "i": [5, 1], "u": [5, 64], "ie": [16, 8], "ue": [16, 8]}
    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64 if name.startswith("i") else TensorProto.FLOAT, s)
              for name, s in shapes.items()]
    outputs = [helper.make_tensor_value_info(name, TensorProto.INT64 if name == "indices" else TensorProto.FLOAT, None)
               for name in ("values", "indices", "t")]
    graph = helper.make_graph(nodes, "g", inputs, outputs, [helper.make_tensor("k", TensorProto.INT64, [1], [7])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    rng = np.random.default_rng(5)
    feeds = {"d": rng.standard_normal((16, 64)).astype(np.float32), "i": rng.integers(-16, 16, (5, 1)),
             "u": rng.standard_normal((5, 64)).astype(np.float32), "ie": rng.integers(-64, 64, (16, 8)),
             "ue": rng.standard_normal((16, 8)).astype(np.float32)}
    onnx.save(model, str(tmp_path / "model.onnx"))
    want = onnxruntime_session(tmp_path / "model.onnx").run(None, feeds)
    got = InferenceSession(model, target="aarch64", use_cache=False).run(None, feeds)
    for ours, theirs in zip(got, want):
        np.testing.assert_array_equal(ours, theirs)
