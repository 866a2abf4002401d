"""``codegen/gpu/deferred_divisions.py``: ``sum_k (a / s) * v`` becomes ``(sum_k a * v) / s``
only where that is the same sum: the divisor read along parallel loops that the result
keeps (not along K) and the product starting from zeros (not accumulating into a value,
not from another fill). The numbers of the rewritten attention are checked against
numpy end to end in ``compiler/test_gpu_attention_tiles.py``."""

import pytest

from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen.gpu.deferred_divisions import defer_divisions
from dnnf_mlir.codegen.gpu.kernels import is_contraction
from dnnf_mlir.context import make_context
from dnnf_mlir.ir_walk import walk_ops

# P V of one head, the probabilities' division in the product's body, as the element-wise
# fusion of ``prepare`` leaves it; INIT, DIVISOR_MAP and the divisor's type vary per case.
QUOTIENT_PRODUCT = """
func.func @kernel_0(%e: tensor<8x16xf32>, %s: {divisor_type}, %v: tensor<16x4xf32>, %acc: tensor<8x4xf32>) -> tensor<8x4xf32> {{
  %z = arith.constant {fill} : f32
  %empty = tensor.empty() : tensor<8x4xf32>
  %fill = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}}
      outs(%empty : tensor<8x4xf32>) {{
  ^bb0(%o: f32):
    linalg.yield %z : f32
  }} -> tensor<8x4xf32>
  %p = linalg.generic {{indexing_maps = [affine_map<(i, j, k) -> (i, k)>, {divisor_map}, affine_map<(i, j, k) -> (k, j)>,
                                        affine_map<(i, j, k) -> (i, j)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}}
       ins(%e, %s, %v : tensor<8x16xf32>, {divisor_type}, tensor<16x4xf32>) outs({init} : tensor<8x4xf32>) {{
  ^bb0(%a: f32, %d: f32, %b: f32, %o: f32):
    %q = arith.divf %a, %d : f32
    %m = arith.mulf %q, %b : f32
    %t = arith.addf %o, %m : f32
    linalg.yield %t : f32
  }} -> tensor<8x4xf32>
  return %p : tensor<8x4xf32>
}}
"""
PER_ROW = {"divisor_type": "tensor<8xf32>", "divisor_map": "affine_map<(i, j, k) -> (i)>"}


def _rewrite(**fields):
    """(rewrites, the function's linalg.generic ops after them) of ``QUOTIENT_PRODUCT``."""
    with make_context(), ir.Location.unknown():
        module = ir.Module.parse(QUOTIENT_PRODUCT.format(**{"fill": "0.0", "init": "%fill", **PER_ROW, **fields}))
        count = defer_divisions(module)
        module.operation.verify()
        ops = [(op.name, is_contraction(op), [o.name for o in op.regions[0].blocks[0].operations])
               for op in walk_ops(module.operation, {"linalg.generic"})]
        return count, ops


def test_per_row_divisor_moves_after_the_product():
    count, ops = _rewrite()
    assert count == 1
    (_, _, fill), (_, contraction, product), (_, _, division) = ops
    assert contraction and product == ["arith.mulf", "arith.addf", "linalg.yield"]
    assert division == ["arith.divf", "linalg.yield"]


@pytest.mark.parametrize("fields", [
    {"init": "%acc"},  # accumulating into a value: acc + sum / s is not (acc + sum) / s
    {"fill": "1.0"},  # a product starting from ones
    {"divisor_type": "tensor<16xf32>", "divisor_map": "affine_map<(i, j, k) -> (k)>"},  # a divisor per k
], ids=["accumulating", "fill_of_ones", "divisor_along_k"])
def test_other_sums_are_left_alone(fields):
    count, ops = _rewrite(**fields)
    assert count == 0
    assert [body for _, _, body in ops][1][:3] == ["arith.divf", "arith.mulf", "arith.addf"]
