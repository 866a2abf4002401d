"""What the GPU backends share: the first four steps of ``codegen.backend``, from linalg on
tensors to launches outlined into ``gpu.module``s whose code every GPU API's conversion
takes. A GPU API's backend (``vulkan/``) adds ``emit`` (its binaries) and ``translate``.

1. ``prepare``, stage ``prepare``: constants passed to the kernels, reshaped results
   reshaped by the callers, element-wise chains merged (``prepare.prepare_module``).
2. ``schedule``, stage ``schedule``: every kernel function compiled on its own, down to
   its launches (``lower.compile_kernels``): the kernel rewrites, the fused schedule
   (one dispatch) or, where it fails, one dispatch per op; each compiled function stands
   beside its original.
3. ``bufferize``, stage ``bufferize``: the public function on buffers with the kernels'
   conventions, the compiled kernel functions in their originals' places
   (``lower.bufferize_host``).
4. ``map_to_hardware``, stages ``outline`` and ``device-code``: each launch a
   ``gpu.module`` (``lower.outline_launches``), whose code is brought to where an API's
   conversion starts (``device.lower_device_code``).

The target's device profile (``target.device``) bounds what a binding may span.
"""

from __future__ import annotations

from ..._mlir import ir
from ..backend import Backend, KernelPlan, Stages
from ..target import Target
from .device import lower_device_code
from .lower import bufferize_host, compile_kernels, outline_launches
from .prepare import prepare_module


class GpuBackend(Backend):
    """Steps 1-4 for every GPU API (see the module docstring); a subclass's ``stages``
    start with ``GPU_STAGES``."""

    GPU_STAGES = ("prepare", "schedule", "bufferize", "outline", "device-code")
    runs_step_loops = False  # a kernel is launches: an LSTM's loop is unrolled (ecg-unroll-recurrence)

    def prepare(self, module: ir.Module, target: Target, threads: int, stages: Stages) -> None:
        with stages.stage("prepare", module):
            prepare_module(module)

    def schedule(self, module: ir.Module, target: Target, threads: int, stages: Stages) -> KernelPlan:
        with stages.stage("schedule", module):
            script, schedules = compile_kernels(module, target.device)
        return KernelPlan(schedules, script)

    def bufferize(self, module: ir.Module, target: Target, threads: int, stages: Stages) -> None:
        with stages.stage("bufferize", module):
            bufferize_host(module)

    def map_to_hardware(self, module: ir.Module, target: Target, threads: int, stages: Stages) -> str:
        with stages.stage("outline", module):
            outline_launches(module)
        with stages.stage("device-code", module):
            lower_device_code(module)
        return ""


__all__ = ["GpuBackend"]
