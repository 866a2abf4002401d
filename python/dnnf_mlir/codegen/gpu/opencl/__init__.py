"""The OpenCL target: kernels as OpenCL C 1.2 source, built at load time by ``runtime/opencl``.

    from dnnf_mlir.codegen import lower
    lower(module, "opencl")          # linalg on tensors -> gpu.binary ops of OpenCL C

``target.py`` (``OpenclTarget``: a device profile's limits), ``printer.py`` (one mapped
``gpu.module`` -> OpenCL C), ``backend.py`` (the GPU steps, then the printer),
``lower_pass.py`` (``dnnf-lower-to-opencl``).

Importing the package registers the backend and its target name (``opencl``) with
``codegen.target``.
"""

from ...target import register_backend
from .backend import OPENCL_BACKEND, program_source
from .lower_pass import lower_to_opencl
from .printer import opencl_source
from .target import DEVICES, RESOLVERS, OpenclTarget, opencl_target

register_backend(OPENCL_BACKEND, RESOLVERS)

__all__ = ["DEVICES", "OPENCL_BACKEND", "OpenclTarget", "lower_to_opencl", "opencl_source", "opencl_target",
           "program_source"]
