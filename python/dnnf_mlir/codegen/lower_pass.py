"""``dnnf-lower-to-llvm``: ``lower_to_llvm`` as a pass, for dnnf-opt pipelines.

    dnnf-opt model.mlir --convert-ecg-to-linalg --dnnf-lower-to-llvm=target=aarch64
    dnnf-opt model.mlir --pass-pipeline='builtin.module(dnnf-lower-to-llvm{target=host cpu=x86-64-v3})'
"""

from .._mlir import ir
from ..transforms.pass_base import ModulePass, PassError
from ..transforms.registry import described_by_table
from .errors import CodegenError
from .pipeline import lower_to_llvm
from .target import get_target


class _ModuleView:
    """What ``lower_to_llvm`` uses of an ``ir.Module``, over the module operation a pass gets."""

    def __init__(self, operation: ir.Operation):
        self.operation = operation
        self.context = operation.context
        self.body = operation.regions[0].blocks[0]


@described_by_table
class LowerToLLVMPass(ModulePass):
    NAME = "dnnf-lower-to-llvm"

    def run(self, module: ir.Operation):
        try:
            target = get_target(self.options["target"], self.options["cpu"] or None)
            lower_to_llvm(_ModuleView(module), target, threads=self.options["threads"])
        except (CodegenError, ValueError) as error:
            raise PassError(str(error)) from None
