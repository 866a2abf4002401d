"""The vocabulary the lowerings of convert-ecg-to-linalg are written in.

Scalar arithmetic on one element type (float or signless integer) with numpy's
semantics, and tensors built from linalg/tensor ops: fills, elementwise generics
with numpy broadcasting, reductions, reshapes, broadcasts, transposes, slices, pads
and output-driven gathers. Every op family uses them, so they live apart from the
families. The bare ``linalg.generic`` builder underneath is
``dnnf_mlir.linalg_builders``, which the code generator shares (it cannot import
the conversion).
"""

from math import prod

from ... import _mlir
from ..._mlir import arith, ir
from ...linalg_builders import affine_map, element_of, generic
from .float8 import f32_to_float8, float8_format, float8_to_f32

# ======================================================================
# Types, constants, scalar arithmetic
# ======================================================================


def tensor_type(shape, element) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(shape), element)


def shape_of(value) -> tuple:
    return tuple(ir.RankedTensorType(value.type).shape)


def is_float(element) -> bool:
    return isinstance(element, ir.FloatType)


def is_bool(element) -> bool:
    return isinstance(element, ir.IntegerType) and element.width == 1


def int_range(element) -> tuple:
    width = element.width
    return (0, 1) if width == 1 else (-(1 << (width - 1)), (1 << (width - 1)) - 1)


def constant(element, value):
    """A scalar arith.constant of ``element`` type (floats rounded, ints clamped to its range)."""
    if is_float(element):
        attr = ir.FloatAttr.get(element, float(value))
    elif isinstance(element, ir.IndexType):
        attr = ir.IntegerAttr.get(element, int(value))
    else:
        low, high = int_range(element)
        number = int(bool(value)) if element.width == 1 else min(max(int(value), low), high)
        attr = ir.IntegerAttr.get(element, number)
    return arith.ConstantOp(element, attr).result


def index(value: int):
    return constant(ir.IndexType.get(), value)


def lowest(element):
    """The identity of max (a Python number): -inf, or the integer type's minimum."""
    return float("-inf") if is_float(element) else int_range(element)[0]


def highest(element):
    """The identity of min: inf, or the integer type's maximum."""
    return float("inf") if is_float(element) else int_range(element)[1]


# Scalar arithmetic on values of one element type (float or signless integer).
def add(a, b):
    return arith.addf(a, b) if is_float(a.type) else arith.addi(a, b)


def sub(a, b):
    return arith.subf(a, b) if is_float(a.type) else arith.subi(a, b)


def mul(a, b):
    return arith.mulf(a, b) if is_float(a.type) else arith.muli(a, b)


def div(a, b):
    """True division for floats, truncation toward zero for integers (ONNX Div)."""
    return arith.divf(a, b) if is_float(a.type) else arith.divsi(a, b)


def maximum(a, b):
    """max(a, b); NaN-propagating for floats like numpy.maximum."""
    if is_float(a.type):
        return arith.maximumf(a, b)
    return arith.ori(a, b) if is_bool(a.type) else arith.maxsi(a, b)


def minimum(a, b):
    if is_float(a.type):
        return arith.minimumf(a, b)
    return arith.andi(a, b) if is_bool(a.type) else arith.minsi(a, b)


_FLOAT_PREDICATES = {"eq": "OEQ", "ne": "UNE", "lt": "OLT", "le": "OLE", "gt": "OGT", "ge": "OGE"}
_INT_PREDICATES = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}


def compare(predicate: str, a, b):
    """a <predicate> b as i1: ordered for floats (NaN compares false, except 'ne')."""
    if is_float(a.type):
        return arith.cmpf(getattr(arith.CmpFPredicate, _FLOAT_PREDICATES[predicate]), a, b)
    return arith.cmpi(getattr(arith.CmpIPredicate, _INT_PREDICATES[predicate]), a, b)


def select(condition, a, b):
    return arith.select(condition, a, b)


def is_unsigned(element) -> bool:
    return isinstance(element, ir.IntegerType) and element.is_unsigned


def reinterpret(value, to):
    """``value`` with the same bits as type ``to``: an unsigned integer as the signless one
    arith works on and back (an unrealized cast, which vanishes in the LLVM lowering)."""
    if value.type == to:
        return value
    return ir.Operation.create("builtin.unrealized_conversion_cast", results=[to], operands=[value]).result


