"""``dnnf-lower-to-llvm``: ``lower_to_llvm`` as a pass, for dnnf-opt pipelines.

    dnnf-opt model.mlir --convert-ecg-to-linalg --dnnf-lower-to-llvm=target=aarch64
    dnnf-opt model.mlir --pass-pipeline='builtin.module(dnnf-lower-to-llvm{target=host cpu=x86-64-v3})'
"""

from .._mlir import ir
from ..transforms.pass_base import ModulePass, Option, PassError
from .errors import CodegenError
from .pipeline import lower_to_llvm
from .target import get_target


class _ModuleView:
    """What ``lower_to_llvm`` uses of an ``ir.Module``, over the module operation a pass gets."""

    def __init__(self, operation: ir.Operation):
        self.operation = operation
        self.context = operation.context
        self.body = operation.regions[0].blocks[0]


class LowerToLLVMPass(ModulePass):
    NAME = "dnnf-lower-to-llvm"
    SUMMARY = "Tile, pack, vectorize and bufferize linalg on tensors and lower it to the LLVM dialect"
    OPTIONS = (
        Option("target", str, "host", "host or aarch64"),
        Option("cpu", str, "", "CPU as LLVM names it (native, x86-64-v3, znver3, cortex-a76, ...); "
               "default: $DNNF_CPU or native for the host, generic for aarch64"),
        Option("threads", int, 1, "threads the parallel loops are split for (OpenMP when > 1)"),
    )

    def run(self, module: ir.Operation):
        try:
            target = get_target(self.options["target"], self.options["cpu"] or None)
            lower_to_llvm(_ModuleView(module), target, threads=self.options["threads"])
        except (CodegenError, ValueError) as error:
            raise PassError(str(error)) from None
