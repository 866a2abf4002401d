"""Matmuls with constant weights computed from panels cut at compile time
(codegen/cpu/weight_panels.py, dnnf-weight-panels): which matmuls take them, the panels'
layout, and the compiled results against float64 and onnxruntime.

The model cases (row counts that are a multiple of the register tile's rows, 50 rows as
the small Llama's, a prime count whose last row tile is partial; panels of 32 and of 16
columns, and a partial last panel (the Llama's 1000-word vocabulary); a Gemm's bias row, a Gemm with a full C matrix, a Gemm reading its weights transposed (transB), a MatMul on a 3-D input, a
tanh-GELU as GPT-2's MLP has it, a ReLU) are branches of one model compiled once per
CPU and thread count; the rule test says that every branch is rewritten on AVX-512, so
the numerical check covers the rewrite. Inputs standard normal, weights scaled by
1/sqrt(K) so that outputs are O(1). Tolerance: 1e-5 + 1e-5 * |want| against float64
(sums of up to 200 f32 products), and no more than 8 times onnxruntime's own error
plus 1e-6.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from test_channel_panels import branches_model, check_branches
from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen.cpu.weight_panels import weight_panel_matmuls, weight_panels
from dnnf_mlir.codegen.target import get_target
from dnnf_mlir.context import make_context

RNG = np.random.default_rng(2929)

# (rows, k, n, kind): the cases of the model. kind: how the MatMul is written and what follows it.
CASES = [
    (128, 96, 192, "gelu"),  # GPT-2's MLP up-projection, small: 6 panels of 32
    (50, 64, 96, "gemm_bias"),  # the small Llama's 50 rows: row tiles of 5
    (37, 200, 64, "relu"),  # a prime row count: a partial last row tile
    (64, 33, 48, "gemm_matrix"),  # a full C matrix as the init; 48 columns: panels of 16
    (60, 40, 64, "batched_rows"),  # a MatMul on [1, 60, 40]
    (50, 64, 1000, "batched_rows"),  # the small Llama's vocabulary: 31 panels of 32 and 8 columns
    (20, 48, 72, "gemm_bias"),  # 2 panels of 32 and 8 columns, the bias row sliced
    (36, 40, 100, "gemm_matrix"),  # 3 panels of 32 and 4 columns, the C matrix sliced
    (7, 96, 100, "gemm_trans_b"),  # a classifier's [N, K] weights (transB): panels of B^T, 4 columns left
    (3, 40, 13, "gemm_trans_b"),  # fewer columns than a panel: B^T is one panel of 13
]


def _gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def _branch(index, rows, k, n, kind):
    """Case ``index``: graph inputs, nodes, initializers, feeds and float64 result of a
    MatMul (or Gemm) from ``x{index}`` to ``y{index}``."""
    x, y, w = f"x{index}", f"y{index}", f"w{index}"
    weights = (RNG.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
    stored = np.ascontiguousarray(weights.T) if kind == "gemm_trans_b" else weights
    shape = [1, rows, k] if kind == "batched_rows" else [rows, k]
    feeds = {x: RNG.standard_normal(shape).astype(np.float32)}
    want = feeds[x].astype(np.float64) @ weights.astype(np.float64)
    initializers = [numpy_helper.from_array(stored, w)]
    inputs = [helper.make_tensor_value_info(x, TensorProto.FLOAT, shape)]
    if kind in ("gemm_bias", "gemm_matrix", "gemm_trans_b"):
        bias = RNG.standard_normal((rows, n) if kind == "gemm_matrix" else (n,)).astype(np.float32)
        initializers.append(numpy_helper.from_array(bias, f"b{index}"))
        nodes = [helper.make_node("Gemm", [x, w, f"b{index}"], [y], transB=int(kind == "gemm_trans_b"))]
        return inputs, nodes, initializers, feeds, want + bias
    nodes = [helper.make_node("MatMul", [x, w], [y if kind == "batched_rows" else f"p{index}"])]
    if kind == "relu":
        nodes.append(helper.make_node("Relu", [f"p{index}"], [y]))
        want = np.maximum(want, 0)
    elif kind == "gelu":
        constants = {"half": 0.5, "one": 1.0, "cubic": 0.044715, "scale": 0.7978845608028654, "three": 3.0}
        initializers += [numpy_helper.from_array(np.float32(v), f"{c}{index}") for c, v in constants.items()]
        p, c = f"p{index}", {name: f"{name}{index}" for name in constants}
        nodes += [helper.make_node("Pow", [p, c["three"]], [f"cube{index}"]),
                  helper.make_node("Mul", [f"cube{index}", c["cubic"]], [f"scaled{index}"]),
                  helper.make_node("Add", [p, f"scaled{index}"], [f"inner{index}"]),
                  helper.make_node("Mul", [f"inner{index}", c["scale"]], [f"arg{index}"]),
                  helper.make_node("Tanh", [f"arg{index}"], [f"tanh{index}"]),
                  helper.make_node("Add", [f"tanh{index}", c["one"]], [f"gate{index}"]),
                  helper.make_node("Mul", [p, c["half"]], [f"halfp{index}"]),
                  helper.make_node("Mul", [f"halfp{index}", f"gate{index}"], [y])]
        want = _gelu(want)
    return inputs, nodes, initializers, feeds, want


def _matmul_module(rows, k, n, weights_constant=True, transpose_b=False) -> str:
    """A matmul of ``rows x k`` by ``k x n`` weights (``transpose_b``: stored ``n x k``, read transposed)."""
    b_type = f"tensor<{n}x{k}xf32>" if transpose_b else f"tensor<{k}x{n}xf32>"
    weights = RNG.standard_normal((n, k) if transpose_b else (k, n)).astype(np.float32)
    b = f'%w = arith.constant dense<"0x{weights.tobytes().hex()}"> : {b_type}' if weights_constant else ""
    args = f"%a: tensor<{rows}x{k}xf32>, %c: tensor<{rows}x{n}xf32>" + ("" if weights_constant else f", %w: {b_type}")
    maps = ("indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, "
            "affine_map<(m, n, k) -> (m, n)>] " if transpose_b else "")
    return f"""
