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


def erase_if_unused(op):
    """Erase ``op`` (None: nothing) when none of its results is used."""
    if op is not None and all(len(list(r.uses)) == 0 for r in op.results):
        op.erase()


def replace_convolution(conv, result: ir.Value) -> None:
    """Replace ``conv`` by ``result``; its accumulator's producer (a fill) goes when unused."""
    conv.results[0].replace_all_uses_with(result)
    init = conv.operands[2].owner if isinstance(conv.operands[2], ir.OpResult) else None
    conv.erase()
    erase_if_unused(init)


def calls_by_callee(module_op) -> dict:
    """The ``func.call`` ops of ``module_op``, by callee name."""
    calls = {}
    for call in walk_ops(module_op, ("func.call",)):
        calls.setdefault(ir.FlatSymbolRefAttr(call.attributes["callee"]).value, []).append(call)
    return calls


def _dense_constant(array: np.ndarray, before) -> ir.Value:
    """An ``arith.constant`` of ``array`` inserted before ``before``: i32 when ``array`` is
    int32 (packed weights), else f32."""
    integer = array.dtype == np.int32
    array = np.ascontiguousarray(array, dtype=np.int32 if integer else np.float32)
    element = ir.IntegerType.get_signless(32) if integer else ir.F32Type.get()
    with ir.InsertionPoint(before), before.location:
        return _mlir.arith.constant(ir.RankedTensorType.get(list(array.shape), element),
                                    ir.DenseElementsAttr.get(array))


def _with_input(function, attribute: str, index: int, new_type: ir.Type) -> None:
    function_type = ir.FunctionType(ir.TypeAttr(function.attributes[attribute]).value)
    inputs = list(function_type.inputs)
    inputs[index] = new_type
    function.attributes[attribute] = ir.TypeAttr.get(ir.FunctionType.get(inputs, function_type.results))


def retype_argument(function, index: int, new_type: ir.Type, declared_type: ir.Type | None = None) -> None:
    """Give argument ``index`` of the ``func.func`` ``function`` the type ``new_type``
    (its signature too: every call must pass a value of that type), and in the signature
    recorded for its caller, if it has one, ``declared_type`` (default ``new_type``)."""
    function.regions[0].blocks[0].arguments[index].set_type(new_type)
    _with_input(function, "function_type", index, new_type)
    if DECLARED_TYPE_ATTR in function.attributes:
        _with_input(function, DECLARED_TYPE_ATTR, index, declared_type or new_type)


class ConstantFilters:
    """Where a convolution's filters come from, and how to give it a transformed form."""

    def __init__(self, conv, calls: dict, operand: int = 1, recorded_signatures: bool = False):
        """``calls``: ``calls_by_callee`` of the module; ``operand``: which operand of
        ``conv`` (any reader of a constant per call: a bias) the values are;
        ``recorded_signatures``: a kernel with a signature recorded for its caller too
        (the signature follows the retyped argument)."""
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
        if DECLARED_TYPE_ATTR in owner.attributes and not recorded_signatures:
            return
        self.function, self.index = owner, self.filters.arg_number
        self.calls = calls.get(symbol_name(owner), [])

    def constant(self) -> bool:
        """Whether every value the filters take is a constant known here."""
        if self.function is None:
            return constant_array(self.filters) is not None
        return bool(self.calls) and all(constant_array(call.operands[self.index]) is not None for call in self.calls)

    def arrays(self) -> list:
        """The filters' values, one array per call (one: a constant of the function);
        ``constant()`` must hold."""
        if self.function is None:
            return [constant_array(self.filters)]
        return [constant_array(call.operands[self.index]) for call in self.calls]

    def transformed(self, transform: Callable[[np.ndarray], np.ndarray]) -> ir.Value:
        """Replace the filters' constants by ``transform`` of them (the same shape for
        every call; int32 arrays become i32 constants, others f32); the value the convolution reads them from."""
        if self.function is None:
            old = self.filters.owner
            value = _dense_constant(transform(constant_array(self.filters)), self.conv)
            self.conv.operands[self.operand] = value
            erase_if_unused(old)
            return value
        new_type = None
        for call in self.calls:
            old = call.operands[self.index].owner
            call.operands[self.index] = _dense_constant(transform(constant_array(call.operands[self.index])), call)
            new_type = call.operands[self.index].type
            erase_if_unused(old)
        retype_argument(self.function, self.index, new_type)
        return self.filters


__all__ = ["ConstantFilters", "calls_by_callee", "constant_array", "erase_if_unused", "replace_convolution",
           "retype_argument"]
