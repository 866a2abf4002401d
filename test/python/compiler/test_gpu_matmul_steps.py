"""The GPU matmul's reduction step (``codegen/gpu/contraction_steps.py``) on both GPU
targets: matmuls whose K is a multiple of 4 step it by 4 (vec4 loads of A and of B or
B^T), the others by 1; odd M and N in either case; on the Vulkan target's ``lavapipe``
profile, threads of up to 16 rows (``GpuDevice.matmul_rows``) and of two vec4s of
columns where the result is large enough (``TALL_CASES``; the generic profile keeps 4 x 4).
Each graph is compiled for Vulkan
(lavapipe) and OpenCL (PoCL), run on random inputs and compared with numpy in float64:
fp32 within ``checking.compare``'s default (|got - want| <= 3e-5 + 1e-4 * |want|), fp16
storage within ``half_tolerance`` (rtol 8u, atol 4u sqrt(K) RMS(want), u = 2^-11: the
inputs rounded to half, the sums kept in fp32). The inputs are standard normal, so a
wrong step (a skipped or repeated slice of K, a row of B read for another) moves
outputs by O(1), far above either bound. Every SPIR-V binary passes ``spirv-val``.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from dnnf_mlir.checking import compare
from dnnf_mlir.compiler import Artifact, compile_model
from gpu_artifacts import artifact_cache, assert_matches_reference, assert_spirv_valid

OPSET = 17


def _matmul(a_shape, b_shape, transpose_b=False, bias=False):
    """``A @ B`` (``B`` given transposed when ``transpose_b``), plus a bias row and a
    ReLU when ``bias``; both operands are inputs."""
    nodes, b = [], "b"
    if transpose_b:
        perm = list(range(len(b_shape)))
        perm[-2:] = perm[-2:][::-1]
        nodes.append(helper.make_node("Transpose", ["b"], ["bt"], perm=perm))
        b = "bt"
    nodes.append(helper.make_node("MatMul", ["a", b], ["m" if bias else "y"]))
    inputs = {"a": a_shape, "b": b_shape}
    if bias:
        n = b_shape[-2] if transpose_b else b_shape[-1]
        inputs["bias"] = [n]
        nodes += [helper.make_node("Add", ["m", "bias"], ["s"]), helper.make_node("Relu", ["s"], ["y"])]
    k = a_shape[-1]
    n = b_shape[-2] if transpose_b else b_shape[-1]
    out = list(np.broadcast_shapes(tuple(a_shape[:-2]), tuple(b_shape[:-2]))) + [a_shape[-2], n]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
                                           for name, shape in inputs.items()],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, out)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)]), k


def _reference(inputs: dict, transpose_b: bool, bias: bool) -> np.ndarray:
    a, b = (inputs[n].astype(np.float64) for n in ("a", "b"))
    y = a @ (np.swapaxes(b, -1, -2) if transpose_b else b)
    return np.maximum(y + inputs["bias"], 0) if bias else y


CASES = {
    # name: (A, B, B transposed, bias + ReLU)
    "odd_batch": ([3, 37, 61], [3, 61, 45], False, False),  # K odd: step 1
    "odd_rows_k64": ([3, 37, 64], [3, 64, 45], False, False),  # K stepped, M and N odd
    "matmul_epilogue_k4": ([50, 96], [96, 68], False, True),  # K stepped, bias and ReLU before the store
    "transposed_b": ([2, 40, 32], [2, 36, 32], True, False),  # Q K^T: B^T read along K
    "transposed_b_odd": ([2, 19, 12], [2, 23, 12], True, False),
    # A thread of 16 rows (GpuDevice.matmul_rows) where the result has the elements for it
    # (tilings._matmul_rows): its accumulators and its epilogue's rows unrolled.
    "tall_rows_epilogue": ([1, 128, 64], [64, 96], False, True),  # 16 rows, bias and ReLU per row
    "tall_rows_odd": ([2, 120, 32], [2, 32, 68], False, False),  # 15 rows (120 = 8 x 15), 17 column threads
    "tall_rows_transposed_b": ([4, 96, 64], [4, 80, 64], True, False),  # Q K^T, 16 rows by 2 vec4s
    # Two vec4s of columns a thread (tilings._wide_columns), its loops over rows and
    # over the vec4s unrolled in turn.
    "wide_columns_epilogue": ([1, 256, 64], [64, 128], False, True),  # 16 x 8, bias and ReLU
    "wide_columns_odd_rows": ([2, 120, 32], [2, 32, 136], False, False),  # 15 x 8, 17 column threads
}


TALL_CASES = {name for name in CASES if name.startswith(("tall_rows", "wide_columns"))}


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory):
    """``get(name, target, precision, device=None)``: ``gpu_artifacts.artifact_cache``'s."""
    def build(name):
        a, b, transpose_b, bias = CASES[name]
        return _matmul(a, b, transpose_b, bias)

    return artifact_cache(tmp_path_factory.mktemp("gpu-matmul"), build)


