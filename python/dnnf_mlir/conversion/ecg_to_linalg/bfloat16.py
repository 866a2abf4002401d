"""bf16 (and float8) computed in f32: an op on bf16 tensors is lowered as its f32 twin between
``arith.extf`` of its bf16 operands and ``arith.truncf`` of its results.

Every op rounds once, to nearest even, as ONNX's reference does (ml_dtypes computes a
bfloat16 op in float32), and a matrix product accumulates in f32 (the reference's sums
in bf16, which the interpreter does not follow either); the kernels in between are the
f32 ones the schedules know. Ops that only
move elements (and Cast, whose lowering converts directly) keep their bf16 types.
"""

from ..._mlir import ir
from .builders import cast, map_values
from .float8 import float8_format

# Ops whose lowering needs no arithmetic on bf16 values.
_DIRECT = frozenset({
    "ecg.cast", "ecg.constant", "ecg.reshape", "ecg.flatten", "ecg.squeeze", "ecg.unsqueeze", "ecg.transpose",
    "ecg.gather", "ecg.concat", "ecg.slice", "ecg.split", "ecg.expand", "ecg.tile", "ecg.depth_to_space",
    "ecg.space_to_depth", "ecg.bitcast",
})


def _is_bf16(type_) -> bool:
    """A bf16 tensor, or a float8 one (computed the same way, converted by ``cast``)."""
    if not isinstance(type_, ir.RankedTensorType):
        return False
    element = ir.RankedTensorType(type_).element_type
    return isinstance(element, ir.BF16Type) or float8_format(element) is not None


def _widened(type_):
    return ir.RankedTensorType.get(ir.RankedTensorType(type_).shape, ir.F32Type.get()) if _is_bf16(type_) else type_


def computes_in_f32(operation) -> bool:
    """Whether ``operation`` (not a fused op) has a bf16 operand or result and computes on it."""
    values = list(operation.operands) + list(operation.results)
    return operation.name not in _DIRECT and operation.name != "ecg.fused" and any(_is_bf16(v.type) for v in values)


def lower_in_f32(operation, args, lower) -> list:
    """Lower ``operation`` as its f32 twin with ``lower(twin, f32 args)``; results rounded back to bf16."""
    f32 = ir.F32Type.get()
    wide = [map_values(a, f32, lambda x: cast(x, f32)) if _is_bf16(a.type) else a for a in args]
    twin = ir.Operation.create(
        operation.name, results=[_widened(r.type) for r in operation.results], operands=wide,
        attributes={name: operation.attributes[name] for name in operation.attributes},
    )
    try:
        results = lower(twin, wide)
    finally:
        twin.erase()
    narrow = [ir.RankedTensorType(old.type).element_type for old in operation.results]
    return [map_values(r, to, lambda x, to=to: cast(x, to)) if _is_bf16(old.type) else r
            for r, old, to in zip(results, operation.results, narrow)]

