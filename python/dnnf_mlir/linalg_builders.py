"""Building linalg.generic ops from Python: shared by the ECG -> linalg conversion and
the code generator's own rewrites, two layers that do not import each other."""

import math

from . import _mlir
from ._mlir import ir


def element_of(value) -> ir.Type:
    return ir.RankedTensorType(value.type).element_type


def affine_map(dims: int, exprs) -> ir.AffineMap:
    """An affine map over ``dims`` loop dimensions; ints in ``exprs`` are dimension positions."""
    exprs = [ir.AffineDimExpr.get(e) if isinstance(e, int) else e for e in exprs]
    return ir.AffineMap.get(dims, 0, exprs)


def index_constant(value: int):
    """An ``arith.constant`` of index type at the insertion point."""
    return _mlir.arith.constant(ir.IndexType.get(), value)


def delinearize_index(position, shape) -> list:
    """The row-major indices within ``shape`` of the index value ``position``, in unsigned
    arithmetic; the outermost one is not reduced, so a position past the shape's product
    gives an outermost index past its size rather than wrapping around."""
    arith = _mlir.arith
    indices, stride = [], math.prod(shape)
    for i, size in enumerate(shape):
        stride //= size
        index = arith.divui(position, index_constant(stride)) if stride > 1 else position
        indices.append(index if i == 0 else arith.remui(index, index_constant(size)))
    return indices


# Indices are not negative: a floor division truncates, a modulo is the remainder.
AFFINE_ARITH = ((ir.AffineAddExpr, "addi"), (ir.AffineMulExpr, "muli"), (ir.AffineFloorDivExpr, "divsi"),
                (ir.AffineModExpr, "remsi"))


def affine_value(expr, dims: list):
    """``expr`` (an affine expression without symbols) computed in arith at the insertion
    point from ``dims``, the index values of its dims."""
    if isinstance(expr, ir.AffineDimExpr):
        return dims[ir.AffineDimExpr(expr).position]
    if isinstance(expr, ir.AffineConstantExpr):
        return index_constant(ir.AffineConstantExpr(expr).value)
    for kind, name in AFFINE_ARITH:
        if isinstance(expr, kind):
            binary = kind(expr)
            return getattr(_mlir.arith, name)(affine_value(binary.lhs, dims), affine_value(binary.rhs, dims))
    if isinstance(expr, ir.AffineCeilDivExpr):  # (a + b - 1) / b
        ratio = ir.AffineCeilDivExpr(expr)
        divisor = affine_value(ratio.rhs, dims)
        rounded = _mlir.arith.addi(affine_value(ratio.lhs, dims), _mlir.arith.subi(divisor, index_constant(1)))
        return _mlir.arith.divsi(rounded, divisor)
    raise ValueError(f"no arith form for the affine expression {expr} (a symbol)")


def make_pad(source, low, high, value):
    """``source`` padded by the static ``low`` / ``high`` amounts with the scalar ``value``."""
    tensor = _mlir.tensor
    t = ir.RankedTensorType(source.type)
    shape = [d + lo + hi for d, lo, hi in zip(t.shape, low, high)]
    result = ir.RankedTensorType.get(shape, t.element_type)
    padded = tensor.pad(result, source, [], [], low, high)
    pad_op = padded.owner
    block = pad_op.regions[0].blocks.append(*([ir.IndexType.get()] * t.rank))
    with ir.InsertionPoint(block):
        tensor.YieldOp(value)
    return padded


def generic(inputs, maps, outputs, body, iterators=None):
    """A linalg.generic; ``outputs`` are init tensors, ``body(*scalars)`` returns the yielded values.

    ``body`` receives the input scalars, then the output (accumulator) scalars.
    Returns the list of result tensors.
    """
    linalg = _mlir.linalg
    iterators = iterators or ["parallel"] * maps[0].n_dims
    op = linalg.GenericOp(
        [o.type for o in outputs], list(inputs), list(outputs),
        ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
        ir.ArrayAttr.get([ir.Attribute.parse(f"#linalg.iterator_type<{k}>") for k in iterators]),
    )
    block = op.regions[0].blocks.append(*[element_of(v) for v in list(inputs) + list(outputs)])
    with ir.InsertionPoint(block):
        yielded = body(*block.arguments)
        linalg.YieldOp(list(yielded) if isinstance(yielded, (list, tuple)) else [yielded])
    return list(op.results)


