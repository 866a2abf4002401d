"""Constants and data movement: ops that only move, copy or select elements.

Reshapes are tensor.collapse_shape/expand_shape, transposes and expands linalg's
named ops, slices and splits tensor.extract_slice, concat tensor.concat and constant
pads tensor.pad. What those cannot express (negative slice steps, edge/reflect/wrap
pads, gathers) is an output-driven generic computing the source index of each element.
"""

from ... import _mlir
from ..._mlir import arith, ir
from ...ecg.shapes import normalize_axis
from ...linalg_builders import affine_map, element_of, generic
from .builders import (
    broadcast_to, empty, extract, extract_slice, gather_generic, identity_map, index, pad, reshape, select, shape_of,
    transpose,
)
from .flat_reads import flat_reader, strided_reader
from .registry import lowers


@lowers("constant")
def lower_constant(op, args):
    return [arith.ConstantOp(op.operation.results[0].type, op.operation.attributes["value"]).result]


@lowers("reshape", "flatten", "squeeze", "unsqueeze")
def lower_reshape(op, args):
    (spec,) = op.result_specs
    return [reshape(args[0], spec.shape)]


@lowers("transpose")
def lower_transpose(op, args):
    return [transpose(args[0], op.attrs["perm"])]


@lowers("slice")
def lower_slice(op, args):
    """tensor.extract_slice for positive steps; a generic reading start + step*i otherwise."""
    x = args[0]
    shape = shape_of(x)
    (spec,) = op.result_specs
    attrs = op.attrs
    offsets, strides = [0] * len(shape), [1] * len(shape)
    for start, axis, step in zip(attrs["starts"], attrs["axes"], attrs["steps"]):
        # Keeping one index, the step does not matter; a unit one keeps a broadcast read of
        # that element a plain load (a 0-d vector read of a strided view has no lowering).
        offsets[axis], strides[axis] = start, step if spec.shape[axis] != 1 else 1
    if all(s > 0 for s in strides) or 0 in spec.shape:
        return [extract_slice(x, offsets, spec.shape, [abs(s) for s in strides])]
    # The axes of positive steps first, as an extract_slice: linalg takes a loop's extent
    # from any operand indexed by the bare loop dimension, so an axis sliced from 0 with
    # step 1 would give the generic the input's extent where the result's is meant.
    forward = [s > 0 for s in strides]
    x = extract_slice(x, [o if f else 0 for o, f in zip(offsets, forward)],
                      [n if f else d for n, d, f in zip(spec.shape, shape, forward)],
                      [s if f else 1 for s, f in zip(strides, forward)])
    rank = len(shape)
    exprs = [
        ir.AffineConstantExpr.get(0 if f else o) + ir.AffineDimExpr.get(d) * (1 if f else s)
        for d, (o, s, f) in enumerate(zip(offsets, strides, forward))
    ]
    maps = [ir.AffineMap.get(rank, 0, exprs), identity_map(rank)]
    return generic([x], maps, [empty(spec.shape, element_of(x))], lambda v, _o: v)


@lowers("concat")
def lower_concat(op, args):
    (spec,) = op.result_specs
    axis = normalize_axis(op.attrs["axis"], spec.rank)
    result = op.operation.results[0].type
    return [_mlir.tensor.concat(result, axis, list(args))]


@lowers("split")
def lower_split(op, args):
    x = args[0]
    shape = shape_of(x)
    axis = normalize_axis(op.attrs["axis"], len(shape))
    results, start = [], 0
    for spec in op.result_specs:
        offsets = [0] * len(shape)
        offsets[axis] = start
        results.append(extract_slice(x, offsets, spec.shape))
        start += spec.shape[axis]
    return results