func.func @mm({args}) -> tensor<{rows}x{n}xf32> {{
  {b}
  %r = linalg.matmul {maps}ins(%a, %w : tensor<{rows}x{k}xf32>, {b_type}) outs(%c : tensor<{rows}x{n}xf32>) -> tensor<{rows}x{n}xf32>
  return %r : tensor<{rows}x{n}xf32>
}}"""


@pytest.mark.parametrize("cpu,rows,k,n,rewritten", [
    ("skylake-avx512", 128, 96, 192, True),  # GPT-2's shapes, smaller: 16 row tiles of 8
    ("skylake-avx512", 50, 64, 96, True),  # 10 row tiles of 5
    ("skylake-avx512", 37, 200, 64, True),  # 5 row tiles of 8, the last partial
    ("skylake-avx512", 64, 33, 48, True),  # panels of 16 columns
    ("skylake-avx512", 24, 64, 96, False),  # 3 row tiles of 8: the schedule would not pack B
    ("skylake-avx512", 64, 8, 96, False),  # K = 8: nor here
    ("skylake-avx512", 64, 64, 32, False),  # one panel already
    ("skylake-avx512", 50, 256, 1000, True),  # 1000 columns: 31 panels of 32, one of 8
    ("skylake-avx512", 64, 64, 20, True),  # 20 columns: one panel of 16, then 4 columns
    ("skylake-avx512", 64, 64, 16, False),  # 16 columns: no more than one panel
    ("x86-64-v3", 16, 64, 96, True),  # AVX2: 4 row tiles of 4, panels of 16
    ("x86-64-v3", 12, 64, 96, False),  # 3 row tiles of 4
])
def test_auto_mode_takes_the_matmuls_whose_weights_would_be_packed(cpu, rows, k, n, rewritten):
    with make_context():
        module = ir.Module.parse(_matmul_module(rows, k, n))
        assert weight_panel_matmuls(module, get_target("host", cpu)) == int(rewritten)
        assert module.operation.verify()


@pytest.mark.parametrize("cpu,rows,k,n,rewritten", [
    ("skylake-avx512", 7, 256, 1000, True),  # a classifier's Gemm (transB) over 7 rows: B^T's panels
    ("skylake-avx512", 2, 64, 16, True),  # one panel of B^T
    ("skylake-avx512", 1, 256, 1000, False),  # one row: a matrix-vector product (matvec.py) reads [N, K] as it is
    ("x86-64-v3", 5, 64, 40, True),
])
def test_weights_read_transposed_take_the_panels_of_their_transpose(cpu, rows, k, n, rewritten):
    with make_context():
        module = ir.Module.parse(_matmul_module(rows, k, n, transpose_b=True))
        assert weight_panel_matmuls(module, get_target("host", cpu)) == int(rewritten)
        assert module.operation.verify()
        if rewritten:  # the panels hold B^T: [ceil(N / NR), K, NR]
            (panels,) = [op for op in module.body.operations[0].regions[0].blocks[0].operations
                         if op.name == "arith.constant" and ir.RankedTensorType(op.result.type).rank == 3]
            assert ir.RankedTensorType(panels.result.type).shape[1] == k


def test_weights_known_at_run_time_are_left_alone():
    with make_context():
        module = ir.Module.parse(_matmul_module(128, 96, 192, weights_constant=False))
        assert weight_panel_matmuls(module, get_target("host", "skylake-avx512"), always=True) == 0


def test_panels_hold_each_panels_columns_row_by_row():
    weights = RNG.standard_normal((5, 60))
    panels = weight_panels(weights, 16)
    assert panels.shape == (4, 5, 16)
    for j, k, r in [(0, 0, 0), (2, 4, 15), (1, 2, 7), (3, 3, 11)]:
        assert panels[j, k, r] == weights[k, j * 16 + r]
    assert not panels[3, :, 12:].any()  # past the 60 columns


@pytest.mark.parametrize("cpu,threads", [("native", 1), ("native", 2), ("x86-64-v3", 1), ("x86-64-v3", 2)])
def test_matmuls_against_float64_and_onnxruntime(cpu, threads):
    model, feeds, wants = branches_model([_branch(index, *case) for index, case in enumerate(CASES)], "weight_panels")
    check_branches(model, feeds, CASES, wants, cpu, threads)
