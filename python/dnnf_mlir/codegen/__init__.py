"""Code generation: linalg on tensors -> a target's code, through the target's backend.

    from dnnf_mlir.codegen import get_target, lower

    lower(module, "host", threads=2)                  # in place: every step of the backend
    lower(module, get_target("host", cpu="x86-64-v3"))   # for a named CPU

``target.py`` (what a target is, the registry of backends and target names),
``backend.py`` (the five steps a backend implements), ``pipeline.py`` (``lower``: the
steps in order, and what every lowered module records, ``lowered_module.py``); the
generic pieces the backends build on: ``kernel_plan.py``, ``transform_script.py``,
``linalg_queries.py``, ``contractions.py``, ``approximations.py``,
``bufferization.py``, ``passes.py``. One package per backend: ``cpu/`` (x86-64 and
AArch64 through LLVM: its ``jit``, ``compile_object``, ``lower_to_llvm``, ...) and
``gpu/`` (what the GPU APIs share, and ``gpu/vulkan/``: SPIR-V, ``lower_to_spirv``; ``gpu/opencl/``: OpenCL C, ``lower_to_opencl``).

This package is where the backends are registered: it imports each one, which
registers itself and its target names (``target.register_backend``); no other module
of ``codegen/`` outside a backend imports one (``test/python/test_layout.py``).
"""

from . import cpu  # registers the CPU backend and its targets
from .gpu import vulkan  # registers the Vulkan backend and its target
from .gpu import opencl  # registers the OpenCL backend and its target
from .backend import STEPS, Backend, KernelPlan, Stages
from .errors import CodegenError, UnsupportedTargetError
from .lowered_module import signatures
from .pipeline import LoweringReport, lower, run_step
from .target import PRECISIONS, FusionLimits, Target, backends, check_precision, get_target

__all__ = [
    "Backend",
    "CodegenError",
    "FusionLimits",
    "KernelPlan",
    "LoweringReport",
    "PRECISIONS",
    "STEPS",
    "Stages",
    "Target",
    "UnsupportedTargetError",
    "backends",
    "check_precision",
    "get_target",
    "lower",
    "run_step",
    "signatures",
]
