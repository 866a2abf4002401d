"""Nearest Resize at near-ties, index for index against onnxruntime.

The cases are chosen where rounding decides: every axis has an output whose exact
(rational) source coordinate is a half or an integer (a tie of the round modes, a step
of floor and ceil, a border of tf_crop_and_resize's region), which f32 arithmetic
misses by an ulp or two either way (1 / (2/7) is 3.4999998). onnxruntime takes a
coordinate within 1e-6 of a half for a tie. Of the sweep's 5,106 cases, 317 have a
coordinate that close to a half but not on it; with exact ties only (and the double sum
of one-element tf_crop_and_resize outputs), 71 cases read another index.

The input counts 0, 1, 2, ... so that the output is the index read (-1: the
extrapolation value). The sweep checks ``ResizeOp.resolve`` and ``ResizeOp.taps``,
which the interpreter and the lowering both use; a few cases run through both whole.
"""

import random
from fractions import Fraction

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper

import dnnf_mlir
from dnnf_mlir import InferenceSession
from dnnf_mlir.ecg.ops.resize import ResizeOp
from dnnf_mlir.ecg.ops.resize_taps import NEAREST_TIE_TOLERANCE, coordinates
from dnnf_mlir.frontend.onnx_importer import import_onnx
from dnnf_mlir.interpreter import interpret

F32 = np.float32
TRANSFORMS = ("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "half_pixel_symmetric",
              "tf_crop_and_resize")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
# How the output shape is given: scales, sizes, or sizes with a keep_aspect_ratio_policy.
INPUTS = ("scales", "sizes", "not_larger", "not_smaller")
ROI_BOUNDS = sorted({Fraction(n, d) for d in (10, 7, 6, 3) for n in range(-d // 2, 3 * d // 2 + 1)})
SCALES = sorted({Fraction(n, 10) for n in range(1, 41)} | {Fraction(n, 4) for n in range(1, 17)}
                | {Fraction(n, d) for d in (3, 6, 7) for n in range(1, 4 * d) if n % d})
CASES_PER_COMBINATION = 60


def exact_coordinates(transform, in_len, out_len, scale, roi):
    """The source coordinate of every output index in exact arithmetic."""
    half = Fraction(1, 2)
    for i in range(out_len):
        if transform == "asymmetric":
            yield i / scale
        elif transform == "align_corners":
            yield Fraction(i * (in_len - 1), out_len - 1) if out_len > 1 else Fraction(0)
        elif transform == "pytorch_half_pixel" and out_len == 1:
            yield Fraction(0)
        elif transform == "half_pixel_symmetric":
            yield Fraction(in_len, 2) * (1 - out_len / (scale * in_len)) + (i + half) / scale - half
        elif transform == "tf_crop_and_resize":
            start, end = roi
            yield (start * (in_len - 1) + i * (end - start) * (in_len - 1) / (out_len - 1) if out_len > 1
                   else (start + end) * (in_len - 1) / 2)
        else:
            yield (i + half) / scale - half


def tied(transform, in_len, out_len, scale, roi) -> bool:
    return any(c.denominator <= 2 for c in exact_coordinates(transform, in_len, out_len, scale, roi))


def axis_rows(transform, by_scales: bool, rng) -> list:
    """(in, out, scale, roi) of single axes with a tie (``scale`` a Fraction)."""
    rows = []
    for in_len in range(1, 17):
        if by_scales:
            for scale in SCALES:
                out_len = int(F32(float(scale)) * F32(in_len))  # onnxruntime's output extent
                if out_len >= 1 and tied(transform, in_len, out_len, scale, (0, 1)):
                    rows.append((in_len, out_len, scale, (Fraction(0), Fraction(1))))
            continue
        for out_len in range(1, 33):
            rois = [(Fraction(0), Fraction(1))]
            if transform == "tf_crop_and_resize":
                rois = rng.sample([(s, e) for s in ROI_BOUNDS for e in ROI_BOUNDS if s < e], 6)
            rows += [(in_len, out_len, Fraction(out_len, in_len), roi) for roi in rois
                     if out_len != in_len and tied(transform, in_len, out_len, Fraction(out_len, in_len), roi)]
    return rows


def near_tie_cases():
    """(transform, nearest mode, input kind, shape, roi, scales or sizes) of 2-d resizes:
    two tied axes, or under a policy a tied axis whose ratio the policy picks and another."""
    rng = random.Random(20261127)
    cases = []
    for transform in TRANSFORMS:
        for kind in INPUTS:
            if kind == "scales" and transform == "tf_crop_and_resize":
                continue  # onnxruntime and the spec disagree on whether the region shrinks the output
            rows = axis_rows(transform, kind == "scales", rng)
            for nearest in NEAREST_MODES:
                for _ in range(CASES_PER_COMBINATION):
                    a, b = rng.choice(rows), rng.choice(rows)
                    roi = [float(a[3][0]), float(b[3][0]), float(a[3][1]), float(b[3][1])]
                    if kind == "scales":
                        values = [float(a[2]), float(b[2])]
                    elif kind == "sizes":
                        values = [a[1], b[1]]
                    else:  # a requested size for b that leaves a's ratio to the policy
                        ratio = Fraction(a[1], a[0])
                        fits = [n for n in range(1, 33) if (Fraction(n, b[0]) >= ratio) == (kind == "not_larger")]
                        if not fits:
                            continue
                        values = [a[1], rng.choice(fits)]
                    cases.append((transform, nearest, kind, (a[0], b[0]), roi, values))
    return cases


def resize_model(transform, nearest, kind, case=None):
    """One 2-d Resize. Without ``case``, roi and scales or sizes are inputs (one session
    serves every case); with it, they are that case's initializers and its shape is static."""
    attrs = {"mode": "nearest", "coordinate_transformation_mode": transform, "nearest_mode": nearest,
             "extrapolation_value": -1.0}
    if kind in ("not_larger", "not_smaller"):
        attrs["keep_aspect_ratio_policy"] = kind
    given, element = ("scales", TensorProto.FLOAT) if kind == "scales" else ("sizes", TensorProto.INT64)
    node = helper.make_node("Resize", ["x", "roi", *([given] if given == "scales" else ["", given])], ["y"], **attrs)
    operands = [("roi", TensorProto.FLOAT, [4]), (given, element, [2])]
    if case is None:
        inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["h", "w"])]
        inputs += [helper.make_tensor_value_info(*operand) for operand in operands]
        constants = []
    else:
        inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(case[3]))]
        constants = [helper.make_tensor(*operand, values) for operand, values in zip(operands, case[4:])]
    graph = helper.make_graph([node], "resize", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              constants)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


