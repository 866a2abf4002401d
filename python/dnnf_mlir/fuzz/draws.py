"""The draws every op family shares: shapes, operands from the pool, broadcasting
partners, weights.

Sizes mix odd extents (1, 3, 7, 17, 33, 65) with whole vectors of the host's
registers (8 and 16 floats) and their multiples, so that vectorized loops meet both
exact and partial tails. Hypothesis shrinks every choice towards the first option:
size 1, the newest value of the pool, a constant rather than an input.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from .graph import FLOAT, GraphBuilder, Value

DIMS = (1, 2, 3, 4, 7, 8, 16, 17, 32, 33, 64, 65)
MAX_NUMEL = 1 << 16  # elements per tensor: large enough for the 2-thread paths (2^15), small enough to run fast


def dims(draw, rank: int, cap: int = MAX_NUMEL, choices=DIMS) -> tuple:
    """``rank`` extents from ``choices`` whose product stays within ``cap``."""
    shape = []
    for _ in range(rank):
        fitting = [d for d in choices if math.prod(shape) * d <= cap] or [1]
        shape.append(draw(st.sampled_from(fitting)))
    return tuple(shape)


def new_input(draw, g: GraphBuilder, rank: int | None = None, cap: int = MAX_NUMEL) -> Value:
    if rank is None:
        rank = draw(st.integers(1, 4))
    return g.input(dims(draw, rank, cap))


def pick(draw, g: GraphBuilder, where=lambda v: True, make=None) -> Value:
    """A float value of rank 1 or more of the pool for which ``where`` holds, newest first (half the time
    the newest, so that chains form), rescaled into the normal range; ``make(draw, g)``
    (default: a new input) when there is none."""
    candidates = [v for v in reversed(g.values) if v.is_float and v.rank and where(v)]
    if not candidates:
        value = (make or new_input)(draw, g)
    elif draw(st.booleans()):
        value = candidates[0]
    else:
        value = candidates[draw(st.integers(0, len(candidates) - 1))]
    return g.normalized(value)


def axis(draw, rank: int) -> int:
    """An axis of a rank-``rank`` tensor, negative (counted from the end) half the time."""
    index = draw(st.integers(0, rank - 1))
    return index - rank if draw(st.booleans()) else index


def random_array(draw, shape, scale: float = 1.0) -> np.ndarray:
    seed = draw(st.integers(0, 2**16))
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(FLOAT)


def constant(draw, g: GraphBuilder, shape, scale: float = 1.0) -> Value:
    name = g.constant(random_array(draw, shape, scale))
    return Value(name, tuple(shape), FLOAT, scale)


def weight(draw, g: GraphBuilder, shape, fan_in: int) -> Value:
    """Weights scaled by 1/sqrt(fan_in), so that a product keeps its input's magnitude:
    a constant, or a graph input when the graph takes its weights at run time."""
    scale = 1 / math.sqrt(max(fan_in, 1))
    if g.weights_as_inputs:
        return g.input(shape, scale=scale)
    return constant(draw, g, shape, scale)


def broadcast_shape(draw, shape: tuple) -> tuple:
    """A shape that broadcasts with ``shape``: some leading dims dropped, some set to
    1, and some of ``shape``'s 1s widened (so both sides may broadcast)."""
    rank = draw(st.integers(0, len(shape)))
    result = []
    for extent in shape[len(shape) - rank:]:
        if extent == 1 and draw(st.integers(0, 3)) == 0:
            result.append(draw(st.sampled_from(DIMS[1:8])))
        else:
            result.append(draw(st.sampled_from((extent, 1))))
    return tuple(result)


def broadcast(*shapes) -> tuple:
    return tuple(np.broadcast_shapes(*shapes))


def broadcasts(a: tuple, b: tuple) -> bool:
    """Whether shapes ``a`` and ``b`` broadcast together into at most MAX_NUMEL elements."""
    try:
        return math.prod(broadcast(a, b)) <= MAX_NUMEL
    except ValueError:
        return False


def partner(draw, g: GraphBuilder, shape: tuple) -> Value:
    """A second operand that broadcasts with ``shape``: a pool value of a drawn
    broadcasting shape when there is one, else a constant or a new input."""
    other = broadcast_shape(draw, shape)
    if math.prod(broadcast(shape, other)) > MAX_NUMEL:
        other = tuple(1 for _ in other)
    same = [v for v in reversed(g.values) if v.is_float and v.shape == other]
    source = draw(st.sampled_from(("pool", "constant", "input")))
    if same and source == "pool":
        return g.normalized(same[draw(st.integers(0, len(same) - 1))])
    if source == "input":
        return g.input(other)
    return constant(draw, g, other)


__all__ = [
    "DIMS", "MAX_NUMEL", "axis", "broadcast", "broadcast_shape", "broadcasts", "constant", "dims", "new_input", "partner", "pick",
    "random_array", "weight",
]
