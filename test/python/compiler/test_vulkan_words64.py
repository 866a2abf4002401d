"""The Vulkan target's ``lavapipe`` profile keeps vec4 storage buffers as 64-bit words
(``GpuDevice.vec4_as_words64``, ``codegen/gpu/storage.py``): two for 32-bit elements, one
for f16 (``--precision fp16``); every vec4 loaded or stored goes through a bitcast.
Graphs with odd shapes, weights as buffers, int32 buffers and a buffer read both as vec4s
and as scalars (``x + x^T``, a lane of a vec4; in fp16 an f16 weight read so)
are compiled for that profile, run on the Vulkan device found (lavapipe here) and
compared with numpy in float64: in fp32 within ``checking.compare``'s default
(|got - want| <= 3e-5 + 1e-4 * |want|), in fp16 within ``half_tolerance`` for the
graph's longest accumulation K (rtol 8u, atol 4u sqrt(K) RMS(want), u = 2^-11). The
inputs are standard normal: a word put in the wrong half of a vec4, or a vec4 of another
row, moves outputs by O(1), far over either. Each binary passes ``spirv-val`` and
declares its buffers as 64-bit words; the generic profile's do not.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnnf_mlir.codegen.gpu.vulkan.spirv import disassemble
from gpu_artifacts import artifact_cache, assert_matches_reference, assert_spirv_valid

OPSET = 17
RNG = np.random.default_rng(23)
FFN_W1 = (RNG.standard_normal((128, 512)) * 0.1).astype(np.float32)
FFN_B1 = RNG.standard_normal(512).astype(np.float32)
FFN_W2 = (RNG.standard_normal((512, 128)) * 0.1).astype(np.float32)
SQUARE_W = RNG.standard_normal((36, 36)).astype(np.float32)


def _graph(nodes, inputs: dict, output: list, weights: dict | None = None, output_type=TensorProto.FLOAT):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
                              [helper.make_tensor_value_info("y", output_type, output)],
                              [numpy_helper.from_array(v, n) for n, v in (weights or {}).items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def _relu(x):
    return np.maximum(x, 0)


CASES = {
    # name: (model, reference of {input: array} in float64, longest accumulation K)
    # M and N odd, K stepped by 4, bias and ReLU in the epilogue.
    "matmul_odd": (_graph([helper.make_node("MatMul", ["a", "b"], ["m"]), helper.make_node("Add", ["m", "c"], ["s"]),
                           helper.make_node("Relu", ["s"], ["y"])], {"a": [1, 37, 64], "b": [64, 45], "c": [45]},
                          [1, 37, 45]),
                   lambda i: _relu(i["a"] @ i["b"] + i["c"]), 64),
    # MobileBERT's FFN shape (weights as buffers), the residual added in the second epilogue.
    "ffn": (_graph([helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Add", ["h", "b1"], ["hb"]),
                    helper.make_node("Relu", ["hb"], ["r"]), helper.make_node("MatMul", ["r", "w2"], ["o"]),
                    helper.make_node("Add", ["o", "x"], ["y"])], {"x": [1, 128, 128]}, [1, 128, 128],
                   {"w1": FFN_W1, "b1": FFN_B1, "w2": FFN_W2}),
            lambda i: _relu(i["x"] @ FFN_W1 + FFN_B1) @ FFN_W2.astype(np.float64) + i["x"], 512),
    # A buffer read a vec4 along its rows and a scalar down its columns.
    "transpose_add": (_graph([helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
                              helper.make_node("Add", ["x", "t"], ["y"])], {"x": [36, 36]}, [36, 36]),
                      lambda i: i["x"] + i["x"].T, 1),
    # A weight (f16 in fp16) read a vec4 along its rows and a scalar down its columns.
    "weight_transpose_add": (_graph([helper.make_node("Mul", ["x", "w"], ["m"]),
                                     helper.make_node("Transpose", ["m"], ["t"], perm=[1, 0]),
                                     helper.make_node("Add", ["m", "t"], ["y"])], {"x": [36, 36]}, [36, 36], {"w": SQUARE_W}),
                             lambda i: i["x"] * SQUARE_W + (i["x"] * SQUARE_W).T, 1),
    # An int32 result: x * 8 truncated to int32, squared.
    "int32": (_graph([helper.make_node("Mul", ["x", "eight"], ["s"]), helper.make_node("Cast", ["s"], ["i"], to=TensorProto.INT32),
                      helper.make_node("Mul", ["i", "i"], ["y"])],
                     {"x": [33, 68]}, [33, 68], {"eight": np.array(8.0, np.float32)}, TensorProto.INT32),
              lambda i: np.trunc(i["x"] * 8) ** 2, 1),
}


# fp16: the float cases (x * 8 rounded to f16 may truncate to another integer).
RUNS = [(name, "fp32") for name in CASES] + [(name, "fp16") for name in CASES if name != "int32"]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """``get(name, device, precision)``: the Vulkan artifact of ``CASES[name]`` for ``device``'s profile."""
    get = artifact_cache(tmp_path_factory.mktemp("words64"), lambda name: (CASES[name][0],))
    return lambda name, device, precision="fp32": get(name, "vulkan", precision, device)[0]


