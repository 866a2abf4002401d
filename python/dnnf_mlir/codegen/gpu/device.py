"""The device code of a mapped module: what every GPU API's compiler takes from it.

``lower_device_code(module)`` brings the outlined ``gpu.module``s to where an API's
conversion starts (what stayed linalg as loops, views folded, vectors as SPIR-V takes
them) and records on each ``gpu.launch_func`` which operands its kernel writes (the
dispatch plan's barriers); a kernel function that does more than launch its kernels is
an error; ``check_bindings`` holds the launches to a device's limits.
``emit_binaries(module, convert)`` gives each ``gpu.module`` vec4 storage
buffers where it can (``storage.py``), then replaces it by the ``gpu.binary`` an API's
``convert`` makes of it.
"""

from __future__ import annotations

import math

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ...kernel_functions import is_kernel
from ...lowering import read_pipeline, read_transform_library
from ..errors import CodegenError
from ..lowered_module import functions, symbol_name
from ..passes import apply_script, run_passes, run_pipeline
from .storage import vectorize_storage
from .unrolling import split_private_arrays, unroll_private_array_loops

STORES = ("memref.store", "vector.store", "vector.transfer_write", "memref.copy")
VIEWS = ("memref.expand_shape", "memref.collapse_shape", "memref.cast")
# what a kernel function may do besides its launches: nothing that computes
HOST_OPS = ("gpu.launch_func", "func.return", "arith.constant", "memref.alloc", "memref.dealloc",
            "memref.get_global", "memref.subview", "memref.reinterpret_cast") + VIEWS


WRITES_ATTR = "dnnf.gpu.writes"  # on each gpu.launch_func: per operand, whether the kernel writes it


def _written(function) -> list:
    """Per argument of a ``gpu.func``: whether any access writes it."""
    written = set()
    for op in walk_ops(function, set(STORES)):
        target = op.operands[1]  # the buffer written, for each of STORES
        while isinstance(target, ir.OpResult) and len(target.owner.operands):
            target = target.owner.operands[0]
        written.add(target)
    return [argument in written for argument in function.regions[0].blocks[0].arguments]


def check_host_side(module: ir.Module):
    """Every kernel function must do nothing but launch its kernels."""
    for function in functions(module):
        if not is_kernel(function.operation):
            continue
        others = {op.operation.name for op in function.regions[0].blocks[0].operations} - set(HOST_OPS)
        if others:
            raise CodegenError(f"kernel {symbol_name(function)} does work outside its dispatches: {sorted(others)}")


def fuse_multiply_adds(module: ir.Module) -> int:
    """``a * b + c`` -> ``math.fma(a, b, c)`` in the kernels, where the product has no
    other use: one rounding, as the CPU code and onnxruntime accumulate (a sum over
    25088 products, VGG's first fully-connected layer, drifts past the checks'
    tolerance with two), and one instruction. Returns how many."""
    fused = 0
    for add in walk_ops(module.operation, {"arith.addf"}):
        if not _inside_kernel(add):
            continue
        for index, value in enumerate(add.operands):
            product = value.owner if isinstance(value, ir.OpResult) else None
            if product is None or product.name != "arith.mulf" or len(list(value.uses)) != 1:
                continue
            with ir.InsertionPoint(add), add.location:
                fma = _mlir.math.fma(product.operands[0], product.operands[1], add.operands[1 - index])
            add.results[0].replace_all_uses_with(fma)
            add.erase()
            product.erase()
            fused += 1
            break
    return fused


def _inside_kernel(op) -> bool:
    parent = op.parent
    while parent is not None and parent.name != "gpu.func":
        parent = parent.parent
    return parent is not None


def lower_device_code(module: ir.Module):
    """Bring every outlined ``gpu.module`` of ``module`` to where an API's conversion
    starts (``lowering/gpu/device.pipeline``, ``lowering/gpu/vector-lowering.mlir``),
    and record on each launch which of its operands it writes (``WRITES_ATTR``)."""
    check_host_side(module)
    run_pipeline(read_pipeline("gpu/device.pipeline"), module)
    unroll_private_array_loops(module)
    fuse_multiply_adds(module)
    apply_script(module, read_transform_library("gpu/vector-lowering.mlir"), "__dnnf_gpu_lower_vectors",
                 "lowering the kernels' vectors")
    run_passes("canonicalize,cse,lower-affine,canonicalize,cse", module)
    kernels = {}
    for gpu_module in walk_ops(module.operation, {"gpu.module"}):
        for function in walk_ops(gpu_module, {"gpu.func"}):
            kernels[(symbol_name(gpu_module), symbol_name(function))] = _written(function)
    for launch in walk_ops(module.operation, {"gpu.launch_func"}):
        written = kernels[tuple(ir.SymbolRefAttr(launch.attributes["kernel"]).value)]
        launch.attributes[WRITES_ATTR] = ir.ArrayAttr.get([ir.BoolAttr.get(w) for w in written])


def check_bindings(module: ir.Module, max_bindings: int, max_binding_bytes: int):
    """Every launch binds at most ``max_bindings`` buffers of at most
    ``max_binding_bytes`` each (a device's limits): a ``CodegenError`` names the kernel
    function of one that does not."""
    for launch in walk_ops(module.operation, {"gpu.launch_func"}):
        buffers = [v for v in list(launch.operands)[6:] if isinstance(v.type, ir.MemRefType)]
        function = symbol_name(launch.parent)
        if len(buffers) > max_bindings:
            raise CodegenError(f"kernel {function} binds {len(buffers)} buffers in one dispatch; the device "
                               f"allows {max_bindings}")
        for value in buffers:
            t = ir.MemRefType(value.type)
            nbytes = math.prod(t.shape) * max(8, t.element_type.width) // 8
            if nbytes > max_binding_bytes:
                raise CodegenError(f"kernel {function} binds a buffer of {nbytes} bytes ({t}); the device allows "
                                   f"{max_binding_bytes} per binding")


def emit_binaries(module: ir.Module, convert, words64: bool = False) -> dict:
    """Replace every ``gpu.module`` of ``module`` by the ``gpu.binary`` that ``convert``
    makes of it (given a module holding only it, after ``storage.vectorize_storage``,
    its vec4s as 64-bit words where ``words64``):
    the kernels leave the host's type checks, whose vec4 buffers their launches do not
    know. Returns {gpu.module: its vec4 bindings}."""
    vec4 = {}
    for gpu_module in walk_ops(module.operation, {"gpu.module"}):
        name = symbol_name(gpu_module)
        after = _next_op(gpu_module)
        device = ir.Module.create()
        device.operation.attributes["gpu.container_module"] = ir.UnitAttr.get()
        device.body.append(gpu_module)
        vec4[name] = sorted(set().union(*map(set, vectorize_storage(gpu_module, words64).values())))
        split_private_arrays(device)
        run_passes("canonicalize,cse", device)
        convert(device, name)
        (binary,) = walk_ops(device.operation, {"gpu.binary"})
        if after is not None:
            binary.move_before(after)
        else:
            module.body.append(binary)
    return vec4


def _next_op(op):
    ops = [o.operation for o in op.block.operations]
    index = ops.index(op)
    return ops[index + 1] if index + 1 < len(ops) else None


__all__ = ["HOST_OPS", "WRITES_ATTR", "check_bindings", "check_host_side", "emit_binaries", "lower_device_code"]
