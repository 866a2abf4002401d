"""The last step of convert-ecg-to-linalg: every unsigned integer type in the module
becomes the signless type of its width, the only integers arith takes (a constant of
uint8 zero points fails to verify) and all that upstream's vectorization and LLVM
lowering work with. The lowerings did the unsigned arithmetic (zero extension,
unsigned conversions) while the types still said unsigned; the casts they bridged
with (``builders.reinterpret``) then cast a type to itself and are dropped. A function
whose signature changes keeps the one it declared in ``DECLARED_TYPE_ATTR``, which the
code generator and the JITs read (``declared_function_type``): a model's uint8 inputs
and outputs stay uint8 to its callers.
"""

import numpy as np

from ..._mlir import ir
from ...codegen.lowered_module import DECLARED_TYPE_ATTR
from .registry import Unsupported


def _signless(type_: ir.Type) -> ir.Type:
    """``type_`` with an unsigned integer element (or scalar) type made signless."""
    if isinstance(type_, ir.IntegerType) and ir.IntegerType(type_).is_unsigned:
        return ir.IntegerType.get_signless(ir.IntegerType(type_).width)
    if isinstance(type_, ir.RankedTensorType):
        tensor = ir.RankedTensorType(type_)
        element = _signless(tensor.element_type)
        return type_ if element == tensor.element_type else ir.RankedTensorType.get(tensor.shape, element)
    return type_


def _retype_constant(operation):
    attr = operation.attributes["value"]
    if not isinstance(attr, ir.DenseIntElementsAttr):
        raise Unsupported(f"an unsigned constant held as {type(attr).__name__}")
    values = np.array(ir.DenseIntElementsAttr(attr))
    signed = values.view(values.dtype.str.replace("u", "i"))
    type_ = _signless(attr.type)
    operation.attributes["value"] = ir.DenseElementsAttr.get(signed, type=type_) if signed.ndim else \
        ir.DenseElementsAttr.get_splat(type_, ir.IntegerAttr.get(ir.RankedTensorType(type_).element_type, int(signed)))


def _retype(operation, dropped: list):
    if operation.name == "func.func":
        declared = ir.FunctionType(ir.TypeAttr(operation.attributes["function_type"]).value)
        function = ir.FunctionType.get([_signless(t) for t in declared.inputs], [_signless(t) for t in declared.results])
        if function != declared:
            operation.attributes[DECLARED_TYPE_ATTR] = ir.TypeAttr.get(declared)
            operation.attributes["function_type"] = ir.TypeAttr.get(function)
    if operation.name == "arith.constant" and _signless(operation.results[0].type) != operation.results[0].type:
        _retype_constant(operation)
    for value in operation.results:
        value.set_type(_signless(value.type))
    for region in operation.regions:
        for block in region.blocks:
            for argument in block.arguments:
                argument.set_type(_signless(argument.type))
            for inner in block.operations:
                _retype(inner.operation, dropped)
    if operation.name == "builtin.unrealized_conversion_cast" and \
            operation.operands[0].type == operation.results[0].type:
        dropped.append(operation)


def make_signless(module_op):
    """Retype every unsigned integer type under ``module_op`` signless, in place."""
    dropped = []
    with module_op.context, module_op.location:
        _retype(module_op, dropped)
    for cast in dropped:
        cast.results[0].replace_all_uses_with(cast.operands[0])
        cast.erase()
