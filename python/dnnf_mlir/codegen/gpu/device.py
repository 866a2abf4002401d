"""The device code of a mapped module, kernel by kernel: what every GPU API's compiler
takes from it.

``device_kernels(module)`` finds in each kernel function its ``gpu.launch_func``s (one;
several, in order, for a kernel scheduled one op at a time), each one's workgroup
counts and size, and what each launch operand is: an argument of the kernel function
or a buffer it allocates itself (which the dispatch plan makes a scratch buffer); it
moves each outlined ``gpu.module`` into a module of its own and brings its code to
where an API's conversion starts (``lowering/gpu/device.pipeline``, the vector
lowering of ``lowering/gpu/vector-lowering.mlir``, vec4 storage buffers and scalar
accesses elsewhere, ``storage.py``). A ``DeviceKernel`` also says which of its bindings
the kernel writes, for the dispatch plan's barriers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..._mlir import ir
from ...kernel_functions import is_kernel
from ...lowering import read_pipeline, read_transform_library
from ..errors import CodegenError
from ..lowered_module import functions, symbol_name, walk_ops
from ..passes import apply_script, run_passes, run_pipeline
from .storage import vectorize_storage

STORES = ("memref.store", "vector.store", "vector.transfer_write", "memref.copy")
VIEWS = ("memref.expand_shape", "memref.collapse_shape", "memref.cast")
# what a kernel function may do besides its launches: nothing that computes
HOST_OPS = ("gpu.launch_func", "func.return", "arith.constant", "memref.alloc", "memref.dealloc",
            "memref.get_global", "memref.subview", "memref.reinterpret_cast") + VIEWS


@dataclass
class DeviceKernel:
    """One launch: its ``gpu.module``, alone, ready for an API's conversion."""

    function: str  # the kernel function launching it
    module: ir.Module
    name: str  # its gpu.module's (unique in the model)
    entry: str  # the gpu.func
    groups: tuple  # workgroups (x, y, z)
    workgroup_size: tuple
    bindings: list  # per binding: (what, which, byte offset, bytes): ("argument", i) of the kernel function,
    #                 ("scratch", j) of its own buffers, or ("constant", global) it reads
    writes: tuple  # per binding: whether the kernel writes it
    vec4: tuple  # bindings accessed as vec4


@dataclass
class KernelFunction:
    """A kernel function's launches, in order (one, unless it is scheduled one op at a
    time), and the buffers it allocates itself (bytes each), which hold the values
    between those launches."""

    name: str
    launches: list
    scratch: list


def _constant(value) -> int:
    owner = value.owner.operation if isinstance(value, ir.OpResult) else None
    if owner is None or owner.name != "arith.constant":
        raise CodegenError("a launch of dynamic size")
    return ir.IntegerAttr(owner.attributes["value"]).value


def _view_offset(view) -> int:
    """The byte offset of a static ``memref.subview`` into its source."""
    source = ir.MemRefType(view.operands[0].type)
    strides, _ = source.get_strides_and_offset()
    offsets = list(ir.DenseI64ArrayAttr(view.attributes["static_offsets"]))
    if ir.ShapedType.get_dynamic_size() in offsets:
        raise CodegenError(f"a launch binds a view at a dynamic offset ({view})")
    width = source.element_type.width if hasattr(source.element_type, "width") else 32
    return sum(o * s for o, s in zip(offsets, strides)) * max(8, width) // 8