@pytest.fixture(scope="module")
def compiled(artifacts):
    """``get(name, target, precision)``: the Vulkan artifacts of ``TALL_CASES`` for the
    ``lavapipe`` profile (the one with threads of 16 rows), the rest for the default."""
    return lambda name, target, precision: artifacts(
        name, target, precision, "lavapipe" if target == "vulkan" and name in TALL_CASES else None)


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("name,target", [(name, target) for name in CASES for target in ("vulkan", "opencl")
                                         if target == "vulkan" or name not in TALL_CASES])
def test_matches_numpy(name, target, precision, compiled):
    """Every case on both targets in both precisions, but ``TALL_CASES`` on Vulkan only: only
    its ``lavapipe`` profile has threads of more than 4 rows."""
    artifact, k = compiled(name, target, precision)
    _, _, transpose_b, bias = CASES[name]
    assert_matches_reference(artifact, lambda inputs: _reference(inputs, transpose_b, bias), k, precision, 11,
                             f"{name} on {target}")


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("name", CASES)
def test_spirv_binaries_pass_spirv_val(name, precision, compiled):
    artifact, _ = compiled(name, "vulkan", precision)
    assert_spirv_valid(artifact)


@pytest.mark.parametrize("target", ["vulkan", "opencl"])
def test_classifier_gemm_of_one_row(target, tmp_path):
    """A classifier's head (MobileNetV2's): Gemm of one pooled row with constant weights given
    transposed, plus a bias; its threads unroll the stepped product of their single row into
    lanes (``vector.to_elements``, which the OpenCL printer must print)."""
    rng = np.random.default_rng(7)
    weights, bias = rng.standard_normal((100, 256)).astype(np.float32), rng.standard_normal(100).astype(np.float32)
    nodes = [helper.make_node("Flatten", ["x"], ["f"]), helper.make_node("Gemm", ["f", "w", "b"], ["y"], transB=1)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 256, 1, 1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 100])],
                              [onnx.numpy_helper.from_array(weights, "w"), onnx.numpy_helper.from_array(bias, "b")])
    path = tmp_path / "gemm.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)]), path)
    compile_model(path, tmp_path / "out", target=target)
    x = rng.standard_normal((1, 256, 1, 1)).astype(np.float32)
    (got,), _ = Artifact(tmp_path / "out").run([x])
    want = x.reshape(1, 256).astype(np.float64) @ weights.T.astype(np.float64) + bias
    assert compare(got, want).ok



def grid(artifact) -> list:
    """Each dispatch's workgroup counts, from the artifact's plan."""
    return [line.split()[2:5] for line in (artifact.path / "plan.txt").read_text().splitlines()
            if line.startswith("dispatch ")]


def test_generic_profile_keeps_four_rows(artifacts):
    """The generic profile (the one measured on real GPUs, where 16 rows would be 64
    accumulators a thread) keeps threads of 4 x 4: 128 x 96 outputs in 16 x 3 workgroups."""
    artifact, _ = artifacts("tall_rows_epilogue", "vulkan", "fp32")
    assert grid(artifact) == [["16", "3", "1"]]


def test_tall_rows_take_the_grid(compiled):
    """lavapipe's profile: 128 x 96 outputs in threads of 16 rows by 4 columns, 8 x 2
    threads a workgroup (32 rows by 32 columns): a grid of 4 x 3 workgroups, down the rows first (threads of 4
    rows gave 16 x 3)."""
    artifact, _ = compiled("tall_rows_epilogue", "vulkan", "fp32")
    assert grid(artifact) == [["4", "3", "1"]]


def test_wide_columns_take_the_grid(compiled):
    """lavapipe's profile: 256 x 128 outputs in threads of 16 rows by 8 columns, 8 x 2
    threads a workgroup (32 rows by 64 columns): a grid of 8 x 2 workgroups (threads of 4 columns gave 8 x 4)."""
    artifact, _ = compiled("wide_columns_epilogue", "vulkan", "fp32")
    assert grid(artifact) == [["8", "2", "1"]]
