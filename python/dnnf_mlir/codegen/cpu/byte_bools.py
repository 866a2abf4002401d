"""Vectors of i1 in memory as one byte a lane, the way a memref of i1 (ONNX bool) holds them.

A memref of i1 lowers to a pointer whose scalar loads and stores move one byte per
element (LLVM's i1 is byte-addressed), so bool tensors keep numpy's and onnxruntime's
layout. A vector load or store of ``vector<Nxi1>`` however moves N packed *bits*: a
vectorized kernel reading a mask would see eight lanes in one byte. Here, on the LLVM
dialect, every contiguous vector access of i1 (``llvm.load`` / ``llvm.store``,
``llvm.intr.masked.load`` / ``masked.store``) moves ``vector<Nxi8>`` instead and
truncates (``trunc``) after the load or zero-extends (``zext``) before the store; the
address arithmetic (GEPs over i1, one byte per element) stays as it is. Allocas and
GEPs of vector-of-i1 elements (temporaries of vector transfers) become vector-of-i8 ones
so that what is stored there is read back in the same layout. Gathers and scatters move
a lane through its own pointer, a byte each: they need nothing.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ..errors import CodegenError

_LOADS = ("llvm.load", "llvm.intr.masked.load")
_STORES = ("llvm.store", "llvm.intr.masked.store")
_ELEMENT_TYPED = ("llvm.alloca", "llvm.getelementptr")


def _bool_vector(t) -> "ir.VectorType | None":
    """``t`` when it is a vector of i1, else None."""
    if not isinstance(t, ir.VectorType):
        return None
    et = t.element_type
    return t if isinstance(et, ir.IntegerType) and et.width == 1 else None


def _in_bytes(t) -> "ir.Type | None":
    """``t`` with its vectors of i1 made vectors of i8 (arrays of them included), or
    None when it holds none."""
    vector = _bool_vector(t)
    if vector is not None:
        return ir.VectorType.get(vector.shape, ir.IntegerType.get_signless(8), scalable=vector.scalable_dims)
    if isinstance(t, _mlir.llvm.ArrayType):
        element = _in_bytes(t.element_type)
        return None if element is None else _mlir.llvm.ArrayType.get(element, t.num_elements)
    return None


def _widen_load(op, vector: ir.VectorType) -> None:
    llvm = _mlir.llvm
    wide = _in_bytes(vector)
    with ir.InsertionPoint(op), op.location:
        if op.name == "llvm.load":
            alignment = op.attributes["alignment"] if "alignment" in op.attributes else None
            load = llvm.LoadOp(wide, op.operands[0], alignment=alignment)
        else:
            pass_through = llvm.ZExtOp(wide, op.operands[2]).result
            load = llvm.MaskedLoadOp(wide, op.operands[0], op.operands[1], op.attributes["alignment"], pass_thru=pass_through)
        narrow = llvm.TruncOp(vector, load.result, None)
    op.results[0].replace_all_uses_with(narrow.result)
    op.erase()


def _widen_store(op, vector: ir.VectorType) -> None:
    with ir.InsertionPoint(op), op.location:
        op.operands[0] = _mlir.llvm.ZExtOp(_in_bytes(vector), op.operands[0]).result


def _accessed_type(op):
    """The type an ``llvm`` load or store moves."""
    return op.results[0].type if op.name in _LOADS else op.operands[0].type


def bools_as_bytes(module: ir.Module) -> int:
    """Make every vector access of i1 in the LLVM-dialect ``module`` move a byte per lane.
    Returns the number of ops rewritten; an aggregate of i1 vectors loaded or stored
    whole (never made by the CPU pipeline) is refused rather than left packed."""
    with ir.Location.unknown(module.context):
        return _rewrite(module)


def _rewrite(module: ir.Module) -> int:
    changed = 0
    for op in walk_ops(module.operation, set(_LOADS + _STORES)):
        moved = _accessed_type(op)
        if _in_bytes(moved) is None:
            continue
        vector = _bool_vector(moved)
        if vector is None:
            raise CodegenError(f"{op.name} of {moved}: an aggregate of i1 vectors has no byte-per-lane access here")
        (_widen_load if op.name in _LOADS else _widen_store)(op, vector)
        changed += 1
    for op in walk_ops(module.operation, set(_ELEMENT_TYPED)):
        wide = _in_bytes(ir.TypeAttr(op.attributes["elem_type"]).value) if "elem_type" in op.attributes else None
        if wide is not None:
            op.attributes["elem_type"] = ir.TypeAttr.get(wide)
            changed += 1
    return changed


__all__ = ["bools_as_bytes"]