def cast(value, to):
    """numpy ``astype`` for one scalar: float/int/bool conversions, unsigned integers
    converted as unsigned (computed on their signless form)."""
    source = value.type
    if source == to:
        return value
    if float8_format(source):  # through f32, which holds every float8 value
        return cast(float8_to_f32(value), to)
    if float8_format(to):
        return f32_to_float8(cast(value, ir.F32Type.get()), to)
    if is_unsigned(to):
        bits = ir.IntegerType.get_signless(to.width)
        return reinterpret(arith.fptoui(bits, value) if is_float(source) else cast(value, bits), to)
    if is_unsigned(source):
        value = reinterpret(value, ir.IntegerType.get_signless(source.width))
        if is_float(to):
            return arith.uitofp(to, value)
        if isinstance(to, ir.IntegerType) and to.width > source.width:
            return arith.extui(to, value)
        return cast(value, to)
    if is_float(source) and is_float(to):
        if to.width == source.width:  # bf16 <-> f16: exactly through f32, rounded once
            return cast(cast(value, ir.F32Type.get()), to)
        return arith.extf(to, value) if to.width > source.width else arith.truncf(to, value)
    if is_float(source):
        if is_bool(to):  # nonzero (NaN included) is True
            return arith.cmpf(arith.CmpFPredicate.UNE, value, constant(source, 0.0))
        return arith.fptosi(to, value)
    if is_float(to):
        return arith.uitofp(to, value) if is_bool(source) else arith.sitofp(to, value)
    if is_bool(to):
        return arith.cmpi(arith.CmpIPredicate.ne, value, constant(source, 0))
    if to.width > source.width:
        return arith.extui(to, value) if is_bool(source) else arith.extsi(to, value)
    return arith.trunci(to, value)


def clamp(value, low, high):
    return minimum(maximum(value, low), high)


# ======================================================================
# Tensors
# ======================================================================


def empty(shape, element):
    return _mlir.tensor.empty(list(shape), element)


def filled(shape, element, value):
    """A tensor of ``shape`` filled with the scalar ``value`` (a Python number or a Value)."""
    scalar = value if isinstance(value, ir.Value) else constant(element, value)
    return _mlir.linalg.fill(scalar, outs=[empty(shape, element)])


def zeros(shape, element):
    return filled(shape, element, 0)


def identity_map(rank) -> ir.AffineMap:
    return affine_map(rank, range(rank))


def map_without(rank, axes) -> ir.AffineMap:
    """The map from a rank-``rank`` iteration space to a tensor that dropped ``axes``."""
    return affine_map(rank, [d for d in range(rank) if d not in axes])


def broadcast_map(shape, out_shape) -> ir.AffineMap:
    """numpy broadcasting as an indexing map: ``shape`` aligned right, size-1 dims read index 0."""
    rank = len(out_shape)
    exprs = []
    for i, size in enumerate(shape):
        dim = rank - len(shape) + i
        exprs.append(ir.AffineConstantExpr.get(0) if size == 1 and out_shape[dim] != 1 else dim)
    return affine_map(rank, exprs)


def elementwise(inputs, out_shape, out_element, body):
    """out = body(*inputs) elementwise with numpy broadcasting of the inputs to ``out_shape``."""
    maps = [broadcast_map(shape_of(v), out_shape) for v in inputs]
    maps.append(identity_map(len(out_shape)))
    init = empty(out_shape, out_element)
    return generic(inputs, maps, [init], lambda *scalars: body(*scalars[: len(inputs)]))[0]


def map_values(value, out_element, body):
    """Apply ``body`` to each element of ``value``."""
    return elementwise([value], shape_of(value), out_element, body)


def reduce(value, dims, init, combine):
    """linalg.reduce over ``dims`` from the scalar ``init``; ``combine(element, accumulator)``."""
    linalg = _mlir.linalg
    shape = shape_of(value)
    element = element_of(value)
    dims = sorted(dims)
    out_shape = [d for i, d in enumerate(shape) if i not in dims]
    accumulator = filled(out_shape, element, init)
    op = linalg.ReduceOp([accumulator.type], [value], [accumulator], dims)
    block = op.regions[0].blocks.append(element, element)
    with ir.InsertionPoint(block):
        linalg.YieldOp([combine(block.arguments[0], block.arguments[1])])
    return op.results[0]


def combine_reduced(x, reduced, axes, element, body):
    """body(x_element, reduced_element) over x's shape, ``reduced`` lacking ``axes``."""
    shape = shape_of(x)
    rank = len(shape)
    maps = [identity_map(rank), map_without(rank, axes), identity_map(rank)]
    return generic([x, reduced], maps, [empty(shape, element)], lambda a, r, _o: body(a, r))[0]


