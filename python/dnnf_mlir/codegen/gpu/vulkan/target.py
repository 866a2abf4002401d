"""The Vulkan target: a GPU reached through Vulkan compute, its kernels SPIR-V.

A ``VulkanTarget`` names a device profile (``device``): the limits of
``VkPhysicalDeviceLimits`` that the generated code depends on. The code is compiled
for the profile, not for the GPU at hand, so that one artifact runs on every device
that meets it; the runtime refuses a device that does not (``dnnf_vulkan.c``).

``generic``, the default, is what the mobile and desktop GPUs of the brief all offer
(Mali Valhall, Adreno 6xx and later, desktop GPUs, lavapipe): 128 MiB per storage
buffer binding (the Vulkan minimum, also lavapipe's), 24 storage buffers per shader
stage (Adreno's; Mali and lavapipe have more), workgroups of up to 128 invocations and
16 KiB of shared memory (both the Vulkan minimums).

Fusion keeps every kernel within the bindings a dispatch may have: its outputs and
inputs together at most the profile's storage buffers (``fusion_limits``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...target import FusionLimits, Target

MAX_KERNEL_OUTPUTS = 8  # as on the CPU (ecg.ops.structure.MAX_FUSED_OUTPUTS)
MAX_LIVE_VALUES = 16  # as on the CPU: the same blocks, the same kernels per model


@dataclass(frozen=True)
class VulkanDevice:
    """The limits of a device profile that the code depends on."""

    name: str
    max_storage_buffer_range: int  # bytes one binding may span
    max_storage_buffers: int  # bindings one dispatch may have (maxPerStageDescriptorStorageBuffers)
    max_workgroup_invocations: int  # maxComputeWorkGroupInvocations
    max_shared_memory: int  # bytes of workgroup memory (maxComputeSharedMemorySize)


DEVICES = {device.name: device for device in (
    VulkanDevice("generic", max_storage_buffer_range=1 << 27, max_storage_buffers=24, max_workgroup_invocations=128,
                 max_shared_memory=16 << 10),
)}
DEFAULT_DEVICE = "generic"


@dataclass(frozen=True)
class VulkanTarget(Target):
    kind: ClassVar[str] = "vulkan"

    name: str
    device: VulkanDevice

    @property
    def runs_here(self) -> bool:
        """A Vulkan device is looked for when the code is loaded (``dnnf_vk_probe``)."""
        return True

    @property
    def fusion_limits(self) -> FusionLimits:
        outputs = MAX_KERNEL_OUTPUTS
        return FusionLimits(max_inputs=self.device.max_storage_buffers - outputs, max_outputs=outputs,
                            max_live_values=MAX_LIVE_VALUES)

    def describe(self) -> str:
        return f"{self.name} ({self.device.name})"

    def missing_features(self) -> tuple:
        return ()

    def options(self) -> dict:
        return {"device": self.device.name}

    def cache_fields(self) -> dict:
        return {"target": self.name, "device": self.device.name}


def vulkan_target(name: str = "vulkan", device: str | None = None) -> VulkanTarget:
    """The Vulkan target for the profile ``device`` (default ``generic``)."""
    device = device or DEFAULT_DEVICE
    if device not in DEVICES:
        raise ValueError(f"unknown Vulkan device profile {device!r}; known: {', '.join(DEVICES)}")
    return VulkanTarget("vulkan", DEVICES[device])


# The names codegen.get_target resolves to Vulkan targets.
RESOLVERS = {"vulkan": vulkan_target}


__all__ = ["DEFAULT_DEVICE", "DEVICES", "RESOLVERS", "VulkanDevice", "VulkanTarget", "vulkan_target"]
