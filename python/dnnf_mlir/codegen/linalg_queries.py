"""What the schedules and rewrites ask of a linalg op: static shapes, element types,
indexing maps, convolution attributes; and the linalg ops of a module.

Queries only: nothing here changes the IR.
"""

from __future__ import annotations

from typing import Optional

from .._mlir import ir


TENSOR_RESHAPES = ("tensor.expand_shape", "tensor.collapse_shape")  # the ops that only reshape a tensor

def static_tensor_type(value) -> Optional[ir.RankedTensorType]:
    """The type of ``value`` when it is a ranked tensor of static shape, else None."""
    try:
        t = ir.RankedTensorType(value.type)
    except (ValueError, TypeError):
        return None
    return t if t.has_static_shape else None


def element_bits(t) -> int:
    """Bits of one element of the shaped type ``t`` as vector lanes count them (i1 -> 8)."""
    et = t.element_type
    if isinstance(et, ir.F32Type) or isinstance(et, ir.IntegerType) and ir.IntegerType(et).width == 32:
        return 32
    if isinstance(et, ir.F64Type):
        return 64
    if isinstance(et, ir.F16Type) or isinstance(et, ir.BF16Type):
        return 16
    if isinstance(et, ir.IntegerType):
        return max(8, ir.IntegerType(et).width)
    return 32


def is_i1(value) -> bool:
    """Whether ``value`` is a tensor or memref of i1."""
    try:
        t = ir.ShapedType(value.type)
    except (ValueError, TypeError):
        return False
    et = t.element_type
    return isinstance(et, ir.IntegerType) and ir.IntegerType(et).width == 1


def _linear_coefficients(expr) -> Optional[dict]:
    """{dim: coefficient} of an affine expression linear in the dims (None otherwise)."""
    if isinstance(expr, ir.AffineDimExpr):
        return {expr.position: 1}
    if isinstance(expr, (ir.AffineConstantExpr, ir.AffineSymbolExpr)):
        return {}
    if isinstance(expr, ir.AffineAddExpr):
        lhs, rhs = _linear_coefficients(expr.lhs), _linear_coefficients(expr.rhs)
        if lhs is None or rhs is None:
            return None
        return {d: lhs.get(d, 0) + rhs.get(d, 0) for d in set(lhs) | set(rhs)}
    if isinstance(expr, ir.AffineMulExpr):
        for a, b in ((expr.lhs, expr.rhs), (expr.rhs, expr.lhs)):
            if isinstance(b, ir.AffineConstantExpr):
                inner = _linear_coefficients(a)
                return None if inner is None else {d: c * b.value for d, c in inner.items()}
    return None


def reversed_map(amap) -> bool:
    """Whether the indexing map ``amap`` walks its operand backwards along some dim (a
    Slice with a negative step, a transposed convolution's flipped kernel)."""
    for expr in amap.results:
        coefficients = _linear_coefficients(expr)
        if coefficients is not None and any(c < 0 for c in coefficients.values()):
            return True
    return False


def reverses_access(op) -> bool:
    """Whether an indexing map of ``op`` walks an operand backwards (``reversed_map``):
    tiling computes wrong slices of such operands."""
    try:
        maps = indexing_maps(op)
    except (KeyError, ValueError, TypeError):
        return False
    return any(reversed_map(amap) for amap in maps)


def touches_i1(op) -> bool:
    """Whether ``op`` reads or writes a tensor (memref) of i1."""
    return any(is_i1(v) for v in list(op.operands) + list(op.results))


def is_f32(t) -> bool:
    """Whether the shaped type ``t`` holds f32."""
    return isinstance(t.element_type, ir.F32Type)


def _attr_ints(op, name):
    if name not in op.attributes:
        return None
    return [int(x) for x in ir.DenseIntElementsAttr(op.attributes[name])]


def parallel_loops(op) -> Optional[list]:
    """Per loop of a linalg op, whether it is parallel (not a reduction); None for a
    named op without ``iterator_types`` (a fill, a copy: all parallel)."""
    if op.name == "linalg.reduce":
        reduced = set(reduced_dims(op))
        return [i not in reduced for i in range(ir.ShapedType(op.operands[0].type).rank)]
    if "iterator_types" not in op.attributes:
        return None
    parallel = ir.Attribute.parse("#linalg.iterator_type<parallel>", op.context)
    return [kind == parallel for kind in ir.ArrayAttr(op.attributes["iterator_types"])]


def reduced_dims(op) -> list:
    """The dims of its input that a ``linalg.reduce`` reduces, ascending."""
    return sorted(int(d) for d in ir.DenseI64ArrayAttr(op.attributes["dimensions"]))


def is_broadcast_map(amap) -> bool:
    """Whether every result of ``amap`` is a distinct loop dim or the constant 0 (an
    operand read whole or broadcast, size-1 dims included: a bias ``(d1, 0, 0)``)."""
    dims = []
    for expr in amap.results:
        if isinstance(expr, ir.AffineConstantExpr) and ir.AffineConstantExpr(expr).value == 0:
            continue
        if not isinstance(expr, ir.AffineDimExpr):
            return False
        dims.append(ir.AffineDimExpr(expr).position)
    return len(set(dims)) == len(dims)