@lowers("pad")
def lower_pad(op, args):
    """Crop (extract_slice) for negative pads, then tensor.pad (constant) or a generic that
    reads the clamped (edge), mirrored (reflect) or wrapped index."""
    x = args[0]
    attrs = op.attrs
    (spec,) = op.result_specs
    plan = type(op)._plan(shape_of(x), attrs)
    shape = shape_of(x)
    kept = [d - cb - ce for d, (cb, ce, _, _) in zip(shape, plan)]
    if any(cb or ce for cb, ce, _, _ in plan):
        x = extract_slice(x, [cb for cb, _, _, _ in plan], kept)
    low = [pb for _, _, pb, _ in plan]
    high = [pe for _, _, _, pe in plan]
    mode = attrs["mode"]
    if mode == "constant":
        return [pad(x, low, high, attrs["constant_value"])]
    if 0 in spec.shape:
        return [empty(spec.shape, element_of(x))]
    read = strided_reader(x)

    def body(indices):
        reads = []
        for i, size, begin in zip(indices, kept, low):
            if size == 1 and mode != "reflect":
                reads.append(index(0))
                continue
            position = arith.subi(i, index(begin))
            if mode == "edge":
                position = arith.minsi(arith.maxsi(position, index(0)), index(size - 1))
            elif mode == "wrap":
                position = arith.remsi(arith.addi(arith.remsi(position, index(size)), index(size)), index(size))
            else:  # reflect: pads are smaller than the size, one mirror suffices
                # |position| as max(position, -position): SPIR-V has no lowering of math.absi on index
                position = arith.maxsi(position, arith.subi(index(0), position))
                over = arith.cmpi(arith.CmpIPredicate.sge, position, index(size))
                position = select(over, arith.subi(index(2 * (size - 1)), position), position)
            reads.append(position)
        return read(reads)

    return [gather_generic([], [], spec.shape, element_of(x), body)]


@lowers("expand")
def lower_expand(op, args):
    (spec,) = op.result_specs
    return [broadcast_to(args[0], spec.shape)]


@lowers("tile")
def lower_tile(op, args):
    """Broadcast to (r0, d0, r1, d1, ...) then collapse pairs: the repeats are outer."""
    x = args[0]
    shape = shape_of(x)
    (spec,) = op.result_specs
    repeats = op.attrs["repeats"]
    interleaved = []
    for r, d in zip(repeats, shape):
        interleaved += [r, d]
    expanded = reshape(x, [v for pair in zip([1] * len(shape), shape) for v in pair])
    return [reshape(broadcast_to(expanded, interleaved), spec.shape)]


def _normalized_index(raw, size):
    """An index from an i32/i64 tensor element, negative values counting from the end,
    clamped into [0, size): the code never reads out of bounds, whatever the indices
    (the C glue rejects out-of-range ones that come from the caller, see
    ``compiler.index_checks``)."""
    position = arith.index_cast(ir.IndexType.get(), raw)
    negative = arith.cmpi(arith.CmpIPredicate.slt, position, index(0))
    position = select(negative, arith.addi(position, index(size)), position)
    return arith.minsi(arith.maxsi(position, index(0)), index(size - 1))


@lowers("gather")
def lower_gather(op, args):
    """out[pre, idx..., post] = data[pre, indices[idx...], post]: a generic over the output
    reading the index tensor and extracting from ``data``."""
    data, indices = args
    (spec,) = op.result_specs
    data_shape, index_shape = shape_of(data), shape_of(indices)
    axis = normalize_axis(op.attrs["axis"], len(data_shape))
    rank = len(spec.shape)
    index_map = affine_map(rank, range(axis, axis + len(index_shape)))
    read = flat_reader(data, contiguous=axis + len(index_shape) < rank)

    def body(loops, raw):
        position = _normalized_index(raw, data_shape[axis])
        return read(loops[:axis] + [position] + loops[axis + len(index_shape):])

    return [gather_generic([indices], [index_map], spec.shape, element_of(data), body)]


@lowers("gather_elements")
def lower_gather_elements(op, args):
    data, indices = args
    (spec,) = op.result_specs
    data_shape = shape_of(data)
    axis = normalize_axis(op.attrs["axis"], len(data_shape))
    read = flat_reader(data, contiguous=False)  # every read's position is an element of its own

    def body(loops, raw):
        reads = list(loops)
        reads[axis] = _normalized_index(raw, data_shape[axis])
        return read(reads)

    return [gather_generic([indices], [identity_map(spec.rank)], spec.shape, element_of(data), body)]


@lowers("depth_to_space")
def lower_depth_to_space(op, args):
    x = args[0]
    n, c, h, w = shape_of(x)
    b = op.attrs["blocksize"]
    (spec,) = op.result_specs
    if op.attrs["mode"] == "DCR":
        y = transpose(reshape(x, (n, b, b, c // (b * b), h, w)), (0, 3, 4, 1, 5, 2))
    else:
        y = transpose(reshape(x, (n, c // (b * b), b, b, h, w)), (0, 1, 4, 2, 5, 3))
    return [reshape(y, spec.shape)]


@lowers("space_to_depth")
def lower_space_to_depth(op, args):
    x = args[0]
    n, c, h, w = shape_of(x)
    b = op.attrs["blocksize"]
    (spec,) = op.result_specs
    y = transpose(reshape(x, (n, c, h // b, b, w // b, b)), (0, 3, 5, 1, 2, 4))
    return [reshape(y, spec.shape)]
