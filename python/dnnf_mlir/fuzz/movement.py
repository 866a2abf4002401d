"""Data-movement op families: Reshape, Transpose, Slice, Concat, Split, Gather,
GatherElements, Expand, Tile, Pad, Squeeze/Unsqueeze/Flatten and DepthToSpace/SpaceToDepth,
with their attributes (or constant shape inputs) drawn at random (Resize has a module
of its own, ``resampling``).

These ops copy values, so they keep the operand's scale; their index arithmetic
(negative axes and indices, clamped slice bounds, negative steps, uneven splits) is
what they exercise.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from .draws import DIMS, MAX_NUMEL, axis, constant, dims, pick
from .graph import GraphBuilder, Value

INT64 = np.int64


def ints(g: GraphBuilder, values) -> str:
    return g.constant(np.array(values, INT64))


def factors(n: int) -> list:
    found, p = [], 2
    while p * p <= n:
        while n % p == 0:
            found.append(p)
            n //= p
        p += 1
    return found + ([n] if n > 1 else [])


def reshape(draw, g: GraphBuilder) -> None:
    x = pick(draw, g)
    rank = draw(st.integers(1, 5))
    shape = [1] * rank
    for p in factors(x.numel):
        shape[draw(st.integers(0, rank - 1))] *= p
    spec = list(shape)
    special = draw(st.sampled_from(("none", "infer", "copy")))
    if special == "infer":
        spec[draw(st.integers(0, rank - 1))] = -1
    elif special == "copy":
        spec = [0 if i < x.rank and d == x.shape[i] else d for i, d in enumerate(spec)]
    g.one("Reshape", [x, ints(g, spec)], shape, scale=x.scale)


def transpose(draw, g: GraphBuilder) -> None:
    x = pick(draw, g, lambda v: v.rank >= 2)
    perm = draw(st.permutations(range(x.rank)))
    shape = [x.shape[p] for p in perm]
    if perm == list(range(x.rank))[::-1] and draw(st.booleans()):
        g.one("Transpose", [x], shape, scale=x.scale)  # the default permutation
    else:
        g.one("Transpose", [x], shape, scale=x.scale, perm=perm)


def slice_(draw, g: GraphBuilder) -> None:
    x = pick(draw, g)
    chosen = draw(st.lists(st.integers(0, x.rank - 1), min_size=1, max_size=x.rank, unique=True))
    shape = list(x.shape)
    starts, ends, axes, steps = [], [], [], []
    for a in chosen:
        extent = x.shape[a]
        step = draw(st.sampled_from((1, 2, 3, -1, -2)))
        start = draw(st.integers(-extent - 1, extent + 1))
        end = draw(st.sampled_from((draw(st.integers(-extent - 1, extent + 1)), 2**62, -(2**62))))
        if not range(*slice(start, end, step).indices(extent)):
            start, end = (0, extent) if step > 0 else (-1, -(2**62))
        shape[a] = len(range(*slice(start, end, step).indices(extent)))
        starts.append(start)
        ends.append(end)
        axes.append(a - x.rank if draw(st.booleans()) else a)
        steps.append(step)
    inputs = [x, ints(g, starts), ints(g, ends), ints(g, axes)]
    if any(s != 1 for s in steps) or draw(st.booleans()):
        inputs.append(ints(g, steps))
    g.one("Slice", inputs, shape, scale=x.scale)


def concat(draw, g: GraphBuilder) -> None:
    x = pick(draw, g)
    a = axis(draw, x.rank)
    parts, extent = [x], x.shape[a]
    for _ in range(draw(st.integers(1, 2))):
        room = MAX_NUMEL // max(x.numel // x.shape[a], 1) - extent
        if room < 1:
            break
        width = draw(st.sampled_from([d for d in DIMS if d <= room]))
        shape = tuple(width if i == a % x.rank else d for i, d in enumerate(x.shape))
        source = draw(st.sampled_from(("pool", "constant", "itself")))
        if source == "itself" and width == x.shape[a]:
            part = x
        else:
            part = pick(draw, g, lambda v: v.shape == shape, make=lambda draw, g: constant(draw, g, shape)) \
                if source == "pool" else constant(draw, g, shape)
        parts.append(part)
        extent += width
    shape = tuple(extent if i == a % x.rank else d for i, d in enumerate(x.shape))
    g.one("Concat", parts, shape, scale=max(p.scale for p in parts), axis=a)


def split(draw, g: GraphBuilder) -> None:
    x = pick(draw, g, lambda v: max(v.shape) >= 2)
    a = draw(st.sampled_from([i for i, d in enumerate(x.shape) if d >= 2] or [0]))
    extent = x.shape[a]
    count = draw(st.integers(1, min(3, extent)))
    chunk = -(-extent // count)
    if chunk * (count - 1) < extent and draw(st.booleans()):
        sizes = [chunk] * (count - 1) + [extent - chunk * (count - 1)]
        inputs, attrs = [x], {"num_outputs": count}
    else:
        cuts = sorted(draw(st.lists(st.integers(1, extent - 1), min_size=count - 1, max_size=count - 1, unique=True))
                      if count > 1 else [])
        sizes = [b - e for e, b in zip([0] + cuts, cuts + [extent])]
        inputs, attrs = [x, ints(g, sizes)], {}
    shapes = [tuple(s if i == a else d for i, d in enumerate(x.shape)) for s in sizes]
    g.node("Split", inputs, shapes, scale=x.scale, axis=a - x.rank if draw(st.booleans()) else a, **attrs)


def gather(draw, g: GraphBuilder) -> None:
    x = pick(draw, g)
    a = axis(draw, x.rank)
    extent = x.shape[a]
    if draw(st.booleans()):
        shape = dims(draw, draw(st.integers(0, x.rank)), cap=MAX_NUMEL // x.numel * extent, choices=DIMS[:7])
        if draw(st.booleans()):  # indices computed at run time, in range
            indices = g.input(shape, INT64, high=extent)
        else:
            seed = draw(st.integers(0, 2**16))
            indices = ints(g, np.random.default_rng(seed).integers(-extent, extent, shape))
        out = x.shape[: a % x.rank] + shape + x.shape[a % x.rank + 1:]
        g.one("Gather", [x, indices], out, scale=x.scale, axis=a)
        return
    widths = [w for w in DIMS[:7] if x.numel // extent * w <= MAX_NUMEL]
    shape = tuple(draw(st.sampled_from(widths)) if i == a % x.rank else draw(st.integers(1, d))
                  for i, d in enumerate(x.shape))
    seed = draw(st.integers(0, 2**16))
    indices = ints(g, np.random.default_rng(seed).integers(-extent, extent, shape))
    g.one("GatherElements", [x, indices], shape, scale=x.scale, axis=a)


def widen(draw, x: Value) -> tuple:
    """A shape ``x`` broadcasts to, within MAX_NUMEL: its 1s widened, dims prepended."""
    shape = list(dims(draw, draw(st.integers(0, 2)), cap=MAX_NUMEL // x.numel))
    for d in x.shape:
        cap = MAX_NUMEL // (math.prod(shape) * x.numel // d)
        shape.append(draw(st.sampled_from([w for w in DIMS if w <= cap] or [1])) if d == 1 else d)
    return tuple(shape)


def expand(draw, g: GraphBuilder) -> None:
    x = pick(draw, g)
    shape = widen(draw, x)
    # Expand broadcasts both ways: 1s in the shape input keep x's extent.
    aligned = (None,) * (len(shape) - x.rank) + x.shape
    spec = [1 if aligned[i] == d and draw(st.integers(0, 3)) == 0 else d for i, d in enumerate(shape)]
    g.one("Expand", [x, ints(g, spec)], shape, scale=x.scale)


def tile(draw, g: GraphBuilder) -> None:
    x = pick(draw, g)
    repeats = []
    for d in x.shape:
        cap = MAX_NUMEL // (x.numel * math.prod(repeats or [1]))
        repeats.append(draw(st.integers(1, max(1, min(3, cap)))))
    g.one("Tile", [x, ints(g, repeats)], [d * r for d, r in zip(x.shape, repeats)], scale=x.scale)


def pad(draw, g: GraphBuilder) -> None:
    x = pick(draw, g)
    mode = draw(st.sampled_from(("constant", "reflect", "edge")))
    pads = [draw(st.integers(0, min(2, d - 1) if mode == "reflect" else 2)) for d in x.shape * 2]
    shape = [d + pads[i] + pads[i + x.rank] for i, d in enumerate(x.shape)]
    if math.prod(shape) > MAX_NUMEL:
        pads, shape = [0] * (2 * x.rank), list(x.shape)
    inputs = [x, ints(g, pads)]
    if mode == "constant" and draw(st.booleans()):
        inputs.append(g.constant(np.array(draw(st.sampled_from((0.5, -1.0))), np.float32)))
    g.one("Pad", inputs, shape, scale=x.scale, mode=mode)


def reshaping(draw, g: GraphBuilder) -> None:
    """Squeeze, Unsqueeze or Flatten."""
    x = pick(draw, g)
    kind = draw(st.sampled_from(("unsqueeze", "squeeze", "flatten")))
    if kind == "squeeze" and 1 in x.shape:
        ones = [i for i, d in enumerate(x.shape) if d == 1]
        chosen = draw(st.lists(st.sampled_from(ones), min_size=1, unique=True))
        shape = [d for i, d in enumerate(x.shape) if i not in chosen]
        if len(chosen) == len(ones) and draw(st.booleans()):
            g.one("Squeeze", [x], shape, scale=x.scale)  # every 1 squeezed
        else:
            g.one("Squeeze", [x, ints(g, [c - x.rank if draw(st.booleans()) else c for c in chosen])], shape,
                  scale=x.scale)
    elif kind == "flatten":
        a = draw(st.integers(-x.rank, x.rank))
        split_at = a + x.rank if a < 0 else a
        shape = [math.prod(x.shape[:split_at]), math.prod(x.shape[split_at:])]
        g.one("Flatten", [x], shape, scale=x.scale, axis=a)
    else:
        rank = x.rank + draw(st.integers(1, 2))
        new = draw(st.lists(st.integers(0, rank - 1), min_size=rank - x.rank, max_size=rank - x.rank, unique=True))
        rest = iter(x.shape)
        shape = [1 if i in new else next(rest) for i in range(rank)]
        g.one("Unsqueeze", [x, ints(g, [n - rank if draw(st.booleans()) else n for n in new])], shape, scale=x.scale)


def block_input(draw, g: GraphBuilder, block: int) -> Value:
    """A new NCHW input with channels and spatial extents divisible by ``block`` squared / ``block``."""
    n, c = draw(st.sampled_from((1, 2))), block * block * draw(st.sampled_from((1, 2, 3)))
    h, w = (block * draw(st.sampled_from((1, 2, 3, 5))) for _ in range(2))
    return g.input((n, c, h, w))


def depth_space(draw, g: GraphBuilder) -> None:
    b = draw(st.sampled_from((2, 3)))
    if draw(st.booleans()):
        x = pick(draw, g, lambda v: v.rank == 4 and v.shape[1] % (b * b) == 0, lambda d, g: block_input(d, g, b))
        n, c, h, w = x.shape
        g.one("DepthToSpace", [x], (n, c // (b * b), h * b, w * b), scale=x.scale, blocksize=b,
              mode=draw(st.sampled_from(("DCR", "CRD"))))
    else:
        x = pick(draw, g, lambda v: v.rank == 4 and v.shape[2] % b == 0 and v.shape[3] % b == 0,
                 lambda d, g: block_input(d, g, b))
        n, c, h, w = x.shape
        g.one("SpaceToDepth", [x], (n, c * b * b, h // b, w // b), scale=x.scale, blocksize=b)


FAMILIES = {
    "reshape": reshape, "transpose": transpose, "slice": slice_, "concat": concat, "split": split,
    "gather": gather, "expand": expand, "tile": tile, "pad": pad, "reshaping": reshaping,
    "depth_space": depth_space,
}

__all__ = ["FAMILIES", "factors", "ints"]