def counting(shape):
    return np.arange(np.prod(shape), dtype=F32).reshape(shape)


def onnxruntime_indices(sessions, case):
    transform, nearest, kind, shape, roi, values = case
    key = (transform, nearest, kind)
    if key not in sessions:
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        sessions[key] = onnxruntime.InferenceSession(resize_model(*key).SerializeToString(), options,
                                                     providers=["CPUExecutionProvider"])
    given = {"scales": np.array(values, F32)} if kind == "scales" else {"sizes": np.array(values, np.int64)}
    return sessions[key].run(None, {"x": counting(shape), "roi": np.array(roi, F32), **given})[0]


def resolve(case) -> dict:
    """``ResizeOp.resolve`` of the case's scales or sizes (and policy)."""
    _, _, kind, shape, _, values = case
    if kind == "scales":
        return ResizeOp.resolve(shape, scales=values)
    return ResizeOp.resolve(shape, sizes=values, keep_aspect_ratio_policy="stretch" if kind == "sizes" else kind)


def dnnf_indices(case):
    """The indices ``ResizeOp.taps`` reads for ``case`` (-1 where it extrapolates)."""
    transform, nearest, kind, shape, roi, values = case
    resolved = resolve(case)
    attrs = {**ResizeOp.DEFAULTS, "coordinate_transformation_mode": transform, "nearest_mode": nearest,
             "roi": np.array(roi, F32), **resolved}
    taps = ResizeOp.taps(shape, attrs)
    read, inside = [], []
    for axis, in_len in enumerate(shape):
        out_len = resolved["sizes"][axis]
        read.append(taps[axis].indices[:, 0] if axis in taps else np.arange(out_len))
        inside.append(taps[axis].inside if axis in taps and taps[axis].inside is not None else np.ones(out_len, bool))
    flat = read[0][:, None] * shape[1] + read[1][None, :]
    return np.where(inside[0][:, None] & inside[1][None, :], flat, -1).astype(F32)


