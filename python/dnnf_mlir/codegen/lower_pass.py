"""``dnnf-lower``: ``codegen.lower`` as a pass, every step of a registered target's backend.

    dnnf-opt model.mlir --convert-ecg-to-linalg --dnnf-lower=target=aarch64
    dnnf-opt model.mlir --pass-pipeline='builtin.module(dnnf-lower{target=host cpu=x86-64-v3 threads=2})'

``TargetPass`` is what the code generator's passes share: the options ``target``,
``cpu`` (CPU targets), ``device`` (GPU targets) and ``threads`` resolved to a ``Target``, and errors (an unknown target or
CPU, a module the backend cannot lower) reported at the module's first function.
"""

from .._mlir import ir
from ..transforms.pass_base import ModulePass, PassError
from ..transforms.registry import described_by_table
from .errors import CodegenError
from .pipeline import lower
from .target import Target, get_target


class ModuleView:
    """What the code generator uses of an ``ir.Module``, over the module operation a pass gets."""

    def __init__(self, operation: ir.Operation):
        self.operation = operation
        self.context = operation.context
        self.body = operation.regions[0].blocks[0]


class TargetPass(ModulePass):
    """A pass that lowers for the target of its options: subclasses define ``lower``."""

    def lower(self, module: ModuleView, target: Target, threads: int):
        raise NotImplementedError

    def run(self, module: ir.Operation):
        view = ModuleView(module)
        functions = [op.operation for op in view.body.operations if op.operation.name == "func.func"]
        try:
            target = get_target(self.options["target"], self.options["cpu"] or None,
                                device=self.options["device"] or None)
            self.lower(view, target, self.options["threads"])
        except (CodegenError, ValueError) as error:
            raise PassError(str(error), functions[0] if functions else None) from None


@described_by_table
class LowerPass(TargetPass):
    NAME = "dnnf-lower"

    def lower(self, module: ModuleView, target: Target, threads: int):
        lower(module, target, threads)


__all__ = ["LowerPass", "ModuleView", "TargetPass"]
