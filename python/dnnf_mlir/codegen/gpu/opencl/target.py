"""The OpenCL target: a GPU (or PoCL on the CPU) reached through OpenCL 1.2, its kernels
OpenCL C built by the runtime when the model loads (``runtime/opencl``).

``generic``, the default profile, matches Vulkan's ``generic`` (the same kernels, the same
fusion): 128 MiB per buffer (``CL_DEVICE_MAX_MEM_ALLOC_SIZE``'s minimum), 24 buffers a
kernel (two arguments each: a pointer and a byte offset, 384 bytes of the 1024 that
``CL_DEVICE_MAX_PARAMETER_SIZE`` guarantees), workgroups of up to 128 work-items and
16 KiB of local memory (the full profile guarantees 32 KiB). The runtime refuses a
device below it (``dnnf_opencl.c``). ``pocl`` (PoCL, OpenCL on the CPU) has the same
limits and computes convolutions channel-blocked (``GpuDevice.channel_blocks``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from ..target import GpuDevice, GpuTarget, resolve_device

_GENERIC = GpuDevice("generic", max_storage_buffer_range=1 << 27, max_storage_buffers=24, max_workgroup_invocations=128,
                     max_shared_memory=16 << 10)
DEVICES = {device.name: device for device in (_GENERIC, replace(_GENERIC, name="pocl", channel_blocks=True))}
DEFAULT_DEVICE = "generic"


@dataclass(frozen=True)
class OpenclTarget(GpuTarget):
    kind: ClassVar[str] = "opencl"
    precisions: ClassVar[tuple] = ("fp32", "fp16")  # fp16: half storage through vload_half / vstore_half


def opencl_target(name: str = "opencl", device: str | None = None) -> OpenclTarget:
    """The OpenCL target for the profile ``device`` (``generic``, the default, or ``pocl``)."""
    return OpenclTarget("opencl", resolve_device(DEVICES, device, DEFAULT_DEVICE, "OpenCL"))


# The names codegen.get_target resolves to OpenCL targets.
RESOLVERS = {"opencl": opencl_target}


__all__ = ["DEFAULT_DEVICE", "DEVICES", "OpenclTarget", "RESOLVERS", "opencl_target"]
