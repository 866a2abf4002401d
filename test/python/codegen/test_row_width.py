"""How much of a row an element-wise op vectorizes at a time (``codegen/cpu/rows.py``,
``row_width``): up to four vectors, and without AVX-512, whose masks are free, no masked
tile where whole vectors fit: a row of up to ``WHOLE_ROW_VECTORS`` vectors whole, a
longer one in the widest whole number of vectors dividing it. Each case compiled for
AVX2 and AVX-512 (both run here) must compute the sum numpy computes, exactly."""

import numpy as np
import pytest

import dnnf_mlir
from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen import get_target
from dnnf_mlir.codegen.cpu import jit, lower_to_llvm
from dnnf_mlir.transforms.pipeline import build_pass_manager

RNG = np.random.default_rng(56)


def add_rows(row: int) -> str:
    """Rows of ``row`` plus a value per row: the broadcast keeps the row the innermost dim."""
    x, b = f"tensor<3x{row}xf32>", "tensor<3x1xf32>"
    return f"""
func.func @main(%x: {x}, %b: {b}) -> {x} {{
  %y = "ecg.add"(%x, %b) : ({x}, {b}) -> {x}
  return %y : {x}
}}"""


# row -> the vector tile of the row on AVX2 (8 lanes) and AVX-512 (16 lanes).
WIDTHS = {
    56: {"x86-64-v3": 56, "x86-64-v4": 56},  # AVX2: 7 vectors whole, not a masked 32 and 24
    112: {"x86-64-v3": 16, "x86-64-v4": 64},  # AVX2: 14 vectors, in tiles of 2
    784: {"x86-64-v3": 16, "x86-64-v4": 64},
    50: {"x86-64-v3": 32, "x86-64-v4": 50},  # no whole number of vectors divides 50: masked
    96: {"x86-64-v3": 32, "x86-64-v4": 64},  # AVX2: a multiple of 4 vectors; AVX-512: masks are free
}


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])
@pytest.mark.parametrize("row", list(WIDTHS))
def test_row_tiles_without_masks_where_whole_vectors_fit(row, cpu):
    x, b = RNG.standard_normal((3, row)).astype(np.float32), RNG.standard_normal((3, 1)).astype(np.float32)
    context = dnnf_mlir.make_context()
    with context:
        module = ir.Module.parse(add_rows(row))
        build_pass_manager("builtin.module(convert-ecg-to-linalg)", context).run(module.operation)
        report = lower_to_llvm(module, get_target("host", cpu), threads=1)
        (got,) = jit(module, threads=1)["main"](x, b)
    np.testing.assert_array_equal(got, x + b)
    (schedule,) = [s for s in report.schedules if "vector" in s.details]
    assert schedule.details["vector"][-1] == WIDTHS[row][cpu], schedule
