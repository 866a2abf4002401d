"""``dnnf-instrument-kernels``: every kernel call of a lowered module, timed by the C glue.

Runs on the LLVM dialect, after the code generator, so that nothing it does can move
or merge the timers: in each function that is not a kernel, each ``llvm.call`` of a
kernel function (``dnnf.kernel``; kernels are never inlined) is wrapped in
``dnnf_kernel_enter(i)`` / ``dnnf_kernel_exit(i)``, ``i`` the launch's number in
program order, and the module records the launches (``LAUNCHES_ATTR``: for each, the
kernel and what ``dnnf-kernel-statistics`` recorded on it) for the glue and the
manifest. Only a model compiled with ``profile_kernels`` goes through this pass; every
other one has no timer.
"""

from __future__ import annotations

from .._mlir import ir, llvm
from ..kernel_functions import INT8_FLOPS_ATTR, KERNEL_ATTR
from ..transforms.pass_base import ModulePass, PassError
from ..transforms.registry import described_by_table
from .statistics_pass import BYTES_ATTR, FLOPS_ATTR, OPS_ATTR, SHAPES_ATTR

LAUNCHES_ATTR = "dnnf.profile.launches"
ENTER, EXIT = "dnnf_kernel_enter", "dnnf_kernel_exit"  # void (int32_t launch), defined by glue.py
_RECORDED = {"flops": FLOPS_ATTR, "int8_flops": INT8_FLOPS_ATTR, "bytes": BYTES_ATTR, "ops": OPS_ATTR,
             "shapes": SHAPES_ATTR}


def _symbol(op) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def _declare_timers(module: ir.Operation):
    existing = {_symbol(op) for op in module.regions[0].blocks[0].operations if op.operation.name == "llvm.func"}
    i32 = ir.IntegerType.get_signless(32)
    timer_type = ir.TypeAttr.get(ir.Type.parse(f"!llvm.func<void ({i32})>"))
    with ir.InsertionPoint.at_block_begin(module.regions[0].blocks[0]):
        for name in (ENTER, EXIT):
            if name not in existing:
                llvm.LLVMFuncOp(name, timer_type)


def _timer_call(name: str, launch: ir.Value):
    return llvm.CallOp(None, [launch], [], [], callee=ir.FlatSymbolRefAttr.get(name))


def _launch_record(kernel) -> ir.Attribute:
    entries = {"kernel": ir.StringAttr.get(_symbol(kernel))}
    for key, attribute in _RECORDED.items():
        if attribute in kernel.attributes:
            entries[key] = kernel.attributes[attribute]
    return ir.DictAttr.get(entries)


@described_by_table
class InstrumentKernelsPass(ModulePass):
    """Wrap the kernel calls in timers (see the module docstring)."""

    NAME = "dnnf-instrument-kernels"

    def run(self, module: ir.Operation):
        with module.context, ir.Location.unknown():
            self._instrument(module)

    def _instrument(self, module: ir.Operation):
        functions = [op.operation for op in module.regions[0].blocks[0].operations]
        if any(op.name == "func.func" for op in functions):
            raise PassError("the module is not lowered to the LLVM dialect (run the code generator first)")
        kernels = {_symbol(op): op for op in functions if op.name == "llvm.func" and KERNEL_ATTR in op.attributes}
        if not kernels:
            raise PassError("the module has no kernel functions (compile with ecg-outline-kernels)")
        i32 = ir.IntegerType.get_signless(32)
        launches = []
        for function in functions:
            if function.name != "llvm.func" or KERNEL_ATTR in function.attributes:
                continue
            for block in function.regions[0].blocks:
                for op in list(block.operations):
                    if op.operation.name != "llvm.call" or "callee" not in op.attributes:
                        continue
                    callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
                    if callee not in kernels:
                        continue
                    with ir.InsertionPoint(op), op.location:
                        number = llvm.ConstantOp(i32, ir.IntegerAttr.get(i32, len(launches))).result
                        _timer_call(ENTER, number)
                        _timer_call(EXIT, number).operation.move_after(op)
                    launches.append(_launch_record(kernels[callee]))
        _declare_timers(module)
        module.attributes[LAUNCHES_ATTR] = ir.ArrayAttr.get(launches)


def recorded_launches(module: ir.Operation) -> list:
    """What ``InstrumentKernelsPass`` recorded: per launch, in order, a dict with
    ``kernel`` and (when recorded) ``ops``, ``shapes``, ``flops``, ``int8_flops``, ``bytes``; [] for a
    module it did not instrument."""
    if LAUNCHES_ATTR not in module.attributes:
        return []
    launches = []
    for record in ir.ArrayAttr(module.attributes[LAUNCHES_ATTR]):
        entries = ir.DictAttr(record)
        launch = {"kernel": ir.StringAttr(entries["kernel"]).value}
        for key in ("ops", "shapes"):
            if key in entries:
                launch[key] = ir.StringAttr(entries[key]).value
        for key in ("flops", "int8_flops", "bytes"):
            if key in entries:
                launch[key] = ir.IntegerAttr(entries[key]).value
        launches.append(launch)
    return launches


__all__ = ["ENTER", "EXIT", "InstrumentKernelsPass", "LAUNCHES_ATTR", "recorded_launches"]