def _binding(value, block, allocations: list) -> tuple:
    """What a launch operand is: ("argument", i, byte offset, bytes) of the kernel
    function, ("scratch", j, 0, bytes), one of its own allocations, or ("constant",
    global, 0, bytes) (seen through reshapes; a subview, ``mapping._rebase_views``, at
    its offset)."""
    nbytes = _memref_bytes(value.type)
    offset = 0
    while isinstance(value, ir.OpResult) and value.owner.operation.name in VIEWS + ("memref.reinterpret_cast", "memref.subview"):
        if value.owner.operation.name == "memref.subview":
            offset += _view_offset(value.owner.operation)
        value = value.owner.operation.operands[0]
    if isinstance(value, ir.BlockArgument) and value.owner == block:
        return ("argument", value.arg_number, offset, nbytes)
    owner = value.owner.operation if isinstance(value, ir.OpResult) else None
    if owner is not None and owner.name == "memref.alloc" and owner.parent.name == "func.func":
        if owner not in allocations:
            allocations.append(owner)
        return ("scratch", allocations.index(owner), offset, nbytes)
    if owner is not None and owner.name == "memref.get_global":
        return ("constant", ir.FlatSymbolRefAttr(owner.attributes["name"]).value, offset, nbytes)
    raise CodegenError(f"a launch binds {value}, which is neither an argument nor a buffer of its kernel function")


def _written(function) -> tuple:
    """Per argument of a ``gpu.func``: whether any access writes it."""
    written = set()
    for op in walk_ops(function, set(STORES)):
        target = op.operands[1]  # the buffer written, for each of STORES
        while isinstance(target, ir.OpResult) and len(target.owner.operands):
            target = target.owner.operands[0]
        written.add(target)
    return tuple(argument in written for argument in function.regions[0].blocks[0].arguments)


def _memref_bytes(memref_type) -> int:
    memref = ir.MemRefType(memref_type)
    width = memref.element_type.width if hasattr(memref.element_type, "width") else 32
    return math.prod(memref.shape) * max(8, width) // 8


def _compile_device_module(device: ir.Module, name: str) -> tuple:
    run_pipeline(read_pipeline("gpu/device.pipeline"), device)
    apply_script(device, read_transform_library("gpu/vector-lowering.mlir"), "__dnnf_gpu_lower_vectors",
                 f"lowering the vectors of kernel {name}")
    run_passes("canonicalize,cse,lower-affine,canonicalize,cse", device)
    gpu_module = next(op.operation for op in device.body.operations)
    vec4 = vectorize_storage(gpu_module)
    run_passes("canonicalize,cse", device)
    return gpu_module, vec4


def device_kernels(module: ir.Module) -> list:
    """One ``KernelFunction`` per kernel function of a mapped ``module`` (which keeps its
    host side; its ``gpu.module``s move out)."""
    gpu_modules = {symbol_name(op.operation): op.operation for op in module.body.operations
                   if op.operation.name == "gpu.module"}
    result = []
    for function in functions(module):
        if not is_kernel(function.operation):
            continue
        name = symbol_name(function)
        body = function.regions[0].blocks[0]
        others = [op.operation.name for op in body.operations if op.operation.name not in HOST_OPS]
        if others:
            raise CodegenError(f"kernel {name} does work outside its dispatches: {sorted(set(others))}")
        allocations, launches = [], []
        for launch in walk_ops(function.operation, {"gpu.launch_func"}):
            operands = list(launch.operands)
            module_name, entry = ir.SymbolRefAttr(launch.attributes["kernel"]).value
            device = ir.Module.create()
            device.operation.attributes["gpu.container_module"] = ir.UnitAttr.get()
            device.body.append(gpu_modules[module_name])
            launches.append(DeviceKernel(
                name, device, module_name, entry, tuple(_constant(v) for v in operands[0:3]), tuple(_constant(v) for v in operands[3:6]),
                [_binding(v, body, allocations) for v in operands[6:]], (), ()))
        for kernel in launches:
            gpu_module, vec4 = _compile_device_module(kernel.module, name)
            kernel.writes = _written(walk_ops(gpu_module, {"gpu.func"})[0])
            kernel.vec4 = tuple(vec4.get(kernel.entry, ()))
        result.append(KernelFunction(name, launches, [_memref_bytes(a.results[0].type) for a in allocations]))
    return result


__all__ = ["DeviceKernel", "KernelFunction", "device_kernels"]
