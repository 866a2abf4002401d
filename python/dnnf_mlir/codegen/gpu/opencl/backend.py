"""The OpenCL backend: the GPU steps (``codegen/gpu/backend.py``), then OpenCL C.

Step ``emit``, stage ``opencl``: the launches held to the device profile's bindings
(``device.check_bindings``), then every ``gpu.module`` replaced by a ``gpu.binary``
whose one object holds its kernel's OpenCL C source (``printer.opencl_source``; format
``assembly``, under a SPIR-V ``Kernel`` target environment: the OpenCL flavour of
the attribute the ``gpu`` dialect requires). The runtime builds the sources as one
program when the model loads; ``program.dispatch_plan`` reads the plan as for Vulkan.

Its output formats: ``plan``, the dispatch plan, and ``opencl``, the program's source.
"""

from __future__ import annotations

from .... import _mlir
from ...._mlir import ir
from ....ir_walk import walk_ops
from ...backend import Stages
from ...lowered_module import symbol_name
from ..backend import GpuBackend
from ..device import check_bindings, emit_binaries
from ..program import REQUIRES_ATTR, dispatch_plan
from .printer import opencl_source, required_extensions
from .target import OpenclTarget

OBJECT_TARGET = "#spirv.target_env<#spirv.vce<v1.0, [Kernel, Addresses, Int64], []>, api=OpenCL, #spirv.resource_limits<>>"
ASSEMBLY = 2  # gpu.object's format: text


def to_opencl_binary(device: ir.Module, name: str):
    """Replace the ``gpu.module`` ``name``, alone in ``device``, by a ``gpu.binary`` of its
    OpenCL C (and the extensions it requires)."""
    (gpu_module,) = walk_ops(device.operation, {"gpu.module"})
    source = opencl_source(gpu_module)
    target = ir.Attribute.parse(OBJECT_TARGET)
    obj = _mlir.gpu.ObjectAttr.get(target, ASSEMBLY, source.encode())
    binary = ir.Operation.parse(f"gpu.binary @{symbol_name(gpu_module)} [{obj}]")
    extensions = required_extensions(gpu_module)
    if extensions:  # the plan's ``require`` line, checked against the device's extensions at load
        binary.attributes[REQUIRES_ATTR] = ir.ArrayAttr.get([ir.StringAttr.get(e) for e in extensions])
    ir.InsertionPoint(gpu_module).insert(binary)
    gpu_module.erase()


def program_source(kernels) -> str:
    """The one OpenCL program of ``kernels`` (``program.Kernel``s): their sources in order."""
    return "\n".join(kernel.code.decode() for kernel in kernels)


class OpenclBackend(GpuBackend):
    kind = "opencl"
    stages = GpuBackend.GPU_STAGES + ("opencl",)
    lowering_pass = "dnnf-lower-to-opencl"
    output_formats = {"plan": "the OpenCL runtime's dispatch plan", "opencl": "the kernels' OpenCL C program"}

    def tools(self) -> list:
        return []

    def emit(self, module: ir.Module, target: OpenclTarget, threads: int, stages: Stages) -> None:
        with stages.stage("opencl", module):
            check_bindings(module, target.device.max_storage_buffers, target.device.max_storage_buffer_range)
            emit_binaries(module, to_opencl_binary)

    def translate(self, module: ir.Module, target: OpenclTarget, output_format: str) -> str:
        program = dispatch_plan(module)
        if output_format == "plan":
            return program.text("opencl")
        return program_source(program.kernels)


OPENCL_BACKEND = OpenclBackend()


__all__ = ["OPENCL_BACKEND", "OpenclBackend", "program_source", "to_opencl_binary"]
