"""``dnnf-lower-to-llvm``: ``lower_to_llvm`` as a pass, for dnnf-opt pipelines.

    dnnf-opt model.mlir --convert-ecg-to-linalg --dnnf-lower-to-llvm=target=aarch64
"""

from .._mlir import ir
from ..transforms.pass_base import ModulePass, Option, PassError
from .pipeline import CodegenError, lower_to_llvm


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
        Option("target", str, "host", "host, aarch64, x86_64-avx512 or x86_64-avx2"),
        Option("threads", int, 1, "threads the parallel loops are split for (OpenMP when > 1)"),
    )

    def run(self, module: ir.Operation):
        try:
            lower_to_llvm(_ModuleView(module), self.options["target"], threads=self.options["threads"])
        except (CodegenError, ValueError) as error:
            raise PassError(str(error)) from None
