"""One pass per step of the backend interface (``backend.STEPS``), for dnnf-opt pipelines:
``dnnf-lower`` is the five in order.

    dnnf-opt k.mlir --dnnf-codegen-prepare=cpu=x86-64-v3 --dnnf-codegen-schedule=cpu=x86-64-v3
    dnnf-opt k.mlir --pass-pipeline='builtin.module(dnnf-codegen-bufferize{target=aarch64})'

Each runs one step as ``lower`` does (``pipeline.run_step``), from the IR alone: a
module that went through the earlier steps, in this process or another, with the same
options.
"""

from ..transforms.registry import described_by_table
from .lower_pass import ModuleView, TargetPass
from .pipeline import run_step
from .target import Target


class StepPass(TargetPass):
    STEP = ""  # one of backend.STEPS

    def lower(self, module: ModuleView, target: Target, threads: int):
        run_step(self.STEP, module, target, threads)


@described_by_table
class PreparePass(StepPass):
    NAME, STEP = "dnnf-codegen-prepare", "prepare"


@described_by_table
class SchedulePass(StepPass):
    NAME, STEP = "dnnf-codegen-schedule", "schedule"


@described_by_table
class BufferizePass(StepPass):
    NAME, STEP = "dnnf-codegen-bufferize", "bufferize"


@described_by_table
class MapToHardwarePass(StepPass):
    NAME, STEP = "dnnf-codegen-map-to-hardware", "map_to_hardware"


@described_by_table
class EmitPass(StepPass):
    NAME, STEP = "dnnf-codegen-emit", "emit"


__all__ = ["BufferizePass", "EmitPass", "MapToHardwarePass", "PreparePass", "SchedulePass", "StepPass"]
