"""The Resize and GridSample families. Resize: every interpolation mode, coordinate transformation and option
(scales or sizes, ``axes``, ``keep_aspect_ratio_policy``, antialiasing, and
tf_crop_and_resize's region and extrapolation value) on the ranks onnxruntime takes.

onnxruntime decides what is drawn: linear resizes the spatial axes of a 4-d or 5-d
tensor, cubic those of a 4-d one, nearest any of them (batch and channels are never
resized); tf_crop_and_resize gets sizes (with scales, onnxruntime and the ONNX spec
disagree on whether the region shrinks the output) and no antialiasing.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from .draws import MAX_NUMEL, dims, pick
from .graph import FLOAT, GraphBuilder

TRANSFORMS = (
    "half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "half_pixel_symmetric", "tf_crop_and_resize",
)
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
SCALES = (2.0, 0.5, 3.0, 1.5, 0.6)
RANKS = {"nearest": (4, 3, 5), "linear": (4, 5), "cubic": (4,)}
SPATIAL = (1, 2, 3, 4, 5, 7, 8, 16, 17)  # input extents of the resized axes


def _extent(size: int, scale: float) -> int:
    """onnxruntime's output extent for ``scale``: the f32 product, truncated."""
    return int(np.float32(scale) * np.float32(size))


def _kept_aspect(sizes: list, extents: list, policy: str) -> list:
    """The extents ``keep_aspect_ratio_policy`` gives for the requested ``sizes``."""
    ratios = [np.float32(s) / np.float32(d) for s, d in zip(sizes, extents)]
    scale = np.float32(min(ratios) if policy == "not_larger" else max(ratios))
    return [int(math.floor(float(scale * np.float32(d)) + 0.5)) for d in extents]


def _fitting_scales(draw, extents: list, room: float):
    """A scale per axis, none emptying it and all together growing the tensor at most
    ``room`` times; None when some axis has none."""
    scales, grown = [], 1.0
    for d in extents:
        fitting = [s for s in SCALES if _extent(d, s) >= 1 and grown * _extent(d, s) / d <= room]
        if not fitting:
            return None
        scales.append(draw(st.sampled_from(fitting)))
        grown *= _extent(d, scales[-1]) / d
    return scales


