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

from .._mlir import ir
from ..fusion.profile_db import ProfileDatabase
from ..transforms.pass_base import ModulePass, PassError, write_stats
from ..transforms.registry import described_by_table
from .constant_filters import ConstantFilters, calls_by_callee, replace_convolution
from .linalg_queries import linalg_ops, static_tensor_type
from .winograd import is_winograd_shape, transformed_filters, winograd_convolution
from .target import get_target
from .winograd_choice import SchemeChooser

MODES = ("auto", "always", "strict")


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
    calls = calls_by_callee(module_op)
    count = 0
    for op in linalg_ops(module_op):
        if not is_winograd_shape(op):
            if mode == "strict" and op.name.startswith("linalg.conv_2d"):
                raise PassError(f"{op.name} is not a 3x3, stride-1, dilation-1 f32 convolution with static shapes",
                                op=op)
            continue
        filters = ConstantFilters(op, calls)
        if not filters.constant():
            if mode == "strict":
                raise PassError(f"{_describe(op)}: its filters are not a constant at compile time", op=op)
            continue
        if mode == "auto" and not chooser.winograd(op):
            continue
        with op.location:
            result = winograd_convolution(op, filters.transformed(transformed_filters))
        replace_convolution(op, result)
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
