"""The device code of a mapped module, kernel by kernel: what every GPU API's compiler
takes from it.

``device_kernels(module)`` finds in each kernel function its one ``gpu.launch_func``
(its workgroup counts and size, and which argument of the kernel function each launch
operand is), moves the outlined ``gpu.module`` into a module of its own, and brings its
code to where an API's conversion starts (``lowering/gpu/device.pipeline``, the vector
lowering of ``lowering/gpu/vector-lowering.mlir``, vec4 storage buffers and scalar
accesses elsewhere, ``storage.py``). A ``DeviceKernel`` also says which of its bindings
the kernel writes, for the dispatch plan's barriers.
"""

from __future__ import annotations

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


@dataclass
class DeviceKernel:
    function: str  # the kernel function
    module: ir.Module  # its gpu.module alone, ready for an API's conversion
    entry: str  # the gpu.func
    groups: tuple  # workgroups (x, y, z)
    workgroup_size: tuple
    arguments: list  # per binding: the kernel function's argument it is
    writes: tuple  # per binding: whether the kernel writes it
    vec4: tuple  # bindings accessed as vec4


def _constant(value) -> int:
    owner = value.owner if isinstance(value, ir.OpResult) else None
    if owner is None or owner.name != "arith.constant":
        raise CodegenError("a launch of dynamic size")
    return ir.IntegerAttr(owner.attributes["value"]).value


def _argument_of(value, block) -> int:
    """The index of the kernel function's argument that ``value`` is (seen through reshapes)."""
    while isinstance(value, ir.OpResult) and value.owner.name in VIEWS:
        value = value.owner.operands[0]
    if isinstance(value, ir.BlockArgument) and value.owner == block:
        return value.arg_number
    raise CodegenError(f"a launch binds {value}, which is not an argument of its kernel function")


def _written(function) -> tuple:
    """Per argument of a ``gpu.func``: whether any access writes it."""
    written = set()
    for op in walk_ops(function, set(STORES)):
        target = op.operands[1]  # the buffer written, for each of STORES
        while isinstance(target, ir.OpResult) and len(target.owner.operands):
            target = target.owner.operands[0]
        written.add(target)
    return tuple(argument in written for argument in function.regions[0].blocks[0].arguments)


def device_kernels(module: ir.Module) -> list:
    """One ``DeviceKernel`` per kernel function of a mapped ``module`` (which keeps its
    host side; its ``gpu.module``s move out)."""
    gpu_modules = {symbol_name(op.operation): op.operation for op in module.body.operations
                   if op.operation.name == "gpu.module"}
    kernels = []
    for function in functions(module):
        if not is_kernel(function.operation):
            continue
        name = symbol_name(function)
        body = function.regions[0].blocks[0]
        launches = walk_ops(function.operation, {"gpu.launch_func"})
        others = [op.operation.name for op in body.operations
                  if op.operation.name not in ("gpu.launch_func", "func.return", "arith.constant", "memref.dealloc") + VIEWS]
        if len(launches) != 1 or others:
            raise CodegenError(f"kernel {name} is not one dispatch: {len(launches)} launches, and {sorted(set(others))}")
        launch = launches[0]
        operands = list(launch.operands)
        groups = tuple(_constant(v) for v in operands[0:3])
        size = tuple(_constant(v) for v in operands[3:6])
        arguments = [_argument_of(v, body) for v in operands[6:]]
        module_name, entry = ir.SymbolRefAttr(launch.attributes["kernel"]).value
        device = ir.Module.create()
        device.operation.attributes["gpu.container_module"] = ir.UnitAttr.get()
        device.body.append(gpu_modules[module_name])
        kernels.append((name, device, entry, groups, size, arguments))
    result = []
    for name, device, entry, groups, size, arguments in kernels:
        run_pipeline(read_pipeline("gpu/device.pipeline"), device)
        apply_script(device, read_transform_library("gpu/vector-lowering.mlir"), "__dnnf_gpu_lower_vectors",
                     f"lowering the vectors of kernel {name}")
        run_passes("canonicalize,cse,lower-affine,canonicalize,cse", device)
        gpu_module = next(op.operation for op in device.body.operations)
        vec4 = vectorize_storage(gpu_module)
        run_passes("canonicalize,cse", device)
        function = walk_ops(gpu_module, {"gpu.func"})[0]
        result.append(DeviceKernel(name, device, entry, groups, size, arguments, _written(function),
                                   tuple(vec4.get(entry, ()))))
    return result


__all__ = ["DeviceKernel", "device_kernels"]
