"""A convolution's filters replaced by a form computed from them at compile time.

The passes that run on linalg on tensors before ``dnnf-externalize-weights``
(``dnnf-winograd``, ``dnnf-channel-panels``) see the filters while they are still
constants: a constant of the convolution's function, or the argument of a kernel
function that every call passes a constant (and that nothing else reads). Such
filters are transformed here: the constant replaced (each call's, and the kernel's
argument retyped), so that the weights file holds the transformed form.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .. import _mlir
from .._mlir import ir
from ..ecg.bfloat16_elements import elements_array
from ..ir_walk import walk_ops
from .lowered_module import DECLARED_TYPE_ATTR, symbol_name


def constant_array(value):
    """The elements of ``value`` when an ``arith.constant`` (not a splat) defines it, else None."""
    owner = value.owner if isinstance(value, ir.OpResult) else None
    if owner is None or owner.name != "arith.constant":
        return None
    if not isinstance(owner.attributes["value"], ir.DenseElementsAttr):
        return None
    attr = ir.DenseElementsAttr(owner.attributes["value"])
    return None if attr.is_splat else elements_array(attr)


def _erase_if_unused(op):
    """Erase ``op`` (None: nothing) when none of its results is used."""
    if op is not None and all(len(list(r.uses)) == 0 for r in op.results):
        op.erase()


def replace_convolution(conv, result: ir.Value) -> None:
    """Replace ``conv`` by ``result``; its accumulator's producer (a fill) goes when unused."""
    conv.results[0].replace_all_uses_with(result)
    init = conv.operands[2].owner if isinstance(conv.operands[2], ir.OpResult) else None
    conv.erase()
    _erase_if_unused(init)


def calls_by_callee(module_op) -> dict:
    """The ``func.call`` ops of ``module_op``, by callee name."""
    calls = {}
    for call in walk_ops(module_op, ("func.call",)):
        calls.setdefault(ir.FlatSymbolRefAttr(call.attributes["callee"]).value, []).append(call)
    return calls


def _f32_constant(array: np.ndarray, before) -> ir.Value:
    """An ``arith.constant`` of ``array`` (f32) inserted before ``before``."""
    array = np.ascontiguousarray(array, dtype=np.float32)
    with ir.InsertionPoint(before), before.location:
        return _mlir.arith.constant(ir.RankedTensorType.get(list(array.shape), ir.F32Type.get()),
                                    ir.DenseElementsAttr.get(array))


class ConstantFilters:
    """Where a convolution's filters come from, and how to give it a transformed form."""

    def __init__(self, conv, calls: dict, operand: int = 1):
        """``calls``: ``calls_by_callee`` of the module; ``operand``: which operand of
        ``conv`` (any reader of a constant per call: a bias) the values are."""
        self.conv, self.operand = conv, operand
        self.filters = conv.operands[operand]
        self.calls = []
        self.index = None
        self.function = None
        if constant_array(self.filters) is not None:
            return
        if not isinstance(self.filters, ir.BlockArgument) or len(list(self.filters.uses)) != 1:
            return
        owner = self.filters.owner.owner.operation
        if owner.name != "func.func" or self.filters.owner != owner.regions[0].blocks[0]:
            return
        if DECLARED_TYPE_ATTR in owner.attributes:  # a signature recorded for the caller: keep it
            return
        self.function, self.index = owner, self.filters.arg_number
        self.calls = calls.get(symbol_name(owner), [])

    def constant(self) -> bool:
        """Whether every value the filters take is a constant known here."""
        if self.function is None:
            return constant_array(self.filters) is not None
        return bool(self.calls) and all(constant_array(call.operands[self.index]) is not None for call in self.calls)

    def transformed(self, transform: Callable[[np.ndarray], np.ndarray]) -> ir.Value:
        """Replace the filters' constants by ``transform`` of them (the same shape for
        every call); the value the convolution reads them from."""
        if self.function is None:
            old = self.filters.owner
            value = _f32_constant(transform(constant_array(self.filters)), self.conv)
            self.conv.operands[self.operand] = value
            _erase_if_unused(old)
            return value
        new_type = None
        for call in self.calls:
            old = call.operands[self.index].owner
            call.operands[self.index] = _f32_constant(transform(constant_array(call.operands[self.index])), call)
            new_type = call.operands[self.index].type
            _erase_if_unused(old)
        self.filters.set_type(new_type)
        function_type = ir.FunctionType(ir.TypeAttr(self.function.attributes["function_type"]).value)
        inputs = list(function_type.inputs)
        inputs[self.index] = new_type
        self.function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, function_type.results))
        return self.filters


__all__ = ["ConstantFilters", "calls_by_callee", "constant_array", "replace_convolution"]
