"""Building linalg.generic ops from Python: shared by the ECG -> linalg conversion and
the code generator's own rewrites, two layers that do not import each other."""

from . import _mlir
from ._mlir import ir


def element_of(value) -> ir.Type:
    return ir.RankedTensorType(value.type).element_type


def affine_map(dims: int, exprs) -> ir.AffineMap:
    """An affine map over ``dims`` loop dimensions; ints in ``exprs`` are dimension positions."""
    exprs = [ir.AffineDimExpr.get(e) if isinstance(e, int) else e for e in exprs]
    return ir.AffineMap.get(dims, 0, exprs)


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
