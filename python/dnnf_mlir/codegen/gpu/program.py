"""The dispatch plan of a model lowered for a GPU: buffers, kernels, dispatches in order.

An emitted module has its kernels as ``gpu.binary`` ops, its entry function on buffers
calling kernel functions, and each kernel function launching its kernels
(``gpu.launch_func``, which record the operands their kernel writes).
``dispatch_plan(module)`` walks the entry function once and resolves every
buffer a launch binds to one of the plan's buffers at a byte offset: an input or an
output of the model (the entry's arguments and out-parameters), a weight (the
arguments after the inputs, ``dnnf.weights``), a constant (a global the kernels read,
its bytes in the plan), or a scratch buffer (an allocation of the entry function, or
of a kernel function: one for all its calls), seen through views (reshapes, subviews). The plan puts a memory barrier before a dispatch exactly when it reads or
writes a range that a dispatch since the last barrier wrote, or writes one that such a
dispatch read. ``Program.text()`` is the plan the Vulkan runtime loads
(``runtime/vulkan/dnnf_vulkan.h``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ...kernel_functions import is_kernel, is_public
from ..errors import CodegenError
from ..linalg_queries import launch_sizes
from ..lowered_module import functions, signatures, symbol_name
from .device import WRITES_ATTR

WEIGHTS_ATTR = "dnnf.weights"  # the module's weight layout (compiler/weights.py)
BUFFER_ALIGNMENT = 16  # bytes every buffer size is rounded up to (vec4 and 32-bit emulated accesses)
VIEWS = ("memref.expand_shape", "memref.collapse_shape", "memref.subview", "memref.cast", "memref.reinterpret_cast")
REQUIRES_ATTR = "dnnf.gpu.requires"  # on each gpu.binary: the device features its kernel needs


@dataclass
class Buffer:
    id: int
    bytes: int
    kind: str  # input, output, weight, scratch, constant
    index: int = 0  # the input's or output's index; a weight's offset in the weights file
    data: bytes = b""  # a constant's bytes
    tensor_bytes: int = 0  # an input's or output's bytes in the caller's memory (``bytes`` is rounded up)


@dataclass(frozen=True)
class Binding:
    buffer: int
    offset: int
    range: int


@dataclass
class Kernel:
    """One compiled kernel: its code (SPIR-V; OpenCL C for OpenCL), entry point, workgroup
    size, and per binding whether it writes it."""

    name: str
    code: bytes
    entry: str
    workgroup_size: tuple
    writes: tuple  # per binding

    @property
    def bindings(self) -> int:
        return len(self.writes)


@dataclass
class Dispatch:
    kernel: int
    groups: tuple
    barrier: bool
    bindings: list
    function: str  # the kernel function it runs


@dataclass
class Program:
    buffers: list = field(default_factory=list)
    kernels: list = field(default_factory=list)
    dispatches: list = field(default_factory=list)
    requires: list = field(default_factory=list)

    def text(self, api: str = "vulkan") -> str:
        """The plan as ``api``'s runtime reads it (its first line names the API)."""
        lines = [f"dnnf-{api}-plan 1"]
        if self.requires:
            lines.append("require " + " ".join(self.requires))
        for b in self.buffers:
            detail = {"scratch": "", "constant": f" {b.data.hex()}", "weight": f" {b.index}"}.get(
                b.kind, f" {b.index} {b.tensor_bytes}")
            lines.append(f"buffer {b.id} {b.bytes} {b.kind}{detail}")
        for i, k in enumerate(self.kernels):
            x, y, z = k.workgroup_size
            lines.append(f"kernel {i} {i} {k.entry} {k.bindings} {x} {y} {z} {k.name}")
        for d in self.dispatches:
            x, y, z = d.groups
            bound = " ".join(f"{b.buffer}:{b.offset}:{b.range}" for b in d.bindings)
            lines.append(f"dispatch {d.kernel} {x} {y} {z} {int(d.barrier)} {bound}")
        return "\n".join(lines) + "\n"


