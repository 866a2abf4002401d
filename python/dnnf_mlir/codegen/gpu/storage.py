"""Memory accesses as SPIR-V's logical addressing takes them: storage buffers of vec4
where every access allows, scalars elsewhere.

``vector.load`` of a ``vector<4xf32>`` from a ``memref<...xf32>`` lowers to a pointer
bitcast, which Vulkan's logical addressing forbids (``spirv-val``: "not a logical
pointer"; lavapipe runs it, a phone driver need not). As IREE does, a kernel's buffer
argument that is only read and written a whole, aligned vec4 at a time (scalar reads
allowed) becomes a 1-d ``memref<N/4 x vector<4xf32>>``, N the elements its layout
spans (``vectorize_storage``): each access indexes its vec4 (``i / 4``, i from the
layout's strides), a scalar read extracts its lane. Every other
vector access, to such a buffer or to a thread's private array, is split into scalar
loads and stores (``scalarize``), which drivers combine again.

With ``words64`` (a device profile's ``vec4_as_words64``), a vec4 is kept as 64-bit
words, ``memref<N/4 x vector<2xi64>>`` for 32-bit elements and ``memref<N/4 x
vector<1xi64>>`` (one word) for f16, each access bitcast: lavapipe loads a buffer
element by element, a scalar load per SIMD lane each, so two words take half the loads
of four floats (MobileBERT's FFN matmul kernels ran in about 0.85x the time, its whole
GPU time about 0.87x) and one word a quarter of four halves.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ...linalg_builders import index_constant
from ..linalg_queries import constant_index

VEC4 = 4
VECTOR_ACCESSES = ("vector.load", "vector.store")
ACCESSES = VECTOR_ACCESSES + ("memref.load", "memref.store")


def _multiple_of(value, factor: int, seen=None) -> bool:
    """Whether the index ``value`` is provably a multiple of ``factor``: constants,
    products with such a constant, sums of such terms, loop variables starting at and
    stepping by multiples."""
    constant = constant_index(value)
    if constant is not None:
        return constant % factor == 0
    seen = seen if seen is not None else set()
    if isinstance(value, ir.BlockArgument):
        loop = value.owner.owner
        if loop.name == "scf.for" and value.arg_number == 0:
            lower, _, step = list(loop.operands)[:3]
            return _multiple_of(lower, factor, seen) and _multiple_of(step, factor, seen)
        return False
    op = value.owner
    if op in seen:
        return False
    seen.add(op)
    if op.name == "arith.muli":
        return any(_multiple_of(v, factor, seen) for v in op.operands)
    if op.name in ("arith.addi", "arith.subi"):
        return all(_multiple_of(v, factor, seen) for v in op.operands)
    return False


def _layout(memref: ir.MemRefType) -> tuple:
    """(strides, offset, elements spanned) of ``memref``'s layout."""
    strides, offset = memref.get_strides_and_offset()
    return strides, offset, 1 + sum((n - 1) * stride for n, stride in zip(memref.shape, strides))


def _linear_index(indices, strides):
    """``sum(index_i * stride_i)`` as arith ops at the insertion point."""
    arith = _mlir.arith
    total = None
    for index, stride in zip(indices, strides):
        term = index if stride == 1 else arith.muli(index, index_constant(stride))
        total = term if total is None else arith.addi(total, term)
    return total if total is not None else index_constant(0)


def _vector_type(op):
    value = op.results[0] if op.name == "vector.load" else op.operands[0]
    return ir.VectorType(value.type)


def _is_aligned_vec4(op, strides) -> bool:
    """A vector access of exactly one aligned vec4 (its linear index a multiple of 4)."""
    vector = _vector_type(op)
    if vector.rank != 1 or vector.shape[0] != VEC4:
        return False
    first = 1 if op.name == "vector.load" else 2
    indices = list(op.operands)[first:]
    return all(stride % VEC4 == 0 or _multiple_of(index, VEC4) for index, stride in zip(indices, strides))


def _vec4_candidate(argument) -> bool:
    memref = ir.MemRefType(argument.type)
    if not memref.has_static_shape or memref.memory_space is not None:
        return False
    strides, offset, span = _layout(memref)
    if offset != 0 or span % VEC4 or strides[-1:] not in ([], [1]):
        return False
    if not (isinstance(memref.element_type, (ir.F32Type, ir.F16Type)) or
            isinstance(memref.element_type, ir.IntegerType) and ir.IntegerType(memref.element_type).width == 32):
        return False
    uses = [use.owner for use in argument.uses]
    if not uses or any(op.name not in ACCESSES for op in uses):
        return False
    if any(op.name == "memref.store" for op in uses):
        return False  # a scalar write would be a read-modify-write of a vec4 another thread may write
    vectors = [op for op in uses if op.name in VECTOR_ACCESSES]
    return bool(vectors) and all(_is_aligned_vec4(op, strides) for op in vectors)


