"""The Vulkan target: a GPU reached through Vulkan compute, its kernels SPIR-V.

A ``VulkanTarget`` names a device profile (``device``, ``gpu/target.py``): the limits of
``VkPhysicalDeviceLimits`` that the generated code depends on; the runtime refuses a
device that does not meet them (``dnnf_vulkan.c``).

``generic``, the default, is what the mobile and desktop GPUs of the brief all offer
(Mali Valhall, Adreno 6xx and later, desktop GPUs, lavapipe): 128 MiB per storage
buffer binding (the Vulkan minimum, also lavapipe's), 24 storage buffers per shader
stage (Adreno's; Mali and lavapipe have more), workgroups of up to 128 invocations and
16 KiB of shared memory (both the Vulkan minimums).

``lavapipe`` (Mesa's CPU device) has the same limits but 32 KiB of shared memory (its
own maxComputeSharedMemorySize: an attention workgroup stages 16 rows of 128 scores
where 16 KiB held 8, and MobileBERT's attention kernel ran in 0.89x the time), matmul
threads of 16 rows, register-tiled attention, vec4s stored as 64-bit words and
convolutions in NC4HW4: it reads buffers a scalar load per lane and component, so a
thread's loads per FMA set a matmul's speed there (``GpuDevice.matmul_rows``,
``attention_tiles``, ``vec4_as_words64``, ``channel_blocks``; the device must have
shaderInt64, as lavapipe does).
Code for it runs on any device, slower on a real GPU.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from ..target import GpuDevice, GpuTarget, resolve_device

VulkanDevice = GpuDevice  # maxPerStageDescriptorStorageBuffers, maxComputeWorkGroupInvocations, ...

# A thread's loop iterations on lavapipe, its loops together (``loop_budget.py``): every
# profile keeps to it, as every profile's code may run there.
LAVAPIPE_LOOP_ITERATIONS = 65535

_GENERIC = VulkanDevice("generic", max_storage_buffer_range=1 << 27, max_storage_buffers=24,
                        max_workgroup_invocations=128, max_shared_memory=16 << 10,
                        max_loop_iterations=LAVAPIPE_LOOP_ITERATIONS)
DEVICES = {device.name: device for device in (_GENERIC, replace(
    _GENERIC, name="lavapipe", matmul_rows=16, attention_tiles=True, vec4_as_words64=True, channel_blocks=True,
    lrn_in_pools=True,
    max_shared_memory=32 << 10))}
DEFAULT_DEVICE = "generic"


@dataclass(frozen=True)
class VulkanTarget(GpuTarget):
    kind: ClassVar[str] = "vulkan"
    precisions: ClassVar[tuple] = ("fp32", "fp16")


def vulkan_target(name: str = "vulkan", device: str | None = None) -> VulkanTarget:
    """The Vulkan target for the profile ``device`` (``generic``, the default, or ``lavapipe``)."""
    return VulkanTarget("vulkan", resolve_device(DEVICES, device, DEFAULT_DEVICE, "Vulkan"))


# The names codegen.get_target resolves to Vulkan targets.
RESOLVERS = {"vulkan": vulkan_target}


__all__ = ["DEFAULT_DEVICE", "DEVICES", "RESOLVERS", "VulkanDevice", "VulkanTarget", "vulkan_target"]
