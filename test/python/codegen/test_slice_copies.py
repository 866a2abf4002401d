"""``cpu/slice_copies.py``: a fresh buffer copied whole into a slice is written in the
slice, only when that is the same layout and nothing else touches the slice first."""

import pytest

from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen.cpu.slice_copies import write_copied_buffers_in_place
from dnnf_mlir.context import make_context

# %fresh is written through a subview in a loop, then copied into slice [1] of %base.
TEMPLATE = """
func.func @f(%x: f32) -> memref<3x4x8xf32> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %fresh = memref.alloc() : memref<4x8xf32>
  scf.for %i = %c0 to %c4 step %c1 {{
    %row = memref.subview %fresh[%i, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
    linalg.fill ins(%x : f32) outs(%row : memref<1x8xf32, strided<[8, 1], offset: ?>>)
  }}
  %base = memref.alloc() : memref<3x4x8xf32>
  {before}
  %slice = memref.subview %base[1, 0, 0] [1, 4, 8] [1, 1, 1] : memref<3x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 32>>
  memref.copy %fresh, %slice : memref<4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 32>>
  return %base : memref<3x4x8xf32>
}}
"""

OTHER_SLICE = """%s0 = memref.subview %base[{offset}, 0, 0] [1, 4, 8] [1, 1, 1] : memref<3x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: {start}>>
  linalg.fill ins(%x : f32) outs(%s0 : memref<4x8xf32, strided<[8, 1], offset: {start}>>)"""


def _loop_row(module):
    """The subview of the loop (the one with a dynamic offset)."""
    rows = []

    def visit(op):
        if op.name == "memref.subview" and len(op.operands) > 1:
            rows.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    (row,) = rows
    return row


def _copies(module) -> int:
    count = 0

    def visit(op):
        nonlocal count
        count += op.name == "memref.copy"
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return count


@pytest.mark.parametrize("before,elided", [
    ("", True),  # nothing else: the loop writes the slice
    (OTHER_SLICE.format(offset=0, start=0), True),  # another, disjoint slice written first
    (OTHER_SLICE.format(offset=1, start=32), False),  # the same slice written first: the copy must win
    ("linalg.fill ins(%x : f32) outs(%base : memref<3x4x8xf32>)", False),  # the whole buffer written first
])
def test_copy_elided_only_when_safe(before, elided):
    with make_context():
        module = ir.Module.parse(TEMPLATE.format(before=before))
        assert write_copied_buffers_in_place(module) == int(elided)
        assert module.operation.verify()
        assert _copies(module) == int(not elided)
        if elided:  # the loop's rows are now views of %base's slice [1]
            source = _loop_row(module).operands[0].owner
            assert source.name == "memref.subview"
            assert list(ir.DenseI64ArrayAttr(source.attributes["static_offsets"])) == [1, 0, 0]


def test_other_layout_is_kept():
    """A slice whose rows are not contiguous like the fresh buffer's: the copy stays."""
    text = TEMPLATE.format(before="").replace("3x4x8xf32", "4x3x8xf32").replace(
        "%base[1, 0, 0] [1, 4, 8]", "%base[0, 1, 0] [4, 1, 8]").replace("strided<[8, 1], offset: 32>",
                                                                        "strided<[24, 1], offset: 8>")
    with make_context():
        module = ir.Module.parse(text)
        assert write_copied_buffers_in_place(module) == 0
        assert _copies(module) == 1
