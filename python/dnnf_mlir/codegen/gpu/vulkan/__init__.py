"""The Vulkan target: kernels as SPIR-V for Vulkan compute, run by ``runtime/vulkan``.

    from dnnf_mlir.codegen import lower
    lower(module, "vulkan")          # linalg on tensors -> gpu.binary ops of SPIR-V

``target.py`` (``VulkanTarget``: a device profile's limits), ``backend.py`` (the GPU
steps, then SPIR-V), ``spirv.py`` (one ``gpu.module`` to a validated SPIR-V binary),
``lower_pass.py`` (``dnnf-lower-to-spirv``).

Importing the package registers the backend and its target name (``vulkan``) with
``codegen.target``.
"""

from ...target import register_backend
from .backend import VULKAN_BACKEND
from .lower_pass import lower_to_spirv
from .target import DEVICES, RESOLVERS, VulkanDevice, VulkanTarget, vulkan_target

register_backend(VULKAN_BACKEND, RESOLVERS)

__all__ = ["DEVICES", "VULKAN_BACKEND", "VulkanDevice", "VulkanTarget", "lower_to_spirv", "vulkan_target"]