@pytest.mark.parametrize("name,precision", RUNS)
def test_matches_numpy(name, precision, compiled):
    _, reference, k = CASES[name]
    assert_matches_reference(compiled(name, "lavapipe", precision),
                             lambda inputs: reference({n: v.astype(np.float64) for n, v in inputs.items()}),
                             k, precision, seed=5, what=name)


def _storage_pointers(assembly: str) -> set:
    """The element types of the storage buffer pointers a SPIR-V binary declares."""
    pointers = {line.split()[-1] for line in assembly.splitlines() if "OpTypePointer StorageBuffer" in line}
    return {pointer for pointer in pointers if not pointer.startswith("%_struct")}


@pytest.mark.parametrize("name,precision", RUNS)
def test_lavapipe_binaries_use_words(name, precision, compiled):
    """Every binary passes spirv-val; each reads a buffer as 64-bit words (``x + x^T``'s
    reads are scalar where transposed, but its result and its row reads are vec4s), and
    none as vec4s of floats or halves."""
    artifact = compiled(name, "lavapipe", precision)
    assert_spirv_valid(artifact)
    for binary in sorted((artifact.path / "kernels").glob("*.spv")):
        pointers = _storage_pointers(disassemble(binary.read_bytes()))
        assert pointers & {"%v2ulong", "%ulong"} and not pointers & {"%v4float", "%v4half"}, (binary.name, pointers)
    (requires,) = [line.split()[1:] for line in (artifact.path / "plan.txt").read_text().splitlines() if line.startswith("require ")]
    assert "shaderInt64" in requires, requires


def test_fp16_words_need_no_16bit_storage(compiled):
    """In fp16, MobileBERT's FFN shape binds every f16 buffer (weights, the hidden layer)
    as 64-bit words: its plan needs no storageBuffer16BitAccess, the generic profile's
    (vec4s of halves) does."""
    lavapipe = compiled("ffn", "lavapipe", "fp16")
    pointers = set().union(*(_storage_pointers(disassemble(b.read_bytes())) for b in (lavapipe.path / "kernels").glob("*.spv")))
    assert "%ulong" in pointers and "%half" not in pointers, pointers
    assert "storageBuffer16BitAccess" not in (lavapipe.path / "plan.txt").read_text()
    assert "storageBuffer16BitAccess" in (compiled("ffn", None, "fp16").path / "plan.txt").read_text()


@pytest.mark.parametrize("precision,vec4", [("fp32", "%v4float"), ("fp16", "%v4half")])
def test_generic_profile_keeps_vec4_of_floats(precision, vec4, compiled):
    """The generic profile (real GPUs load a vec4 in one access) needs no Int64 for it."""
    artifact = compiled("ffn", None, precision)
    for binary in sorted((artifact.path / "kernels").glob("*.spv")):
        assembly = disassemble(binary.read_bytes())
        assert "%ulong" not in assembly and vec4 in _storage_pointers(assembly), binary.name
