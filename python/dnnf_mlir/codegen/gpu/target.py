"""What the GPU targets share: a device profile's limits, and the target that names one.

Code is compiled for a profile, not for the GPU at hand, so that one artifact runs on
every device that meets it; each API's runtime refuses a device that does not. An API's
target (``vulkan/target.py``, ``opencl/target.py``) subclasses ``GpuTarget`` with its
``kind`` and its profiles. Fusion keeps every kernel within the bindings a dispatch may
have: its outputs and inputs together at most the profile's storage buffers
(``fusion_limits``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..target import FusionLimits, Target

MAX_KERNEL_OUTPUTS = 8  # as on the CPU (ecg.ops.structure.MAX_FUSED_OUTPUTS)
MAX_LIVE_VALUES = 16  # as on the CPU: the same blocks, the same kernels per model


@dataclass(frozen=True)
class GpuDevice:
    """The limits of a device profile that the code depends on."""

    name: str
    max_storage_buffer_range: int  # bytes one binding may span
    max_storage_buffers: int  # bindings one dispatch may have
    max_workgroup_invocations: int  # invocations (work-items) of one workgroup
    max_shared_memory: int  # bytes of workgroup (local) memory
    # Bytes of private (function-storage) arrays one thread of a launch may keep. Not a
    # device limit the APIs report: a driver spills such arrays to memory of its own, and
    # lavapipe computed a fused kernel with 13 KB of them per thread wrong without an
    # error (PoCL right). A launch over it is scheduled one op a dispatch, or refused
    # (``private_arrays.py``); a thread's register tiles take a few hundred bytes.
    max_private_memory: int = 4 << 10
    # Loop iterations one thread may run, all its loops together (None: no limit):
    # lavapipe ends a thread's loops after 65535, silently (``loop_budget.py``).
    max_loop_iterations: int | None = None
    # A matmul's workgroup: threads along its output's innermost dim, threads in all (each
    # thread ``matmul_rows`` x 4 or x 8 outputs). IREE's Mali configuration, 8x2; on lavapipe it
    # beat 16x2 and the 64x2 of the other kernels (codegen/gpu/schedule.py), and 8x1 (a
    # workgroup of one row of threads) ran as fast.
    matmul_threads: tuple = (8, 16)
    # Rows of a matmul's output one thread computes at most (4 columns each, K stepped by
    # 4; ``tilings.choose_tiling``). 4, IREE's Mali tile, is what real GPUs were measured
    # with (an H100, an H200; 16 rows by 8 columns is 128 accumulators a thread, too many for
    # a mobile GPU). On lavapipe (Mesa 22.3) every element a thread reads from a buffer is
    # a scalar load per SIMD lane, so the loads per FMA decide: 16 rows read 80 elements per
    # 256 FMAs where 4 rows read 32 per 64, and MobileBERT's FFN matmul kernels ran 1.4x
    # faster (the ``lavapipe`` profile of the Vulkan target).
    matmul_rows: int = 4
    # Attention kernels (scores, softmax, P V in one workgroup) with their scores staged in
    # shared memory once (not recomputed by the softmax's max and its exponentials), the
    # softmax's division deferred to the product's epilogue and P V register-tiled, K
    # stepped by 4, up to ``matmul_rows`` rows a thread, the staged loops over P V's threads
    # only (``tilings.attention_tiling``). On lavapipe MobileBERT's attention kernel ran
    # in about 0.7x the time, then 0.6x that with tall threads in a workgroup of 8; not
    # measured on a real GPU, so off by default.
    attention_tiles: bool = False
    # Storage buffers of vec4s read and written as 64-bit words, two per vec4 of 32-bit
    # elements, one per vec4 of f16 (``storage.py``; SPIR-V's Int64, the device's
    # shaderInt64). lavapipe (Mesa 22.3) loads a buffer one component at a time, a scalar
    # load per SIMD lane: two words take half the loads of four floats, one a quarter of
    # four halves. Off by default: a GPU loads a vec4 in one access.
    vec4_as_words64: bool = False
    # Convolutions' activations channel-blocked, NC4HW4, where ``--gpu-layout`` is auto
    # (``channel_blocks.py``). With pooling, concatenation and batch normalization blocked
    # too, every judged CNN measured took 0.27-0.94 of NCHW's GPU time on PoCL (OpenCL on
    # this CPU) and 0.64-0.97 on lavapipe; on an H200 (before those) SqueezeNet and
    # Inception v1 took 1.23-1.32x NCHW's time over OpenCL (blocked 3x3 convolutions
    # slower, plus the copies back to NCHW): the ``pocl`` and ``lavapipe`` profiles only.
    channel_blocks: bool = False
    # A LRN computed in the kernel of the pooling that reads it (``fusion/lrn_pools.py``),
    # again where the pooling's windows overlap: one dispatch less per LRN, at a cost in
    # time where a dispatch is cheap. Measured on ZFNet (medians of interleaved runs, GPU
    # time, NC4HW4): lavapipe 1.06x the time of the LRN in a kernel of its own, PoCL 1.09x
    # (the merged kernels 3.1x the LRN kernels'). On for lavapipe, where the dispatch
    # count is the measure (fewer than IREE's: ZFNet 12 against 14).
    lrn_in_pools: bool = False


@dataclass(frozen=True)
class GpuTarget(Target):
    """A GPU API's target: its ``kind`` and a device profile."""

    name: str
    device: GpuDevice

    @property
    def runs_here(self) -> bool:
        """A device is looked for when the code is loaded (by the API's runtime)."""
        return True

    @property
    def fusion_limits(self) -> FusionLimits:
        outputs = MAX_KERNEL_OUTPUTS
        return FusionLimits(max_inputs=self.device.max_storage_buffers - outputs, max_outputs=outputs,
                            max_live_values=MAX_LIVE_VALUES)

    @property
    def default_layout(self) -> str:
        return "nc4hw4" if self.device.channel_blocks else "nchw"

    @property
    def lrn_in_pools(self) -> bool:
        return self.device.lrn_in_pools

    def describe(self) -> str:
        return f"{self.name} ({self.device.name})"

    def missing_features(self) -> tuple:
        return ()

    def options(self) -> dict:
        return {"device": self.device.name}

    def cache_fields(self) -> dict:
        return {"target": self.name, "device": self.device.name}


def resolve_device(devices: dict, device: str | None, default: str, api: str) -> GpuDevice:
    """The profile named ``device`` (None: ``default``) among ``devices``; another name is a
    ``ValueError`` naming ``api`` and the known ones."""
    device = device or default
    if device not in devices:
        raise ValueError(f"unknown {api} device profile {device!r}; known: {', '.join(devices)}")
    return devices[device]


__all__ = ["GpuDevice", "GpuTarget", "resolve_device"]
