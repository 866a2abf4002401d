"""The Vulkan target's ``lavapipe`` profile keeps vec4 storage buffers of 32-bit elements as
two 64-bit words (``GpuDevice.vec4_as_words64``, ``codegen/gpu/storage.py``): every vec4
loaded or stored goes through a bitcast. Graphs with odd shapes, weights as buffers, int32
buffers and a buffer read both as vec4s and as scalars (``x + x^T``, a lane of a vec4)
are compiled for that profile, run on the Vulkan device found (lavapipe here) and
compared with numpy in float64 within ``checking.compare``'s default (|got - want| <=
3e-5 + 1e-4 * |want|). The inputs are standard normal: a word put in the wrong half of a
vec4, or a vec4 of another row, moves outputs by O(1). Each binary passes ``spirv-val``
and declares its buffers as vec2s of 64-bit words; the generic profile's do not.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnnf_mlir.checking import compare
from dnnf_mlir.codegen.gpu.vulkan.spirv import disassemble
from gpu_artifacts import artifact_cache, assert_spirv_valid

OPSET = 17
RNG = np.random.default_rng(23)
FFN_W1 = (RNG.standard_normal((128, 512)) * 0.1).astype(np.float32)
FFN_B1 = RNG.standard_normal(512).astype(np.float32)
FFN_W2 = (RNG.standard_normal((512, 128)) * 0.1).astype(np.float32)


def _graph(nodes, inputs: dict, output: list, weights: dict | None = None, output_type=TensorProto.FLOAT):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
                              [helper.make_tensor_value_info("y", output_type, output)],
                              [numpy_helper.from_array(v, n) for n, v in (weights or {}).items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def _relu(x):
    return np.maximum(x, 0)


CASES = {
    # name: (model, reference of {input: array} in float64)
    # M and N odd, K stepped by 4, bias and ReLU in the epilogue.
    "matmul_odd": (_graph([helper.make_node("MatMul", ["a", "b"], ["m"]), helper.make_node("Add", ["m", "c"], ["s"]),
                           helper.make_node("Relu", ["s"], ["y"])], {"a": [1, 37, 64], "b": [64, 45], "c": [45]},
                          [1, 37, 45]),
                   lambda i: _relu(i["a"] @ i["b"] + i["c"])),
    # MobileBERT's FFN shape (weights as buffers), the residual added in the second epilogue.
    "ffn": (_graph([helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Add", ["h", "b1"], ["hb"]),
                    helper.make_node("Relu", ["hb"], ["r"]), helper.make_node("MatMul", ["r", "w2"], ["o"]),
                    helper.make_node("Add", ["o", "x"], ["y"])], {"x": [1, 128, 128]}, [1, 128, 128],
                   {"w1": FFN_W1, "b1": FFN_B1, "w2": FFN_W2}),
            lambda i: _relu(i["x"] @ FFN_W1 + FFN_B1) @ FFN_W2.astype(np.float64) + i["x"]),
    # A buffer read a vec4 along its rows and a scalar down its columns.
    "transpose_add": (_graph([helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
                              helper.make_node("Add", ["x", "t"], ["y"])], {"x": [36, 36]}, [36, 36]),
                      lambda i: i["x"] + i["x"].T),
    # An int32 result: x * 8 truncated to int32, squared.
    "int32": (_graph([helper.make_node("Mul", ["x", "eight"], ["s"]), helper.make_node("Cast", ["s"], ["i"], to=TensorProto.INT32),
                      helper.make_node("Mul", ["i", "i"], ["y"])],
                     {"x": [33, 68]}, [33, 68], {"eight": np.array(8.0, np.float32)}, TensorProto.INT32),
              lambda i: np.trunc(i["x"] * 8) ** 2),
}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """``get(name, device)``: the Vulkan artifact of ``CASES[name]`` for ``device``'s profile."""
    get = artifact_cache(tmp_path_factory.mktemp("words64"), lambda name: (CASES[name][0],))
    return lambda name, device: get(name, "vulkan", "fp32", device)[0]


@pytest.mark.parametrize("name", CASES)
def test_matches_numpy(name, compiled):
    artifact = compiled(name, "lavapipe")
    rng = np.random.default_rng(5)
    inputs = {n: rng.standard_normal(shape).astype(dtype) for n, dtype, shape in artifact.inputs}
    (got,), _ = artifact.run([inputs[n] for n, _, _ in artifact.inputs])
    want = CASES[name][1]({n: v.astype(np.float64) for n, v in inputs.items()})
    result = compare(got, want)
    assert result.ok and not result.degenerate, f"{name}: {result}"


@pytest.mark.parametrize("name", CASES)
def test_lavapipe_binaries_use_words(name, compiled):
    """Every binary passes spirv-val; each reads a buffer as 64-bit words (``x + x^T``'s
    reads are scalar where transposed, but its result and its row reads are vec4s)."""
    artifact = compiled(name, "lavapipe")
    assert_spirv_valid(artifact)
    for binary in sorted((artifact.path / "kernels").glob("*.spv")):
        assembly = disassemble(binary.read_bytes())
        assert "OpTypeVector %ulong 2" in assembly and "OpTypePointer StorageBuffer %v2ulong" in assembly, binary.name
    assert "require shaderInt64" in (artifact.path / "plan.txt").read_text()


def test_generic_profile_keeps_vec4_of_floats(compiled):
    """The generic profile (real GPUs load a vec4 in one access) needs no Int64 for it."""
    artifact = compiled("ffn", None)
    for binary in sorted((artifact.path / "kernels").glob("*.spv")):
        assembly = disassemble(binary.read_bytes())
        assert "%ulong" not in assembly and "OpTypePointer StorageBuffer %v4float" in assembly, binary.name
