"""Indexing op families: scatters (ScatterElements, ScatterND with each reduction),
GatherND, TopK, CumSum and Trilu, with their index arithmetic drawn at random.

A scatter without a reduction writes distinct positions only (ONNX leaves duplicates
undefined); with one, positions repeat, which is what the reduction is for. TopK's
indices are an output only when its operand is a graph input: of a computed value,
near-equal elements may trade places between implementations (its values may not); k is
any extent up to the axis's.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from .draws import DIMS, MAX_NUMEL, axis, constant, new_input, pick
from .graph import GraphBuilder
from .movement import ints

INT64 = np.dtype(np.int64)
SCATTER_REDUCTIONS = ("none", "none", "add", "mul", "max", "min")


def _rng(draw) -> np.random.Generator:
    return np.random.default_rng(draw(st.integers(0, 2**16)))


def scatter_elements(draw, g: GraphBuilder) -> None:
    x = pick(draw, g)
    a = axis(draw, x.rank) % x.rank
    shape = tuple(draw(st.integers(1, d)) for d in x.shape)
    reduction = draw(st.sampled_from(SCATTER_REDUCTIONS))
    rng = _rng(draw)
    if reduction == "none":  # distinct positions along the axis, per line
        keys = rng.random(shape[:a] + (x.shape[a],) + shape[a + 1:])
        indices = np.take(np.argsort(keys, axis=a), range(shape[a]), axis=a)
    else:
        indices = rng.integers(0, x.shape[a], shape)
    indices = np.where(rng.random(shape) < 0.5, indices - x.shape[a], indices)  # negative half the time
    # mul with updates near 1, so that repeated products keep the magnitude.
    updates = constant(draw, g, shape, 0.25) if reduction == "mul" else constant(draw, g, shape, x.scale)
    if reduction == "mul":
        updates = g.one("Add", [updates, g.constant(np.array(1.0, np.float32))], shape, scale=1.0)
    g.one("ScatterElements", [x, ints(g, indices), updates], x.shape, scale=x.scale * 1.5,
          axis=a - x.rank if draw(st.booleans()) else a, reduction=reduction)


def scatter_nd(draw, g: GraphBuilder) -> None:
    x = pick(draw, g)
    depth = draw(st.integers(1, x.rank))
    positions = math.prod(x.shape[:depth])
    count = draw(st.integers(1, min(positions, 8)))
    reduction = draw(st.sampled_from(SCATTER_REDUCTIONS[:4]))
    rng = _rng(draw)
    chosen = rng.choice(positions, count, replace=reduction != "none")
    indices = np.stack(np.unravel_index(chosen, x.shape[:depth]), axis=-1)
    if draw(st.booleans()):
        indices = indices.reshape(count, 1, depth)
    updates_shape = indices.shape[:-1] + x.shape[depth:]
    updates = constant(draw, g, updates_shape, 0.25 if reduction == "mul" else x.scale)
    if reduction == "mul":
        updates = g.one("Add", [updates, g.constant(np.array(1.0, np.float32))], updates_shape, scale=1.0)
    g.one("ScatterND", [x, ints(g, indices), updates], x.shape, scale=x.scale * 1.5, reduction=reduction)


def gather_nd(draw, g: GraphBuilder) -> None:
    x = pick(draw, g)
    batch_dims = draw(st.integers(0, x.rank - 1)) if draw(st.booleans()) else 0
    depth = draw(st.integers(1, x.rank - batch_dims))
    count = draw(st.sampled_from(DIMS[:6]))
    batch = x.shape[:batch_dims]
    out = batch + (count,) + x.shape[batch_dims + depth:]
    if math.prod(out) > MAX_NUMEL:
        count, out = 1, batch + (1,) + x.shape[batch_dims + depth:]
    extents = np.array(x.shape[batch_dims:batch_dims + depth])
    indices = (_rng(draw).random(batch + (count, depth)) * extents).astype(np.int64)
    g.one("GatherND", [x, ints(g, indices - extents * (indices % 2))], out, scale=x.scale, batch_dims=batch_dims)


def top_k(draw, g: GraphBuilder) -> None:
    x = pick(draw, g)
    a = axis(draw, x.rank)
    k = draw(st.integers(1, x.shape[a]))
    shape = tuple(k if i == a % x.rank else d for i, d in enumerate(x.shape))
    values, indices = g.node("TopK", [x, ints(g, [k])], [shape, shape], dtype=(np.float32, INT64), scale=x.scale,
                             axis=a, largest=draw(st.integers(0, 1)))
    if not x.exact:
        g.values.remove(indices)


def cum_sum(draw, g: GraphBuilder) -> None:
    x = pick(draw, g)
    a = axis(draw, x.rank)
    g.one("CumSum", [x, g.constant(np.array(a, np.int64))], x.shape, scale=x.scale * math.sqrt(x.shape[a]),
          exclusive=draw(st.integers(0, 1)), reverse=draw(st.integers(0, 1)))


def trilu(draw, g: GraphBuilder) -> None:
    x = pick(draw, g, lambda v: v.rank >= 2, lambda d, g: new_input(d, g, rank=d(st.integers(2, 4))))
    inputs = [x]
    if draw(st.booleans()):
        inputs.append(g.constant(np.array(draw(st.integers(-x.shape[-2], x.shape[-1])), np.int64)))
    g.one("Trilu", inputs, x.shape, scale=x.scale, upper=draw(st.integers(0, 1)))


FAMILIES = {
    "scatter": lambda draw, g: draw(st.sampled_from((scatter_elements, scatter_nd)))(draw, g),
    "gather_nd": gather_nd, "top_k": top_k, "cum_sum": cum_sum, "trilu": trilu,
}

__all__ = ["FAMILIES"]