def _to_vec4(function, argument, words64: bool):
    """Make ``argument`` a 1-d memref of vec4 (of the 64-bit words that hold one where
    ``words64``) and rewrite its accesses."""
    arith, memref, vector = _mlir.arith, _mlir.memref, _mlir.vector
    old = ir.MemRefType(argument.type)
    strides, _, span = _layout(old)
    vec4 = ir.VectorType.get([VEC4], old.element_type)
    stored = vec4
    if words64:  # f32, i32 or f16 (``_vec4_candidate``): 128 or 64 bits
        words = 1 if isinstance(old.element_type, ir.F16Type) else 2
        stored = ir.VectorType.get([words], ir.IntegerType.get_signless(64))
    argument.set_type(ir.MemRefType.get([span // VEC4], stored))

    def load(quad):
        value = memref.load(argument, [quad])
        return value if stored == vec4 else vector.bitcast(vec4, value)

    for use in list(argument.uses):
        op = use.owner
        with ir.InsertionPoint(op), op.location:
            first = 1 if op.name in ("vector.load", "memref.load") else 2
            linear = _linear_index(list(op.operands)[first:], strides)
            quad = arith.divui(linear, index_constant(VEC4))
            if op.name == "vector.load":
                op.results[0].replace_all_uses_with(load(quad))
            elif op.name == "vector.store":
                value = op.operands[0]
                memref.store(value if stored == vec4 else vector.bitcast(stored, value), argument, [quad])
            else:  # a scalar read: its lane of the vec4
                lane = arith.remui(linear, index_constant(VEC4))
                dynamic = [ir.ShapedType.get_dynamic_size()]
                op.results[0].replace_all_uses_with(vector.extract(load(quad), [lane], dynamic))
        op.erase()
    function_type = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
    inputs = [a.type for a in function.regions[0].blocks[0].arguments]
    function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, list(function_type.results)))


def _scalarize(op):
    """A 0-d or 1-d ``vector.load`` / ``vector.store`` -> scalar loads / stores."""
    arith, memref, vector = _mlir.arith, _mlir.memref, _mlir.vector
    vector_type = _vector_type(op)
    base = op.operands[1] if op.name == "vector.store" else op.operands[0]
    first = 2 if op.name == "vector.store" else 1
    indices = list(op.operands)[first:]
    lanes = vector_type.shape[0] if vector_type.rank else 1
    with ir.InsertionPoint(op), op.location:
        addresses = []
        for lane in range(lanes):
            at = list(indices)
            if lane:
                at[-1] = arith.addi(at[-1], index_constant(lane))
            addresses.append(at)
        if op.name == "vector.load":
            scalars = [memref.load(base, at) for at in addresses]
            if vector_type.rank == 0:
                loaded = vector.broadcast(vector_type, scalars[0])
            else:
                loaded = vector.from_elements(vector_type, scalars)
            op.results[0].replace_all_uses_with(loaded)
        else:
            value = op.operands[0]
            for lane, at in enumerate(addresses):
                scalar = vector.extract(value, [], []) if vector_type.rank == 0 else vector.extract(value, [], [lane])
                memref.store(scalar, base, at)
    op.erase()


def vectorize_storage(gpu_module, words64: bool = False) -> dict:
    """Rewrite the memory accesses of every ``gpu.func`` of ``gpu_module`` (see the
    module docstring; ``words64``: vec4s as 64-bit words); returns {kernel:
    [indices of its vec4 arguments]}."""
    vec4_arguments = {}
    for function in walk_ops(gpu_module, {"gpu.func"}):
        block = function.regions[0].blocks[0]
        chosen = []
        for argument in block.arguments:
            if isinstance(argument.type, ir.MemRefType) and _vec4_candidate(argument):
                _to_vec4(function, argument, words64)
                chosen.append(argument.arg_number)
        vec4_arguments[ir.StringAttr(function.attributes["sym_name"]).value] = chosen
        for op in walk_ops(function, set(VECTOR_ACCESSES)):
            _scalarize(op)
    return vec4_arguments


__all__ = ["vectorize_storage"]
