"""``dnnf-winograd``: 3x3 stride-1 convolutions computed by Winograd F(4x4, 3x3) (``winograd.py``).

Runs on linalg on tensors after ``convert-ecg-to-linalg`` and before
``dnnf-externalize-weights``, while the filters are still constants: a convolution
whose filter is a constant of its function, or the argument of a kernel function
that every call passes a constant (and that nothing else reads), gets the filters
transformed here (``G g G^T``, ``[36, K, C]``), the kernel's argument retyped and
each call's constant replaced, so that the weights file holds the transformed form.
Other convolutions (filters computed at run time) are left as they are.

``mode=auto`` rewrites only the convolutions that ``dnnf-tune`` measured faster by
Winograd on this target's CPU and the ``threads`` the code is split for, where the
profiling database holds them, and those that ``prefers_winograd`` expects to be faster
where it does not (``winograd_choice.py``; ``stats-file`` counts which decided);
``mode=always`` every one it can (for tests); ``mode=strict`` is ``always`` that fails
on a convolution it cannot rewrite, naming it.
"""

from __future__ import annotations

import numpy as np

from .. import _mlir
from .._mlir import ir
from ..ecg.bfloat16_elements import elements_array
from ..fusion.profile_db import ProfileDatabase
from ..ir_walk import walk_ops
from ..transforms.pass_base import ModulePass, PassError, write_stats
from ..transforms.registry import described_by_table
from .linalg_queries import linalg_ops, static_tensor_type
from .lowered_module import DECLARED_TYPE_ATTR, symbol_name
from .winograd import is_winograd_shape, transformed_filter_type, transformed_filters, winograd_convolution
from .target import get_target
from .winograd_choice import SchemeChooser

MODES = ("auto", "always", "strict")


def _constant_array(value):
    """The elements of ``value`` when an ``arith.constant`` (not a splat) defines it, else None."""
    owner = value.owner if isinstance(value, ir.OpResult) else None
    if owner is None or owner.name != "arith.constant":
        return None
    if not isinstance(owner.attributes["value"], ir.DenseElementsAttr):
        return None
    attr = ir.DenseElementsAttr(owner.attributes["value"])
    return None if attr.is_splat else elements_array(attr)


def _transformed_constant(array: np.ndarray, before) -> ir.Value:
    """An ``arith.constant`` of ``transformed_filters(array)`` inserted before ``before``."""
    transformed = transformed_filters(array)
    with ir.InsertionPoint(before), before.location:
        return _mlir.arith.constant(ir.RankedTensorType.get(list(transformed.shape), ir.F32Type.get()),
                                    ir.DenseElementsAttr.get(transformed))


def _erase_if_unused(op):
    if op is not None and all(len(list(r.uses)) == 0 for r in op.results):
        op.erase()


class _Filters:
    """Where a convolution's filters come from, and how to give it the transformed ones."""

    def __init__(self, conv, calls_by_callee):
        self.conv = conv
        self.filters = conv.operands[1]
        self.calls = []
        self.index = None
        self.function = None
        if _constant_array(self.filters) is not None:
            return
        if not isinstance(self.filters, ir.BlockArgument) or len(list(self.filters.uses)) != 1:
            return
        owner = self.filters.owner.owner.operation
        if owner.name != "func.func" or self.filters.owner != owner.regions[0].blocks[0]:
            return
        if DECLARED_TYPE_ATTR in owner.attributes:  # a signature recorded for the caller: keep it
            return
        self.function, self.index = owner, self.filters.arg_number
        self.calls = calls_by_callee.get(symbol_name(owner), [])

    def constant(self) -> bool:
        """Whether every value the filters take is a constant known here."""
        if self.function is None:
            return _constant_array(self.filters) is not None
        return bool(self.calls) and all(_constant_array(call.operands[self.index]) is not None for call in self.calls)

    def transformed(self) -> ir.Value:
        """Replace the filters' constants by their transformed form; the value the
        convolution reads them from."""
        if self.function is None:
            old = self.filters.owner
            value = _transformed_constant(_constant_array(self.filters), self.conv)
            self.conv.operands[1] = value
            _erase_if_unused(old)
            return value
        for call in self.calls:
            old = call.operands[self.index].owner
            call.operands[self.index] = _transformed_constant(_constant_array(call.operands[self.index]), call)
            _erase_if_unused(old)
        new_type = transformed_filter_type(ir.RankedTensorType(self.filters.type))
        self.filters.set_type(new_type)
        function_type = ir.FunctionType(ir.TypeAttr(self.function.attributes["function_type"]).value)
        inputs = list(function_type.inputs)
        inputs[self.index] = new_type
        self.function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, function_type.results))
        return self.filters


def _describe(op) -> str:
    x, w = static_tensor_type(op.operands[0]), static_tensor_type(op.operands[1])
    return f"linalg.conv_2d_nchw_fchw ({'x'.join(map(str, x.shape))} input, {'x'.join(map(str, w.shape))} filters)"


def winograd_convolutions(module_op, mode: str = "auto", threads: int = 1, chooser: SchemeChooser | None = None) -> int:
    """Rewrite the 3x3 stride-1 convolutions of ``module_op`` (an ``ir.Module`` or its
    operation) that ``mode`` selects for code split among ``threads`` (auto: those
    ``chooser`` picks; default: by the rule alone); returns how many."""
    chooser = chooser or SchemeChooser(None, "", "", threads)
    if mode not in MODES:
        raise PassError(f"mode '{mode}' is not one of {', '.join(MODES)}")
    module_op = module_op.operation
    calls_by_callee = {}
    for call in walk_ops(module_op, ("func.call",)):
        calls_by_callee.setdefault(ir.FlatSymbolRefAttr(call.attributes["callee"]).value, []).append(call)
    count = 0
    for op in linalg_ops(module_op):
        if not is_winograd_shape(op):
            if mode == "strict" and op.name.startswith("linalg.conv_2d"):
                raise PassError(f"{op.name} is not a 3x3, stride-1, dilation-1 f32 convolution with static shapes",
                                op=op)
            continue
        filters = _Filters(op, calls_by_callee)
        if not filters.constant():
            if mode == "strict":
                raise PassError(f"{_describe(op)}: its filters are not a constant at compile time", op=op)
            continue
        if mode == "auto" and not chooser.winograd(op):
            continue
        with op.location:
            result = winograd_convolution(op, filters.transformed())
        op.results[0].replace_all_uses_with(result)
        init = op.operands[2].owner if isinstance(op.operands[2], ir.OpResult) else None
        op.erase()
        _erase_if_unused(init)
        count += 1
    return count


@described_by_table
class WinogradPass(ModulePass):
    """``winograd_convolutions`` as a pass."""

    NAME = "dnnf-winograd"

    def run(self, module: ir.Operation):
        threads, database = self.options["threads"], None
        try:
            target = get_target(self.options["target"], self.options["cpu"] or None)
        except ValueError as error:  # an unknown target or CPU
            raise PassError(str(error)) from None
        if self.options["mode"] == "auto" and self.options["measured"]:
            database = ProfileDatabase(self.options["profile-db"] or None)
        chooser = SchemeChooser(database, target.name, target.cpu_name, threads)
        try:
            count = winograd_convolutions(module, self.options["mode"], threads, chooser)
        finally:
            if database is not None:
                database.close()
        if self.options["stats-file"]:
            report = {"winograd": count, "decided_by": chooser.decided_by,
                      "database": str(database.path) if database is not None else None}
            write_stats(report, self.options["stats-file"])


__all__ = ["MODES", "WinogradPass", "winograd_convolutions"]