def _bytes(memref_type) -> int:
    """The bytes a buffer of ``memref_type`` spans from its start to its last element
    (its layout's offset and strides: a column slice spans whole rows), in whole 32-bit
    words: the kernels read and write bytes (booleans) within the words holding them."""
    t = ir.MemRefType(memref_type)
    strides, offset = t.get_strides_and_offset()
    elements = offset + 1 + sum((n - 1) * stride for n, stride in zip(t.shape, strides)) if all(t.shape) else 0
    return -(-elements * _element_bytes(t) // 4) * 4


def _tensor_bytes(memref_type) -> int:
    """The bytes of a tensor of ``memref_type`` in the caller's memory."""
    t = ir.MemRefType(memref_type)
    return math.prod(t.shape) * _element_bytes(t)


def _element_bytes(t: ir.MemRefType) -> int:
    """An element's bytes (a boolean's: one)."""
    return max(8, t.element_type.width if hasattr(t.element_type, "width") else 32) // 8


def _rounded(n: int) -> int:
    return -(-n // BUFFER_ALIGNMENT) * BUFFER_ALIGNMENT


def required_features(module: ir.Module) -> list:
    """The device features the module's kernels need (``REQUIRES_ATTR`` of its binaries)."""
    features = set()
    for binary in walk_ops(module.operation, {"gpu.binary"}):
        if REQUIRES_ATTR in binary.attributes:
            features.update(ir.StringAttr(f).value for f in ir.ArrayAttr(binary.attributes[REQUIRES_ATTR]))
    return sorted(features)


def _view_offset(op) -> int:
    """The byte offset of a view into its source (static offsets only); a
    ``memref.reinterpret_cast`` starts its binding its own offset before its source's
    start (``mapping._rebase_views``)."""
    if op.name == "memref.reinterpret_cast":
        (offset,) = list(ir.DenseI64ArrayAttr(op.attributes["static_offsets"]))
        element = ir.MemRefType(op.results[0].type).element_type
        return -offset * max(8, element.width if hasattr(element, "width") else 32) // 8
    if op.name != "memref.subview":
        return 0
    source = ir.MemRefType(op.operands[0].type)
    strides, _ = source.get_strides_and_offset()
    offsets = list(ir.DenseI64ArrayAttr(op.attributes["static_offsets"]))
    if any(o == ir.ShapedType.get_dynamic_size() for o in offsets):
        raise CodegenError(f"a dynamic subview between kernels ({op})")
    width = source.element_type.width if hasattr(source.element_type, "width") else 32
    return sum(o * s for o, s in zip(offsets, strides)) * max(8, width) // 8


class _Planner:
    def __init__(self, module: ir.Module):
        self.module = module
        self.program = Program()
        self.kernel_ids = {}  # gpu.binary -> kernel id
        self.location = {}  # entry value -> (buffer id, byte offset)
        self.written, self.read = [], []  # bindings since the last barrier
        self.constants = {}  # global name -> buffer id
        self.scratch = {}  # (kernel function, its allocation) -> buffer id
        self.binaries = {symbol_name(op): op for op in walk_ops(module.operation, {"gpu.binary"})}
        self.kernel_functions = {symbol_name(f): f for f in functions(module) if is_kernel(f.operation)}

    def add_buffer(self, nbytes: int, kind: str, index: int = 0, data: bytes = b"", tensor_bytes: int = 0) -> int:
        buffer = Buffer(len(self.program.buffers), _rounded(nbytes), kind, index, data, tensor_bytes)
        self.program.buffers.append(buffer)
        return buffer.id

    def add_argument(self, memref_type, kind: str, index: int) -> int:
        """The buffer of the entry's input or output ``index``: the kernels' words of it."""
        return self.add_buffer(_bytes(memref_type), kind, index, tensor_bytes=_tensor_bytes(memref_type))

    def constant(self, name: str) -> int:
        """The buffer of the global ``name`` (one per global, its bytes in the plan)."""
        if name not in self.constants:
            (global_op,) = [op.operation for op in self.module.body.operations
                            if op.operation.name == "memref.global" and symbol_name(op) == name]
            value = np.asarray(global_op.attributes["initial_value"])
            data = value.astype(np.uint8).tobytes() if value.dtype == np.bool_ else value.tobytes()
            self.constants[name] = self.add_buffer(len(data), "constant", data=data)
        return self.constants[name]

    def resolve(self, value, frame: dict) -> tuple:
        """(buffer, byte offset) of a value of the entry function, or of a kernel
        function called with ``frame`` (its arguments -> the caller's (buffer, offset))."""
        if value in frame:
            return frame[value]
        if value in self.location:
            return self.location[value]
        owner = value.owner.operation if isinstance(value, ir.OpResult) else None
        if owner is not None and owner.name == "memref.get_global":
            return (self.constant(ir.FlatSymbolRefAttr(owner.attributes["name"]).value), 0)
        if owner is not None and owner.name == "memref.alloc":
            function = owner.parent
            key = (symbol_name(function) if is_kernel(function) else "", owner)
            if key not in self.scratch:  # a kernel function's own: one for all its calls
                self.scratch[key] = self.add_buffer(_bytes(value.type), "scratch")
            return (self.scratch[key], 0)
        if owner is not None and owner.name in VIEWS:
            buffer, offset = self.resolve(owner.operands[0], frame)
            return (buffer, offset + _view_offset(owner))
        raise CodegenError(f"a buffer between kernels that is not an argument, an allocation or a view: {value}")

    def call(self, call):
        """The dispatches of one call of a kernel function: one per launch, in order."""
        callee = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
        if callee not in self.kernel_functions:
            raise CodegenError(f"the entry function calls {callee}, which is not a GPU kernel")
        function = self.kernel_functions[callee]
        frame = {argument: self.resolve(value, {}) for argument, value in
                 zip(function.regions[0].blocks[0].arguments, call.operands)}
        for launch in walk_ops(function.operation, {"gpu.launch_func"}):
            self.launch(launch, frame, callee)

    def launch(self, launch, frame: dict, function: str):
        binary_name, entry = ir.SymbolRefAttr(launch.attributes["kernel"]).value
        operands = list(launch.operands)
        groups, size = launch_sizes(launch)
        writes = tuple(ir.BoolAttr(w).value for w in ir.ArrayAttr(launch.attributes[WRITES_ATTR]))
        if binary_name not in self.kernel_ids:
            self.kernel_ids[binary_name] = len(self.program.kernels)
            objects = ir.ArrayAttr(self.binaries[binary_name].attributes["objects"])
            binary = bytes(_mlir.gpu.ObjectAttr(objects[0]).object)
            self.program.kernels.append(Kernel(binary_name, binary, entry, size, writes))
        bindings = []
        for value in operands[6:]:
            buffer, offset = self.resolve(value, frame)
            bindings.append(Binding(buffer, offset, _bytes(value.type)))
        written = [b for b, w in zip(bindings, writes) if w]
        read = [b for b, w in zip(bindings, writes) if not w]
        barrier = any(_overlaps(b, self.written) for b in bindings) or any(_overlaps(b, self.read) for b in written)
        if barrier:
            self.written, self.read = [], []
        self.written += written
        self.read += read
        self.program.dispatches.append(Dispatch(self.kernel_ids[binary_name], groups, barrier, bindings, function))


def _overlaps(binding: Binding, others) -> bool:
    return any(o.buffer == binding.buffer and o.offset < binding.offset + binding.range and
               binding.offset < o.offset + o.range for o in others)


def dispatch_plan(module: ir.Module) -> Program:
    """The ``Program`` of an emitted ``module`` (see the module docstring): its public
    function's arguments are the model's inputs, the weights (``WEIGHTS_ATTR``), then
    the out-parameters (its results before bufferization, ``lowered_module.signatures``)."""
    entries = [f for f in functions(module) if is_public(f.operation) and not is_kernel(f.operation)]
    if len(entries) != 1:
        raise CodegenError(f"expected one public function, found {len(entries)}")
    entry = entries[0]
    planner = _Planner(module)
    weights = [json.loads(ir.StringAttr(w).value) for w in ir.ArrayAttr(module.operation.attributes[WEIGHTS_ATTR])] \
        if WEIGHTS_ATTR in module.operation.attributes else []
    arguments = entry.regions[0].blocks[0].arguments
    inputs = len(arguments) - len(weights) - len(signatures(module)[symbol_name(entry)][1])
    for index, argument in enumerate(arguments):
        if index < inputs:
            planner.location[argument] = (planner.add_argument(argument.type, "input", index), 0)
        elif index < inputs + len(weights):
            weight = weights[index - inputs]
            nbytes = math.prod(weight["shape"]) * np.dtype(weight["dtype"]).itemsize
            planner.location[argument] = (planner.add_buffer(nbytes, "weight", weight["offset"]), 0)
        else:
            planner.location[argument] = (planner.add_argument(argument.type, "output", index - inputs - len(weights)), 0)
    for op in entry.regions[0].blocks[0].operations:
        op = op.operation
        if op.name == "func.call":
            planner.call(op)
        elif op.name not in ("memref.alloc", "memref.dealloc", "memref.get_global", "func.return", "arith.constant") + VIEWS:
            raise CodegenError(f"the entry function does {op.name} between its kernels, which no GPU kernel does")
    planner.program.requires = required_features(module)
    return planner.program


__all__ = ["Binding", "Buffer", "Dispatch", "Kernel", "Program", "dispatch_plan"]
