"""Attention kernels on the Vulkan target's ``lavapipe`` profile (``GpuDevice.attention_tiles``):
the scores staged once in shared memory, the softmax's division deferred to the product's
epilogue (``codegen/gpu/deferred_divisions.py``), P V register-tiled (``tilings.attention_tiling``).

Each graph is ``softmax(Q K^T / sqrt(d) [+ mask]) V`` with its heads transposed back and
merged, as the transformers write it, on standard normal inputs (the mask too: a
wrong row's maximum, sum or scores move outputs by O(0.1)), compared with numpy in
float64: fp32 within ``checking.compare``'s default (|got - want| <= 3e-5 + 1e-4 *
|want|), fp16 storage within ``half_tolerance`` over the sequence (the product's K).
Shapes: MobileBERT's and DistilBERT's heads, one head, a sequence and a head size that
are no multiple of a thread's 4 x 4 tile, several batches, and a sequence long enough
that a workgroup's rows are cut to what shared memory holds. Every SPIR-V binary passes
``spirv-val``.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from gpu_artifacts import artifact_cache, assert_matches_reference, assert_spirv_valid

OPSET = 17


def _attention(b, h, s, d, mask):
    """The attention graph over inputs q, k, v [b, h, s, d] (and mask [b, 1, 1, s]),
    its result [b, s, h * d]."""
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["q", "kt"], ["scores"]),
             helper.make_node("Div", ["scores", "scale"], ["scaled"])]
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [b, h, s, d]) for n in "qkv"]
    logits = "scaled"
    if mask:
        nodes.append(helper.make_node("Add", ["scaled", "mask"], ["masked"]))
        inputs.append(helper.make_tensor_value_info("mask", TensorProto.FLOAT, [b, 1, 1, s]))
        logits = "masked"
    nodes += [helper.make_node("Softmax", [logits], ["p"], axis=-1),
              helper.make_node("MatMul", ["p", "v"], ["heads"]),
              helper.make_node("Transpose", ["heads"], ["rows"], perm=[0, 2, 1, 3]),
              helper.make_node("Reshape", ["rows", "shape"], ["y"])]
    constants = [numpy_helper.from_array(np.array(np.sqrt(d), np.float32), "scale"),
                 numpy_helper.from_array(np.array([b, s, h * d], np.int64), "shape")]
    graph = helper.make_graph(nodes, "attention", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [b, s, h * d])], constants)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)]), s


def _reference(inputs: dict) -> np.ndarray:
    q, k, v = (inputs[n].astype(np.float64) for n in "qkv")
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if "mask" in inputs:
        scores = scores + inputs["mask"]
    p = np.exp(scores - scores.max(-1, keepdims=True))
    heads = (p / p.sum(-1, keepdims=True)) @ v
    b, h, s, d = heads.shape
    return heads.transpose(0, 2, 1, 3).reshape(b, s, h * d)


CASES = {
    # name: (batch, heads, sequence, head size, mask)
    "mobilebert_heads": (1, 4, 128, 32, True),  # 16 rows a workgroup, K of both products stepped by 4
    "distilbert_heads": (1, 12, 128, 64, True),
    "one_head_odd_sequence": (1, 1, 37, 20, True),  # P V's K (37) not stepped, 1 row a thread
    "odd_head_size": (2, 3, 50, 6, False),  # 2 columns and 2 rows a thread, two batches
    "long_sequence": (1, 2, 600, 16, False),  # 3 rows a workgroup: a thread's scores in 2 KiB
}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """``get(name, target, precision, device=None)``: ``gpu_artifacts.artifact_cache``'s."""
    return artifact_cache(tmp_path_factory.mktemp("gpu-attention"), lambda name: _attention(*CASES[name]))


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("name", CASES)
def test_matches_numpy(name, precision, compiled):
    artifact, sequence = compiled(name, "vulkan", precision, "lavapipe")
    assert_matches_reference(artifact, _reference, sequence, precision, 5, name)


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("name", CASES)
def test_spirv_binaries_pass_spirv_val(name, precision, compiled):
    artifact, _ = compiled(name, "vulkan", precision, "lavapipe")
    assert_spirv_valid(artifact)


def _attention_launch(artifact) -> list:
    """The workgroup counts and the workgroup size of the attention kernel's dispatches,
    from the artifact's plan."""
    lines = (artifact.path / "plan.txt").read_text().splitlines()
    kernels = {line.split()[1]: line.split() for line in lines if line.startswith("kernel ")}
    return [(line.split()[2:5], kernels[line.split()[1]][5:8]) for line in lines
            if line.startswith("dispatch ") and "softmax" in kernels[line.split()[1]][3]]


@pytest.mark.parametrize("name,device,grid,block", [
    # A thread 16 rows (the profile's 32 KiB hold 31 rows of 2 x 128 staged floats; 16 KiB
    # held 15, threads of 8 rows) by 4 columns, 8 x 1 threads: 16 rows of a head a
    # workgroup, 8 x 4 of them; the staged loops over the same 8 threads (lavapipe runs a
    # workgroup's invocations 8 at a time, idle ones included: P V by 16 threads of a
    # workgroup of 128 took 1.7x the time).
    ("mobilebert_heads", "lavapipe", ["8", "4", "1"], ["8", "1", "1"]),
    # 16 x 1 threads of 16 rows: 8 x 12 workgroups; the generic profile's reduction
    # tiling: 6 heads of one row a workgroup, 2 x 128, in 96 threads.
    ("distilbert_heads", "lavapipe", ["8", "12", "1"], ["16", "1", "1"]),
    ("distilbert_heads", None, ["2", "128", "1"], ["96", "1", "1"]),
    # 600 rows of 2 x 600 staged floats: 32 KiB hold 6 rows a workgroup, but a thread's
    # quarter of their scores (4 threads of columns) 2 KiB only 3: 3 rows, a thread's.
    ("long_sequence", "lavapipe", ["200", "2", "1"], ["4", "1", "1"]),
])
def test_workgroups_take_rows_of_one_head(name, device, grid, block, compiled):
    artifact, _ = compiled(name, "vulkan", "fp32", device)
    assert _attention_launch(artifact) == [(grid, block)]