def resize(draw, g: GraphBuilder) -> None:
    mode = draw(st.sampled_from(("nearest", "linear", "cubic")))
    rank = draw(st.sampled_from(RANKS[mode]))
    x = pick(draw, g, lambda v: v.rank == rank and all(d in SPATIAL for d in v.shape[2:]),
             lambda d, g: g.input(dims(d, 2, cap=8) + dims(d, rank - 2, cap=MAX_NUMEL // 64, choices=SPATIAL)))
    axes = [a for a in range(2, rank) if draw(st.booleans())] or [rank - 1]
    transform = draw(st.sampled_from(TRANSFORMS))
    attrs = {"mode": mode, "coordinate_transformation_mode": transform}
    if mode == "nearest":
        attrs["nearest_mode"] = draw(st.sampled_from(NEAREST_MODES))
    if mode == "cubic":
        attrs["cubic_coeff_a"] = draw(st.sampled_from((-0.75, -0.5)))
        attrs["exclude_outside"] = draw(st.integers(0, 1))
    if mode != "nearest" and transform != "tf_crop_and_resize" and draw(st.booleans()):
        attrs["antialias"] = 1
    extents = [x.shape[a] for a in axes]
    room = MAX_NUMEL // x.numel  # how much the output may grow
    scales = _fitting_scales(draw, extents, room)
    by_sizes = transform == "tf_crop_and_resize" or scales is None or draw(st.booleans())
    if by_sizes:
        requested = []
        for d in extents:
            grown = math.prod(requested) / math.prod(extents[:len(requested)])
            requested.append(draw(st.sampled_from([s for s in (1, 2, 3, 5, 8, 16, 2 * d) if grown * s / d <= room])))
        out = requested
        if len(axes) > 1 and draw(st.booleans()):
            policy = draw(st.sampled_from(("not_larger", "not_smaller")))
            kept = _kept_aspect(requested, extents, policy)
            if min(kept) >= 1 and math.prod(kept) / math.prod(extents) <= room:
                attrs["keep_aspect_ratio_policy"], out = policy, kept
    else:
        out = [_extent(d, s) for d, s in zip(extents, scales)]
    shape = list(x.shape)
    for a, extent in zip(axes, out):
        shape[a] = extent
    # The operands of the resized axes only (``axes``), or of every axis.
    listed = draw(st.booleans()) or "keep_aspect_ratio_policy" in attrs
    if listed:
        # (onnxruntime ignores negative axes under a keep_aspect_ratio_policy)
        negative = "keep_aspect_ratio_policy" not in attrs and draw(st.booleans())
        attrs["axes"] = [a - rank if negative else a for a in axes]
    covered = axes if listed else list(range(rank))
    inputs = [x, "", ""]
    if transform == "tf_crop_and_resize":
        starts = [draw(st.sampled_from((0.0, 0.2, -0.1))) if a in axes else 0.0 for a in covered]
        ends = [draw(st.sampled_from((1.0, 0.7, 1.2))) if a in axes else 1.0 for a in covered]
        inputs[1] = g.constant(np.array(starts + ends, FLOAT))
        attrs["extrapolation_value"] = draw(st.sampled_from((0.0, 0.5)))
    if by_sizes:
        inputs.append(g.constant(np.array([shape[a] if a in axes else x.shape[a] for a in covered], np.int64)))
        if "keep_aspect_ratio_policy" in attrs:
            inputs[3] = g.constant(np.array(requested, np.int64))
    else:
        inputs[2] = g.constant(np.array([scales[axes.index(a)] if a in axes else 1.0 for a in covered], FLOAT))
    # Cubic interpolation overshoots its taps by up to a quarter.
    g.one("Resize", inputs, tuple(shape), scale=x.scale * (1.25 if mode == "cubic" else 1.0), **attrs)


GRID_MODES = {4: ("nearest", "linear", "cubic"), 5: ("nearest", "linear")}  # onnxruntime: cubic on 4-d only


def grid_sample(draw, g: GraphBuilder) -> None:
    """GridSample of a 4-d or 5-d value at a grid input of normals times 0.7 (mostly
    inside, a few pixels past every border), every mode, padding mode and corner
    alignment; the output's spatial extents drawn apart from the input's."""
    rank = draw(st.sampled_from((4, 5)))
    x = pick(draw, g, lambda v: v.rank == rank and v.numel <= MAX_NUMEL // 4,
             lambda d, g: g.input(dims(d, 2, cap=8) + dims(d, rank - 2, cap=MAX_NUMEL // 64, choices=SPATIAL)))
    batch, channels = x.shape[:2]
    spatial = dims(draw, rank - 2, cap=max(1, MAX_NUMEL // (4 * batch * channels)), choices=SPATIAL)
    grid = g.input((batch, *spatial, rank - 2), scale=0.7)
    mode = draw(st.sampled_from(GRID_MODES[rank]))
    # onnxruntime's cubic with border padding is not ONNX's (whose reference dnnf follows):
    # up to 0.3 apart on normal data.
    padding = draw(st.sampled_from(("zeros", "reflection") if mode == "cubic" else ("zeros", "border", "reflection")))
    g.one("GridSample", [x, grid], (batch, channels, *spatial), scale=x.scale * (1.25 if mode == "cubic" else 1.0),
          mode=mode, padding_mode=padding, align_corners=draw(st.integers(0, 1)))


FAMILIES = {"resize": resize, "grid_sample": grid_sample}

__all__ = ["FAMILIES", "grid_sample", "resize"]
