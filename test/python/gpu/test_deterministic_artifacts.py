"""A compilation gives the same artifact every time: two ``dnnf-compile`` runs in
processes of their own (different ``PYTHONHASHSEED``s, and address-space layouts)
write the same SPIR-V words, OpenCL C source, dispatch plan and LLVM IR, and build
the same library and runner (whose run path named the temporary build directory).

The graph is attention's projections (DistilBERT's QKV kernel, small): three matmuls of
one input, one of them transposed to K^T, whose thread tiles the device code keeps as
private arrays split into scalars by ``sroa``. sroa creates those scalars in the order
of a set of pointers, which changed from run to run, and the SPIR-V's variable ids and
the OpenCL C's array names with it (``unrolling.split_private_arrays`` now orders them
by their first use)."""

import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

HIDDEN, TOKENS, HEADS = 128, 128, 2

# per target: the files that must be equal, and dnnf-compile's options
BUILT = ["libdnnf_model.so", "dnnf_runner"]
ARTIFACT_FILES = {"vulkan": (["kernels/*.spv", "plan.txt", *BUILT], []),
                  "opencl": (["kernels.cl", "plan.txt", *BUILT], []),
                  "host": (["model.llvm.mlir", *BUILT], ["--keep-ir"])}


def _projections() -> onnx.ModelProto:
    """Q, K^T and V of ``x`` [1, TOKENS, HIDDEN], split into HEADS heads."""
    rng = np.random.default_rng(0)
    head = HIDDEN // HEADS
    initializers = [numpy_helper.from_array(np.array([1, TOKENS, HEADS, head], np.int64), "heads")]
    nodes = []
    for name, perm in (("q", [0, 2, 1, 3]), ("k", [0, 2, 3, 1]), ("v", [0, 2, 1, 3])):
        weights = rng.standard_normal((HIDDEN, HIDDEN)).astype(np.float32)
        initializers.append(numpy_helper.from_array(weights, f"w_{name}"))
        nodes += [helper.make_node("MatMul", ["x", f"w_{name}"], [f"{name}_flat"]),
                  helper.make_node("Reshape", [f"{name}_flat", "heads"], [f"{name}_heads"]),
                  helper.make_node("Transpose", [f"{name}_heads"], [name], perm=perm)]
    graph = helper.make_graph(nodes, "projections",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, TOKENS, HIDDEN])],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "qkv"],
                              initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _compile(model_path, out, target: str, seed: int, options: list) -> dict:
    """{relative path: bytes} of ``ARTIFACT_FILES[target]`` in a fresh compilation."""
    env = dict(os.environ, PYTHONHASHSEED=str(seed))
    subprocess.run([sys.executable, "-m", "dnnf_mlir.tools.compile", str(model_path), "--target", target,
                    "--no-cache", "-q", "-o", str(out), *options], check=True, env=env)
    patterns, _ = ARTIFACT_FILES[target]
    files = {str(p.relative_to(out)): p.read_bytes() for pattern in patterns for p in sorted(out.glob(pattern))}
    assert files and all(files.values()), f"{target}: no artifact files in {out}"
    return files


@pytest.mark.parametrize("target", sorted(ARTIFACT_FILES))
def test_two_compilations_write_the_same_artifact(tmp_path, target):
    model_path = tmp_path / "projections.onnx"
    onnx.save(_projections(), model_path)
    options = ARTIFACT_FILES[target][1]
    first = _compile(model_path, tmp_path / "first", target, 1, options)
    second = _compile(model_path, tmp_path / "second", target, 2, options)
    assert sorted(first) == sorted(second)
    differing = [name for name in first if first[name] != second[name]]
    assert not differing, f"{target}: {differing} differ between two compilations"