def elementwise_consumer(op, permuted_output: bool = False):
    """The element-wise linalg.generic that is the only user of ``op``'s result, if any
    (an epilogue the contraction computing it can apply in its output tile).

    It must iterate over exactly the result's shape (all loops parallel), read the
    result with the identity map and its other inputs whole or broadcast
    (``is_broadcast_map``: a bias), and write its f32 result with the identity map, or
    with ``permuted_output`` any permutation of the loops (a batch matmul's epilogue
    writing ShuffleNet's channel shuffle: ``grouped_epilogues``).
    It reads no i1 tensor (a mask): the tile's vectors would load it as packed bits,
    where a memref of i1 holds a byte per element.
    """
    if len(op.results) != 1:
        return None
    result = op.results[0]
    user = only_user(result)
    if user is None or user.name != "linalg.generic" or len(user.results) != 1 or touches_i1(user):
        return None
    out = static_tensor_type(result)
    uout = static_tensor_type(user.results[0])
    if out is None or uout is None or not is_f32(uout):
        return None
    maps = indexing_maps(user)
    identity = ir.AffineMap.get_identity(len(out.shape))
    written = maps[-1]
    if written != identity and not (permuted_output and written.is_permutation):
        return None
    if tuple(uout.shape) != tuple(out.shape[ir.AffineDimExpr(e).position] for e in written.results):
        return None
    parallel = parallel_loops(user)
    if parallel is None or not all(parallel) or len(parallel) != len(out.shape):
        return None
    operands = list(user.operands)
    for index, (value, amap) in enumerate(zip(operands, maps)):
        if value == result:
            if amap != identity or index >= len(operands) - 1:
                return None
        elif index < len(operands) - 1 and not is_broadcast_map(amap):
            return None
    return user


def linalg_input_count(op) -> int:
    """How many operands a destination-style op (a linalg op) reads: all but its inits,
    one per result, which come last."""
    return len(op.operands) - len(op.results)


def linalg_inputs(op) -> list:
    """The operands a destination-style op (a linalg op) reads, not its inits."""
    return list(op.operands)[: linalg_input_count(op)]


def static_slice(op) -> tuple | None:
    """(offsets, sizes, strides) of a ``tensor.extract_slice`` or ``insert_slice`` whose
    offsets, sizes and strides are all static (no operands beyond its tensors), else None."""
    if len(op.operands) != (2 if op.name == "tensor.insert_slice" else 1):
        return None
    return tuple(list(ir.DenseI64ArrayAttr(op.attributes[f"static_{n}"])) for n in ("offsets", "sizes", "strides"))


def linalg_init(op):
    """The init (the output operand) of a single-result destination-style op: its last operand."""
    return op.operands[len(op.operands) - 1]


def set_linalg_init(op, value) -> None:
    """Make ``value`` the init of a single-result destination-style op."""
    op.operands[len(op.operands) - 1] = value


def indexing_maps(op) -> list:
    """The indexing maps of a linalg op that has the attribute (a generic, a named
    contraction with explicit maps)."""
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]


def has_default_maps(op) -> bool:
    """A linalg.matmul / batch_matmul without user-defined indexing maps (no transposes)."""
    if "indexing_maps" not in op.attributes:
        return True
    maps = indexing_maps(op)
    n = maps[0].n_dims
    batch = n - 3
    expected = [
        [*range(batch), batch, batch + 2],
        [*range(batch), batch + 2, batch + 1],
        [*range(batch), batch, batch + 1],
    ]
    for m, want in zip(maps, expected):
        if not m.is_projected_permutation or [ir.AffineDimExpr(r).position for r in m.results] != want:
            return False
    return True


def conv_params(op):
    """([stride h, stride w], [dilation h, dilation w]) of a 2-D convolution or pooling op."""
    strides = _attr_ints(op, "strides") or [1, 1]
    dilations = _attr_ints(op, "dilations") or [1, 1]
    return strides, dilations


def reassociation(groups):
    """The reassociation attribute of tensor.collapse_shape / expand_shape for ``groups``."""
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IntegerType.get_signless(64), d) for d in g]) for g in groups])


def reassociation_groups(reshape) -> list:
    """The groups of dims of a tensor.collapse_shape / expand_shape, as lists of ints."""
    return [[int(ir.IntegerAttr(d).value) for d in ir.ArrayAttr(g)] for g in ir.ArrayAttr(reshape.attributes["reassociation"])]


def producer(value):
    """The op whose result ``value`` is, or None (a block argument)."""
    return value.owner if isinstance(value, ir.OpResult) else None


