"""What a module lowered for a CPU carries beyond what every target's does
(``lowered_module.py``): the LLVM attributes that make it what a library and the JIT
expect, and whether it runs OpenMP.

- ``mark_entry_points``: every public function also gets MLIR's C interface
  (``_mlir_ciface_<name>``, one memref descriptor per argument), which the C glue and
  the JIT call;
- ``keep_kernels_apart``: each kernel function becomes a noinline LLVM function with
  internal linkage (its code exists once however often it is called, it is not
  exported from the library and is called directly rather than through the PLT);
- ``set_llvm_target``: the triple, and the CPU and features of every function.
"""

from __future__ import annotations

from ..._mlir import ir
from ...ir_walk import walk_ops
from ...kernel_functions import is_kernel, is_public
from ..lowered_module import functions, target_option_attr
from .target import CpuTarget

USES_OPENMP = "dnnf.codegen.openmp"  # unit attribute: the module runs OpenMP parallel loops
CPU_ATTR = target_option_attr("cpu")  # the CPU as asked (CpuTarget.cpu)


def mark_entry_points(module: ir.Module):
    for function in functions(module):
        if is_public(function) and len(function.regions[0].blocks) > 0:
            function.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()


def keep_kernels_apart(module: ir.Module):
    """func-to-llvm turns an "llvm."-prefixed attribute into the llvm.func one."""
    internal = ir.Attribute.parse("#llvm.linkage<internal>")
    for function in functions(module):
        if is_kernel(function.operation):
            function.attributes["llvm.no_inline"] = ir.UnitAttr.get()
            function.attributes["llvm.linkage"] = internal


def set_llvm_target(module: ir.Module, target: CpuTarget):
    module.operation.attributes["llvm.target_triple"] = ir.StringAttr.get(target.triple)
    if not target.pinned:
        return  # the JIT and `llc -mcpu=native` pick the host CPU and its features
    # Explicit features: the JIT's own machine has the host's, which a function's
    # target_features replaces (the CPU's defaults still apply).
    features = ir.Attribute.parse("#llvm.target_features<[" + ", ".join(f'"+{f}"' for f in target.features) + "]>")
    for op in walk_ops(module.operation, {"llvm.func"}):
        if len(op.regions[0].blocks) == 0:
            continue
        op.attributes["target_cpu"] = ir.StringAttr.get(target.cpu)
        if target.features:
            op.attributes["target_features"] = features


def lowered_cpu(module: ir.Module) -> str | None:
    """The CPU the module was lowered for, as asked (None when it does not say)."""
    attributes = module.operation.attributes
    return ir.StringAttr(attributes[CPU_ATTR]).value if CPU_ATTR in attributes else None


__all__ = ["CPU_ATTR", "USES_OPENMP", "keep_kernels_apart", "lowered_cpu", "mark_entry_points", "set_llvm_target"]
