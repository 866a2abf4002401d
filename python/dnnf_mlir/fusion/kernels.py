"""``ecg-outline-kernels``: one kernel per function.

Every kernel of a public function becomes a call of a private ``func.func``
(``kernel_functions.KERNEL_ATTR``), so kernel boundaries are visible in the IR and the
code generator, which works within a function, never merges two kernels. A kernel
is an ``ecg.fused`` op (its body becomes the function's, block arguments its
arguments, ``ecg.yield`` its ``func.return``) or one unfused ECG op. Weights (see
``stays_in_code``) are arguments, also those a fused body holds, which are hoisted
into the caller: the weights pass finds them there, and kernels differing only in
their weights are one function. Small constants are cloned into each kernel using
them, where the code generator can fold them. Kernels whose functions print the same
(ops, attributes, types) are one function called from every site; the module records
how many calls and functions there are (``LAUNCHED_ATTR``, ``UNIQUE_ATTR``).
"""

from __future__ import annotations

from .._mlir import func, ir
from ..kernel_functions import KERNEL_ATTR, is_kernel, is_public, record_kernel_counts, stays_in_code
from ..transforms.pass_base import ModulePass, PassError
from ..transforms.registry import described_by_table

NAME_OPS = 3  # op names in a kernel function's name; longer bodies end in "_etc"
_PLACEHOLDER = "kernel"  # the name a new function is compared under


def _is_code_constant(op) -> bool:
    return op.name == "ecg.constant" and stays_in_code(op.attributes["value"])


def _parts(op):
    """(inner ops, [(inner value, caller's value)], yielded inner values) of a kernel."""
    if op.name != "ecg.fused":
        return [op], [(v, v) for v in op.operands], list(op.results)
    ops = [inner.operation for inner in op.regions[0].blocks[0].operations]
    block = op.regions[0].blocks[0]
    return ops[:-1], list(zip(block.arguments, op.operands)), list(ops[-1].operands)


def kernel_name(index: int, ops) -> str:
    """``kernel_<index>_<op>_<op>_<op>[_etc]`` from the (non-constant) ops of its body."""
    names = [op.name.removeprefix("ecg.") for op in ops if op.name != "ecg.constant"]
    return "_".join([f"kernel_{index}", *names[:NAME_OPS]] + (["etc"] if len(names) > NAME_OPS else []))


class Outliner:
    """Outlines the kernels of a module's public functions, one function per distinct kernel."""

    def __init__(self, module_op):
        self.module_op = module_op
        self.body = module_op.regions[0].blocks[0]
        self.known = {}  # canonical text -> kernel function
        self.index = sum(1 for op in self.body.operations if is_kernel(op.operation))

    def run(self):
        for function in [op.operation for op in self.body.operations]:
            if function.name != "func.func" or is_kernel(function) or not is_public(function):
                continue
            if len(function.regions[0].blocks) > 1:
                raise PassError("kernels are outlined from single-block functions", function)
            if not function.regions[0].blocks:
                continue
            for op in [op.operation for op in function.regions[0].blocks[0].operations]:
                if op.name in ("ecg.constant", "func.return"):
                    continue
                if op.name.startswith("ecg."):
                    self.outline(op)
                else:
                    _reject_nested(op)
            _erase_unused_constants(function)

    def outline(self, op):
        """Replace ``op`` (an ``ecg.fused`` or another ECG op) by a call of its kernel function."""
        inner_ops, params, yielded = _parts(op)
        with op.location:
            with ir.InsertionPoint(self.body):
                kernel = func.FuncOp(_PLACEHOLDER, ([], []), visibility="private")
            kernel.attributes[KERNEL_ATTR] = ir.UnitAttr.get()
            block = kernel.add_entry_block()
            arguments, values = [], {}

            def argument(outer):
                if outer not in arguments:
                    arguments.append(outer)
                    block.add_argument(outer.type, op.location)
                return block.arguments[arguments.index(outer)]

            with ir.InsertionPoint(block):
                for inner, outer in params:
                    owner = outer.owner if isinstance(outer, ir.OpResult) else None
                    if owner is not None and _is_code_constant(owner):
                        values[inner] = owner.clone().results[0]
                    else:
                        values[inner] = argument(outer)
                for inner in inner_ops:
                    if inner.name == "ecg.constant" and not _is_code_constant(inner):
                        hoisted = inner.clone(ip=ir.InsertionPoint(op))  # a weight: the caller passes it
                        values[inner.results[0]] = argument(hoisted.results[0])
                        continue
                    clone = inner.clone()
                    for index, operand in enumerate(clone.operands):
                        clone.operands[index] = values.get(operand, operand)
                    for old, new in zip(inner.results, clone.results):
                        values[old] = new
                func.ReturnOp([values[v] for v in yielded])
            kernel.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get([v.type for v in arguments], [v.type for v in yielded])
            )
            callee = self._unique(kernel, inner_ops)
            with ir.InsertionPoint(op):
                call = func.CallOp(callee, arguments)
        for old, new in zip(op.results, call.results):
            old.replace_all_uses_with(new)
        op.erase()

    def _unique(self, kernel, inner_ops):
        """``kernel`` named, or the known function printing the same (``kernel`` erased)."""
        # Printed without verifying: the pass manager verifies the module after the
        # pass, and verifying every kernel as it was printed took most of the pass's time.
        text = kernel.operation.get_asm(assume_verified=True)
        if text in self.known:
            kernel.operation.erase()
            return self.known[text]
        kernel.attributes["sym_name"] = ir.StringAttr.get(kernel_name(self.index, inner_ops))
        self.index += 1
        self.known[text] = kernel
        return kernel


def _reject_nested(op):
    """Kernels are top-level ops of a function: an ECG op nested in another op is an error."""
    found = []

    def visit(inner):
        if inner.name.startswith("ecg."):
            found.append(inner)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    if found:
        raise PassError(f"'{found[0].name}' nested in '{op.name}' is not a kernel of its own function", found[0])


def _erase_unused_constants(function):
    """Constants every kernel took a clone of."""
    for op in reversed([op.operation for op in function.regions[0].blocks[0].operations]):
        if op.name == "ecg.constant" and not list(op.results[0].uses):
            op.erase()


def outline_kernels(module_op) -> tuple:
    """Outline every kernel of ``module_op``'s public functions (in place); returns
    (kernel calls, kernel functions), also recorded on the module."""
    Outliner(module_op).run()
    return record_kernel_counts(module_op)


@described_by_table
class OutlineKernelsPass(ModulePass):
    """``outline_kernels`` as a pass."""

    NAME = "ecg-outline-kernels"

    def run(self, module: ir.Operation):
        outline_kernels(module)


__all__ = ["NAME_OPS", "OutlineKernelsPass", "Outliner", "kernel_name", "outline_kernels"]
