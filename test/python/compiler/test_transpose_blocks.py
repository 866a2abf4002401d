"""Transposes moving the innermost dim, tiled in square register blocks
(codegen/cpu/transposes.py): compiled for the host, checked exactly against numpy (a
transpose and the element-wise ops after it round nothing differently), and the plan
checked to block where 16 or 8 divides both extents and nowhere else.

Shapes: 16x16 blocks (48x80), 8x8 blocks (24 and 40), extents no block divides (57,
30: whole blocks and the partial last ones peeled; 17 and 49 with a ReLU after),
rows of 7 that move alone (rows of vectors), 7x7 and 5x3 planes made channels-last
(their two dims merged: 49 and 15 positions, narrow_transposes.py), a 6-d window
permutation, a transpose followed by an element-wise op (the plan is checked before
fusion: the transpose alone is blocked), and on two threads a split whose per-thread
chunk (68 rows) is rounded up to whole blocks, and one of a peeled transpose (over
its outer dim, the block dims' chunks being partial); the peeled ones compiled for
AVX2 (x86-64-v3) too. Inputs are standard normal.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnf_mlir
from dnnf_mlir import InferenceSession
from dnnf_mlir.codegen.cpu import lower_to_llvm
from dnnf_mlir.frontend.onnx_importer import import_onnx
from dnnf_mlir.transforms.pipeline import build_pass_manager

RNG = np.random.default_rng(27)


def transpose_model(shape, perm, consumer=None):
    """Transpose ``shape`` by ``perm``, then ``consumer`` ("Relu", or "Add" of an input
    in the result's layout) if given."""
    out = [shape[p] for p in perm]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)]
    nodes = [helper.make_node("Transpose", ["x"], ["t" if consumer else "y"], perm=list(perm))]
    if consumer == "Relu":
        nodes.append(helper.make_node("Relu", ["t"], ["y"]))
    elif consumer == "Add":
        inputs.append(helper.make_tensor_value_info("z", TensorProto.FLOAT, out))
        nodes.append(helper.make_node("Add", ["t", "z"], ["y"]))
    graph = helper.make_graph(nodes, "transpose", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, out)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


# name: (shape, perm, consumer, threads, expected block or None)
CASES = {
    "matrix-16": ((48, 80), (1, 0), None, 1, 16),
    "nchw-nhwc-8": ((2, 24, 40, 16), (0, 2, 3, 1), None, 1, 8),
    "odd-peeled": ((5, 57, 30), (0, 2, 1), None, 1, 16),
    "narrow-no-block": ((5, 57, 7), (0, 2, 1), None, 1, None),
    "planes-7x7": ((1, 64, 7, 7), (0, 2, 3, 1), None, 1, 16),
    "planes-5x3-8": ((2, 24, 5, 3), (0, 2, 3, 1), "Relu", 1, 8),
    "peeled-relu-after": ((17, 49), (1, 0), "Relu", 1, 16),
    "two-threads-peeled": ((16, 49, 64), (0, 2, 1), None, 2, 16),
    "windows-6d": ((1, 4, 8, 4, 8, 16), (0, 1, 3, 5, 2, 4), None, 1, 8),
    "relu-after": ((32, 48), (1, 0), "Relu", 1, 16),
    "add-after": ((3, 16, 32), (0, 2, 1), "Add", 1, 16),
    "two-threads": ((264, 136), (1, 0), None, 2, 8),
}


def reference(case, feeds):
    shape, perm, consumer, _, _ = CASES[case]
    y = np.transpose(feeds["x"], perm)
    if consumer == "Relu":
        return np.maximum(y, 0)
    if consumer == "Add":
        return y + feeds["z"]
    return y


def feeds_of(case):
    shape, perm, consumer, _, _ = CASES[case]
    feeds = {"x": RNG.standard_normal(shape).astype(np.float32)}
    if consumer == "Add":
        feeds["z"] = RNG.standard_normal([shape[p] for p in perm]).astype(np.float32)
    return feeds


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_numpy(case):
    shape, perm, consumer, threads, _ = CASES[case]
    feeds = feeds_of(case)
    got = InferenceSession(transpose_model(shape, perm, consumer), use_cache=False, threads=threads).run(None, feeds)
    np.testing.assert_array_equal(got[0], reference(case, feeds))


@pytest.mark.parametrize("case", ["odd-peeled", "planes-7x7", "planes-5x3-8", "peeled-relu-after", "two-threads-peeled"])
def test_peeled_blocks_match_numpy_on_avx2(case):
    shape, perm, consumer, threads, _ = CASES[case]
    feeds = feeds_of(case)
    model = transpose_model(shape, perm, consumer)
    got = InferenceSession(model, use_cache=False, threads=threads, cpu="x86-64-v3").run(None, feeds)
    np.testing.assert_array_equal(got[0], reference(case, feeds))


@pytest.mark.parametrize("case", sorted(CASES))
def test_blocks_where_a_block_divides(case):
    shape, perm, consumer, threads, block = CASES[case]
    context = dnnf_mlir.make_context()
    with context:
        module = import_onnx(transpose_model(shape, perm, consumer), context=context)
        build_pass_manager("builtin.module(convert-ecg-to-linalg)", context).run(module.operation)
        schedules = lower_to_llvm(module, "host", threads=threads).schedules
    blocks = [s.details["transpose_block"] for s in schedules if "transpose_block" in s.details]
    assert blocks == ([block] if block else []), [(s.op, s.details) for s in schedules]