def pad_value(pad):
    """The ``arith.constant`` a ``tensor.pad`` fills with (its region yields it), else None."""
    operations = pad.regions[0].blocks[0].operations
    owner = producer(operations[len(operations) - 1].operands[0])
    return owner if owner is not None and owner.name == "arith.constant" else None


def pad_fill(pad) -> float | None:
    """The float a ``tensor.pad`` fills with, else None."""
    constant = pad_value(pad)
    if constant is None or not isinstance(constant.attributes["value"], ir.FloatAttr):
        return None
    return ir.FloatAttr(constant.attributes["value"]).value


def channel_pad(op) -> tuple[int, int] | None:
    """The (before, after) channels a zero ``tensor.pad`` of a static f32 NCHW tensor's
    channels only adds, else None: a LRN's padded squares."""
    source = static_tensor_type(op.operands[0]) if op.name == "tensor.pad" else None
    if source is None or source.rank != 4 or not isinstance(source.element_type, ir.F32Type) or len(op.operands) != 1:
        return None
    low = list(ir.DenseI64ArrayAttr(op.attributes["static_low"]))
    high = list(ir.DenseI64ArrayAttr(op.attributes["static_high"]))
    if low[::2] + low[3:] != [0, 0, 0] or high[::2] + high[3:] != [0, 0, 0]:
        return None
    if min(low[1], high[1]) < 0 or pad_fill(op) != 0.0:
        return None
    return low[1], high[1]


def _channel_window_maps() -> list:
    d = ir.AffineDimExpr.get
    return [ir.AffineMap.get(5, 0, [d(0), d(1) + d(4), d(2), d(3)]), ir.AffineMap.get(5, 0, [d(4)]),
            ir.AffineMap.get(5, 0, [d(0), d(1), d(2), d(3)])]


def is_channel_window(op) -> bool:
    """Whether ``op`` sums a window of channels of a ``channel_pad`` (``(n, c, h, w, k) ->
    (n, c + k, h, w)``, the window's extent given by its second operand): a LRN's sums of
    squares."""
    if op.name != "linalg.generic" or len(op.operands) != 3 or len(op.results) != 1:
        return False
    pad = producer(op.operands[0])
    if pad is None or channel_pad(pad) is None or indexing_maps(op) != _channel_window_maps():
        return False
    iterators = [str(i) for i in ir.ArrayAttr(op.attributes["iterator_types"])]
    if iterators != ["#linalg.iterator_type<parallel>"] * 4 + ["#linalg.iterator_type<reduction>"]:
        return False
    body = op.regions[0].blocks[0]
    ops = [inner for inner in body.operations]
    return (len(ops) == 2 and ops[0].name == "arith.addf"
            and {ops[0].operands[0], ops[0].operands[1]} == {body.arguments[0], body.arguments[2]})


def constant_index(value) -> int | None:
    """The integer an ``arith.constant`` of index type gives ``value``, else None."""
    owner = producer(value)
    if owner is None or owner.name != "arith.constant" or not isinstance(value.type, ir.IndexType):
        return None
    return ir.IntegerAttr(owner.attributes["value"]).value


def launch_sizes(launch) -> tuple:
    """(grid x, y, z), (block x, y, z) of a ``gpu.launch`` or ``gpu.launch_func``; the GPU
    pipeline only makes launches of constant sizes, so another is a ValueError."""
    sizes = [constant_index(v) for v in list(launch.operands)[0:6]]
    if None in sizes:
        raise ValueError(f"a {launch.name} whose sizes are not constants")
    return tuple(sizes[0:3]), tuple(sizes[3:6])


def accumulator_fill(contraction):
    """The ``linalg.fill`` that initializes ``contraction``'s accumulator (its operand 2),
    if one does."""
    init = producer(contraction.operands[2])
    return init if init is not None and init.name == "linalg.fill" else None


def only_user(value):
    """The op using ``value``, if exactly one use does."""
    uses = list(value.uses)
    return uses[0].owner if len(uses) == 1 else None


def enclosing_function(op) -> str:
    """The name of the ``func.func`` holding ``op``."""
    while op.name != "func.func":
        op = op.parent
    return ir.StringAttr(op.attributes["sym_name"]).value


def linalg_ops(module: ir.Module):
    """The linalg ops of ``module`` in program order (not the ops inside their regions)."""
    ops = []

    def visit(op):
        name = op.name
        if name.startswith("linalg.") and name != "linalg.yield" and name != "linalg.index":
            ops.append(op)
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return ops



__all__ = [
    "TENSOR_RESHAPES",
    "channel_pad",
    "constant_index",
    "conv_params",
    "element_bits",
    "elementwise_consumer",
    "enclosing_function",
    "has_default_maps",
    "indexing_maps",
    "linalg_inputs",
    "is_broadcast_map",
    "is_channel_window",
    "is_f32",
    "is_i1",
    "linalg_ops",
    "pad_fill",
    "pad_value",
    "parallel_loops",
    "reassociation",
    "reduced_dims",
    "reversed_map",
    "reverses_access",
    "static_tensor_type",
    "touches_i1",
]