def split_offsets(offsets: list):
    """(dynamic offset values, static offsets with the dynamic marker in their place)."""
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    return [o for o in offsets if isinstance(o, ir.Value)], [dynamic if isinstance(o, ir.Value) else o for o in offsets]


def slice_at(value, offsets: list, sizes: list):
    """``value[offsets : offsets + sizes]`` (unit strides); an offset may be an index value."""
    values, static = split_offsets(offsets)
    result = ir.RankedTensorType.get(list(sizes), element_of(value))
    return _mlir.tensor.extract_slice(result, value, values, [], [], static, list(sizes), [1] * len(sizes))


def insert_at(value, into, offsets: list):
    """``value`` inserted into ``into`` at ``offsets`` (an offset may be an index value)."""
    values, static = split_offsets(offsets)
    shape = list(ir.RankedTensorType(value.type).shape)
    return _mlir.tensor.insert_slice(value, into, values, [], [], static, shape, [1] * len(shape))


def copy_into(value, init):
    """A ``linalg.generic`` copying the tensor ``value`` into ``init`` (same type): its result."""
    identity = ir.AffineMap.get_identity(ir.RankedTensorType(value.type).rank)
    return generic([value], [identity, identity], [init], lambda x, _out: x)[0]


def with_operands(op, inputs, maps, outputs, iterators=None) -> list:
    """A copy of the linalg.generic ``op`` over other operands: ``inputs`` and
    ``outputs`` replace its operands one for one (same element types), ``maps`` its
    indexing maps, ``iterators`` (names) its iterator types when given; the body is
    kept. Inserted at the current insertion point; returns its results."""
    linalg = _mlir.linalg
    if iterators is None:
        iterator_types = op.attributes["iterator_types"]
    else:
        iterator_types = ir.ArrayAttr.get([ir.Attribute.parse(f"#linalg.iterator_type<{k}>") for k in iterators])
    copy = linalg.GenericOp(
        [o.type for o in outputs], list(inputs), list(outputs),
        ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]), iterator_types,
    )
    old = op.regions[0].blocks[0]
    block = copy.regions[0].blocks.append(*[a.type for a in old.arguments])
    clones = {}
    for body_op in old.operations:
        clone = body_op.clone(ip=ir.InsertionPoint(block))
        for i, operand in enumerate(clone.operands):
            if isinstance(operand, ir.BlockArgument) and operand.owner == old:
                clone.operands[i] = block.arguments[operand.arg_number]
            elif isinstance(operand, ir.OpResult) and operand.owner.operation in clones:
                clone.operands[i] = clones[operand.owner.operation].results[operand.result_number]
        clones[body_op.operation] = clone
    return list(copy.results)


def inline_body(block, values: dict) -> list:
    """The ops of a ``linalg.generic``'s ``block`` cloned at the insertion point, each
    operand in ``values`` (block arguments first) replaced by its value there: the
    values the block yields. Lets one op's body compute inside another's. An op whose
    results ``values`` all give (the block's ``linalg.index`` ops, in another op's loops)
    is not cloned."""
    for inner in block.operations:
        if inner.name == "linalg.yield":
            return [values.get(v, v) for v in inner.operands]
        if inner.results and all(r in values for r in inner.results):
            continue
        clone = inner.clone()
        for i, operand in enumerate(clone.operands):
            if operand in values:
                clone.operands[i] = values[operand]
        for old, new in zip(inner.results, clone.results):
            values[old] = new
    return []