def off_by_ulps(case) -> bool:
    """Whether some f32 coordinate of ``case`` misses its exact half by less than the tolerance."""
    transform, _, kind, shape, roi, values = case
    resolved = resolve(case)
    for axis, in_len in enumerate(shape):
        coords = coordinates(resolved["sizes"][axis], in_len, resolved["scales"][axis], transform,
                             (roi[axis], roi[2 + axis]))
        miss = np.abs(coords - np.floor(coords) - F32(0.5))
        if np.any((miss > 0) & (miss <= NEAREST_TIE_TOLERANCE)):
            return True
    return False


def test_near_tie_sweep_matches_onnxruntime():
    """Every case (5,106) reads what onnxruntime reads."""
    cases, sessions = near_tie_cases(), {}
    wrong = [case for case in cases if not np.array_equal(dnnf_indices(case), onnxruntime_indices(sessions, case))]
    assert not wrong, f"{len(wrong)} of {len(cases)} near-tie cases differ from onnxruntime, e.g. {wrong[:3]}"
    assert len(cases) > 4000
    assert sum(map(off_by_ulps, cases)) > 250  # 317: the near-ties an exact-tie rule would round apart


@pytest.mark.parametrize("index, half", [(1, 0.5), (3, 0.5), (3, 1.5), (5, 7.5), (15, 7.5)])
def test_tie_tolerance_boundary_matches_onnxruntime(index, half):
    """Asymmetric coordinates ``index / scale`` walked ulp by ulp across ``half`` (through
    the scale): onnxruntime's ties end between 2^-20 and 1.01e-6 from the half; ours too."""
    start = F32(index) / F32(half)
    scales = {start}
    up = down = start
    for _ in range(60):
        up, down = np.nextafter(up, F32(np.inf)), np.nextafter(down, F32(0))
        scales |= {up, down}
    sessions, misses = {}, set()
    for scale in sorted(scales):
        in_len = next(n for n in range(int(half) + 2, 64) if int(scale * F32(n)) > index)  # both neighbours there
        for nearest in ("round_prefer_floor", "round_prefer_ceil"):
            case = ("asymmetric", nearest, "scales", (1, in_len), [0.0, 0.0, 1.0, 1.0], [1.0, float(scale)])
            assert np.array_equal(dnnf_indices(case), onnxruntime_indices(sessions, case)), (scale, nearest)
        misses.add(abs(float(F32(index) / scale) - half))
    assert min(m for m in misses if m > NEAREST_TIE_TOLERANCE) < 2e-6  # both sides of the boundary were walked
    assert max(m for m in misses if m <= NEAREST_TIE_TOLERANCE) > 4e-7


# (transform, nearest mode, input kind, shape, roi, scales or sizes): the CI fuzz seed 20261125's
# Resize (an f32 coordinate 15.000002 past the region's end: extrapolated), a near-tie of each
# round mode, the one-element tf_crop_and_resize output, and a shape kept at scale 1.1 (a copy).
WHOLE_CASES = [
    ("tf_crop_and_resize", "round_prefer_ceil", "not_larger", (16, 8), [-0.1, -0.1, 1.0, 1.0], [4, 3]),
    ("asymmetric", "round_prefer_ceil", "sizes", (3, 14), [0.0, 0.0, 1.0, 1.0], [5, 4]),
    ("half_pixel", "round_prefer_ceil", "sizes", (14, 11), [0.0, 0.0, 1.0, 1.0], [1, 23]),
    ("half_pixel", "round_prefer_floor", "not_smaller", (12, 16), [0.0, 0.0, 1.0, 1.0], [14, 2]),
    ("tf_crop_and_resize", "floor", "sizes", (7, 8), [0.5, -2 / 7, 5 / 6, 6 / 7], [1, 1]),
    ("half_pixel", "floor", "scales", (3, 4), [0.0, 0.0, 1.0, 1.0], [1.25, 1.1666666]),
]


@pytest.mark.parametrize("case", WHOLE_CASES, ids=lambda case: f"{case[0]}-{case[1]}-{case[2]}")
def test_interpreted_and_compiled_match_onnxruntime(case):
    """The interpreter and the compiled code (both from ``ResizeOp.taps``) equal onnxruntime."""
    want = onnxruntime_indices({}, case)
    model, x = resize_model(*case[:3], case), counting(case[3])
    with dnnf_mlir.make_context() as context:
        np.testing.assert_array_equal(interpret(import_onnx(model, context=context), [x])[0], want)
    np.testing.assert_array_equal(InferenceSession(model, use_cache=False, threads=1).run(None, {"x": x})[0], want)