def _common_groups(source, target):
    """Reassociations of ``source`` and ``target`` into their finest common shape, or None.

    Returns (source groups, target groups): group k of each side multiplies to the
    same size, so a collapse_shape of ``source`` then an expand_shape gives ``target``.
    Runs of size-1 dimensions join a neighbouring group.
    """
    if 0 in source or 0 in target:
        return None
    pairs, i, j = [], 0, 0
    while i < len(source) or j < len(target):
        left, right = [], []
        left_size = right_size = 1
        if i < len(source):
            left, left_size, i = [i], source[i], i + 1
        if j < len(target):
            right, right_size, j = [j], target[j], j + 1
        while left_size != right_size:
            if left_size < right_size:
                if i == len(source):
                    return None
                left.append(i)
                left_size *= source[i]
                i += 1
            else:
                if j == len(target):
                    return None
                right.append(j)
                right_size *= target[j]
                j += 1
        pairs.append((left, right))
    # a group empty on one side holds only 1s on the other: merge it with a neighbour
    merged, pending = [], ([], [])
    for left, right in pairs:
        left, right = pending[0] + left, pending[1] + right
        if not left or not right:
            if merged:
                merged[-1] = (merged[-1][0] + left, merged[-1][1] + right)
                pending = ([], [])
            else:
                pending = (left, right)
            continue
        merged.append((left, right))
        pending = ([], [])
    return [left for left, _ in merged], [right for _, right in merged]


def _reassociation(groups) -> ir.ArrayAttr:
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in g]) for g in groups])


def collapse(value, groups):
    shape = shape_of(value)
    target = [prod(shape[d] for d in g) for g in groups]
    return _mlir.tensor.collapse_shape(tensor_type(target, element_of(value)), value, _reassociation(groups))


def expand(value, groups, shape):
    return _mlir.tensor.expand_shape(tensor_type(shape, element_of(value)), value, _reassociation(groups), [], list(shape))


def reshape(value, shape):
    """Row-major reshape: collapse_shape to the shapes' finest common shape, then expand_shape
    (either one alone when the other is the identity)."""
    source, shape = shape_of(value), tuple(shape)
    if source == shape:
        return value
    groups = _common_groups(source, shape)
    if groups is None:  # zero-sized dimensions: through a 1-d tensor
        flat = collapse(value, [list(range(len(source)))])
        return expand(flat, [list(range(len(shape)))], shape)
    source_groups, target_groups = groups
    if len(source_groups) != len(source):
        value = collapse(value, source_groups)
    if len(target_groups) != len(shape):
        value = expand(value, target_groups, shape)
    return value


def broadcast_along(value, shape, added):
    """linalg.broadcast of ``value`` to ``shape``, inserting the dimensions ``added``."""
    return _mlir.linalg.broadcast(value, outs=[empty(shape, element_of(value))], dimensions=list(added)).results[0]


def broadcast_to(value, shape):
    """numpy.broadcast_to, materialized: drop stretched size-1 dims, then linalg.broadcast."""
    source, shape = shape_of(value), tuple(shape)
    if source == shape:
        return value
    offset = len(shape) - len(source)
    kept = [offset + i for i, d in enumerate(source) if d == shape[offset + i]]
    value = reshape(value, [shape[d] for d in kept])
    return broadcast_along(value, shape, [d for d in range(len(shape)) if d not in kept])


def transpose(value, perm):
    perm = [int(p) for p in perm]
    if perm == sorted(perm):
        return value
    shape = shape_of(value)
    init = empty([shape[p] for p in perm], element_of(value))
    return _mlir.linalg.transpose(value, outs=[init], permutation=perm).results[0]


def extract_slice(value, offsets, sizes, strides=None):
    strides = strides or [1] * len(sizes)
    result = tensor_type(sizes, element_of(value))
    return _mlir.tensor.extract_slice(result, value, [], [], [], list(offsets), list(sizes), list(strides))


def pad(value, low, high, scalar):
    """tensor.pad with the constant ``scalar`` (a Python number)."""
    if not any(low) and not any(high):
        return value
    tensor = _mlir.tensor
    element = element_of(value)
    shape = [d + lo + hi for d, lo, hi in zip(shape_of(value), low, high)]
    op = tensor.PadOp(tensor_type(shape, element), value, [], [], list(low), list(high))
    block = op.regions[0].blocks.append(*[ir.IndexType.get()] * len(shape))
    with ir.InsertionPoint(block):
        tensor.YieldOp(constant(element, scalar))
    return op.result


def window_options(attrs) -> dict:
    """A windowed op's strides and dilations as keyword arguments of linalg's named
    convolution and pooling builders (the op DSL takes plain ints)."""
    return {"strides": [int(v) for v in attrs["strides"]], "dilations": [int(v) for v in attrs["dilations"]]}


def loop_indices(rank):
    return [_mlir.linalg.IndexOp(d).result for d in range(rank)]


def gather_generic(inputs, maps, out_shape, element, body):
    """An output-driven generic: ``body(indices, *scalars)`` computes each element (it may
    ``tensor.extract`` from captured tensors at computed indices)."""
    maps = list(maps) + [identity_map(len(out_shape))]

    def wrapped(*scalars):
        return body(loop_indices(len(out_shape)), *scalars[: len(inputs)])

    return generic(inputs, maps, [empty(out_shape, element)], wrapped)[0]


def extract(value, indices):
    return _mlir.tensor.extract(value, list(indices))
