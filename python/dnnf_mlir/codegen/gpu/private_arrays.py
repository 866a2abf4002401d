"""A bound on the private arrays a thread of a launch keeps.

Buffers a launch allocates per thread (``mapping.py``: a thread's tiles the registers do
not hold, in SPIR-V Function storage, OpenCL private memory) cost each thread that many
bytes; a driver spills large ones to memory of its own, and lavapipe once computed a
fused kernel with 13 KB of them per thread wrong, with no error. ``check_private_arrays``
refuses a launch over the device profile's ``max_private_memory`` with a ``CodegenError``,
which ``lower.compile_kernels`` answers by scheduling the kernel one op a dispatch (the
values between the ops in buffers), or, when that is over too, by an error naming it.
"""

from __future__ import annotations

from ..._mlir import ir
from ...ir_walk import walk_ops
from ..errors import CodegenError
from .mapping import buffer_bytes


def private_bytes(launch) -> int:
    """The bytes of the private arrays (``memref.alloca``) one thread of ``launch`` keeps,
    in all its groups' branches together (a SPIR-V function declares them all)."""
    return sum(buffer_bytes(ir.MemRefType(op.results[0].type)) for op in walk_ops(launch, {"memref.alloca"}))


def check_private_arrays(function, name: str, device):
    """A ``CodegenError`` naming kernel ``name`` when a launch of the compiled ``function``
    keeps more bytes of private arrays per thread than ``device`` allows."""
    for launch in walk_ops(function, {"gpu.launch"}):
        nbytes = private_bytes(launch)
        if nbytes > device.max_private_memory:
            raise CodegenError(f"kernel {name} keeps {nbytes} bytes of private arrays per thread in a launch; the "
                               f"device profile {device.name} allows {device.max_private_memory}")


__all__ = ["check_private_arrays", "private_bytes"]
