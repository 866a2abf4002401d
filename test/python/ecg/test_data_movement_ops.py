"""Data-movement ECG ops: reference semantics and shapes against onnxruntime, verifier errors, MLIR."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper

import dnnf_mlir
from dnnf_mlir._mlir import MLIRError, func, ir
from dnnf_mlir.ecg import MappingType, TensorSpec, VerificationError, to_mlir
from dnnf_mlir.ecg.ops.one_to_many import ExpandOp, GatherElementsOp, GatherOp, TileOp
from dnnf_mlir.ecg.ops.reshape import FlattenOp, ReshapeOp, SqueezeOp, UnsqueezeOp
from dnnf_mlir.ecg.ops.resize import ResizeOp
from dnnf_mlir.ecg.ops.resize_taps import nearest_indices
from dnnf_mlir.ecg.ops.shuffle import DepthToSpaceOp, SpaceToDepthOp, TransposeOp
from dnnf_mlir.ecg.ops.slicing import ConcatOp, PadOp, SliceOp, SplitOp

INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min


# ----------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------


class Const:
    """An ONNX input given as an initializer (the importer needs it constant)."""

    def __init__(self, values, dtype=np.int64):
        self.array = np.asarray(values, dtype=dtype)


def ints(values):
    return Const(values, np.int64)


def data(*shape, dtype=np.float32):
    """Distinct values, so that any misplaced element shows."""
    n = int(np.prod(shape, dtype=np.int64))
    values = np.arange(n) if dtype != np.bool_ else np.arange(n) % 3 == 0
    if np.dtype(dtype).kind == "f":
        values = values * 1.25 - 3.5
    return np.asarray(values).astype(dtype).reshape(shape)


def run_onnx(op_type, inputs, attrs=None, *, opset=13, num_outputs=1):
    """Run a one-node model; arrays are graph inputs, Consts initializers, None omitted inputs."""
    node_inputs, graph_inputs, initializers, feeds = [], [], [], {}
    inputs = list(inputs)
    while inputs and inputs[-1] is None:
        inputs.pop()
    for i, value in enumerate(inputs):
        name = f"in{i}"
        if value is None:
            node_inputs.append("")
            continue
        node_inputs.append(name)
        if isinstance(value, Const):
            initializers.append(numpy_helper.from_array(value.array, name))
        else:
            elem = helper.np_dtype_to_tensor_dtype(value.dtype)
            graph_inputs.append(helper.make_tensor_value_info(name, elem, value.shape))
            feeds[name] = value
    out_elem = graph_inputs[0].type.tensor_type.elem_type
    outputs = [f"out{i}" for i in range(num_outputs)]
    node = helper.make_node(op_type, node_inputs, outputs, **(attrs or {}))
    graph = helper.make_graph(
        [node], "g", graph_inputs, [helper.make_tensor_value_info(o, out_elem, None) for o in outputs],
        initializer=initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def check(op_cls, arrays, attrs, expected):
    """``infer`` gives onnxruntime's shapes and ``reference`` its exact values."""
    specs = [TensorSpec.of(a) for a in arrays]
    full = op_cls.complete_attrs(specs, attrs)
    results = op_cls.infer(specs, full)
    assert [r.shape for r in results] == [e.shape for e in expected]
    assert [r.dtype for r in results] == [e.dtype for e in expected]
    got = op_cls.reference(list(arrays), full, results)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape
        np.testing.assert_array_equal(g, e, strict=True)
    assert op_cls.count_flops(specs, results, full) == 0


# ----------------------------------------------------------------------
# Reorganize
# ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape, onnx_shape, allowzero",
    [
        ((2, 3, 4), [4, -1], 0),
        ((2, 3, 4), [0, -1], 0),
        ((2, 3, 4), [-1], 0),
        ((2, 3, 4), [0, 0, 2, 2], 0),
        ((2, 3, 4), [3, 1, -1, 2], 0),
        ((6,), [1, 2, 3], 1),
        ((0, 3), [3, 0], 1),
        ((0, 3), [-1, 0], 0),
        ((1, 1), [], 0),  # to a scalar
    ],
)
def test_reshape(shape, onnx_shape, allowzero):
    x = data(*shape)
    expected = run_onnx("Reshape", [x, ints(onnx_shape)], {"allowzero": allowzero}, opset=14)
    resolved = ReshapeOp.resolve_shape(shape, onnx_shape, allowzero)
    check(ReshapeOp, [x], {"shape": resolved}, expected)


@pytest.mark.parametrize("axis", [0, 1, 2, 3, -1, -3])
def test_flatten(axis):
    x = data(2, 3, 4)
    check(FlattenOp, [x], {"axis": axis}, run_onnx("Flatten", [x], {"axis": axis}))


def test_flatten_default_axis():
    x = data(2, 3, 4, dtype=np.int64)
    check(FlattenOp, [x], {}, run_onnx("Flatten", [x]))


@pytest.mark.parametrize("axes", [[0], [-1], [0, 2], [2, -4], None])
def test_squeeze(axes):
    x = data(1, 3, 1, 1)
    expected = run_onnx("Squeeze", [x, None if axes is None else ints(axes)])
    check(SqueezeOp, [x], {} if axes is None else {"axes": axes}, expected)


@pytest.mark.parametrize("axes", [[0], [-1], [1, 3], [-1, 0], [4, 0, 2]])
def test_unsqueeze(axes):
    x = data(3, 4, dtype=np.int32)
    check(UnsqueezeOp, [x], {"axes": axes}, run_onnx("Unsqueeze", [x, ints(axes)]))


SLICE_CASES = [
    # starts, ends, axes, steps
    ([1, 0], [3, 4], [0, 1], [1, 2]),
    ([-3], [-1], [1], None),
    ([0], [INT64_MAX], [-1], [3]),
    ([-1], [INT64_MIN], [1], [-1]),
    ([4, 10], [-100, 0], [0, 1], [-2, -3]),
    ([3], [1], [0], [1]),  # empty
    ([1], [3], [0], [-1]),  # empty with a negative step
    ([2, 1], [1000, 3], [1, 0], [1, 1]),  # unsorted axes
    ([1, 1, 1], [-1, -1, -1], None, None),  # default axes and steps
    ([-100], [100], [2], [-1]),  # full reverse, clamped from both sides
]


@pytest.mark.parametrize("starts, ends, axes, steps", SLICE_CASES)
def test_slice(starts, ends, axes, steps):
    x = data(4, 6, 5)
    inputs = [x, ints(starts), ints(ends), None if axes is None else ints(axes), None if steps is None else ints(steps)]
    expected = run_onnx("Slice", inputs)
    attrs = SliceOp.normalize(x.shape, starts, ends, axes, steps)
    check(SliceOp, [x], attrs, expected)


def test_slice_default_axes_and_steps():
    x = data(4, 6)
    expected = run_onnx("Slice", [x, ints([1, 2]), ints([3, 5])])
    check(SliceOp, [x], {"starts": [1, 2], "ends": [3, 5]}, expected)


def test_slice_negative_step_through_index_zero():
    x = data(5)
    attrs = SliceOp.normalize(x.shape, [3], [INT64_MIN], [0], [-1])
    assert attrs == {"starts": [3], "ends": [-1], "axes": [0], "steps": [-1]}
    check(SliceOp, [x], attrs, [x[3::-1]])


@pytest.mark.parametrize(
    "shapes, axis",
    [([(2, 3), (4, 3)], 0), ([(2, 1, 3), (2, 4, 3)], 1), ([(2, 3), (2, 5)], -1), ([(3,), (3,)], 0)],
)
def test_concat(shapes, axis):
    xs = [data(*s) + i for i, s in enumerate(shapes)]
    check(ConcatOp, xs, {"axis": axis}, run_onnx("Concat", xs, {"axis": axis}))


def test_concat_bool():
    xs = [data(2, 2, dtype=np.bool_), ~data(2, 3, dtype=np.bool_)]
    check(ConcatOp, xs, {"axis": 1}, run_onnx("Concat", xs, {"axis": 1}))


@pytest.mark.parametrize(
    "shape, axis, split, opset, attrs",
    [
        ((6, 4), 0, [2, 3, 1], 13, None),  # uneven sizes from a split input
        ((2, 4), -1, [1, 3], 13, None),
        ((2, 6), 1, None, 13, 3),  # equal split by the number of outputs
        ((7, 2), 0, None, 18, 3),  # ONNX 18 num_outputs: last piece smaller
        ((2, 10), -1, None, 18, 4),
        ((3, 4), 1, [4], 13, None),
    ],
)
def test_split(shape, axis, split, opset, attrs):
    x = data(*shape)
    onnx_attrs = {"axis": axis}
    if split is not None:
        num = len(split)
        expected = run_onnx("Split", [x, ints(split)], onnx_attrs, opset=opset, num_outputs=num)
        sizes = split
    else:
        num = attrs
        if opset >= 18:
            onnx_attrs["num_outputs"] = num
        expected = run_onnx("Split", [x], onnx_attrs, opset=opset, num_outputs=num)
        sizes = SplitOp.resolve_split(shape[axis], num)
    check(SplitOp, [x], {"axis": axis, "split": sizes}, expected)


@pytest.mark.parametrize(
    "shape, pads, mode, value, dtype",
    [
        ((2, 3), [1, 2, 0, 1], "constant", 1.5, np.float32),
        ((2, 3), [0, 0, 0, 0], "constant", 0.0, np.float32),
        ((2, 3, 4), [1, 0, 2, 0, 1, 3], "constant", 7.0, np.int64),
        ((3, 4), [2, 3, 1, 3], "reflect", 0.0, np.float32),
        ((3, 4), [2, 3, 1, 3], "edge", 0.0, np.float32),
        ((1, 2, 3, 3), [0, 0, 1, 2, 0, 0, 2, 1], "reflect", 0.0, np.float32),
        ((1, 2, 3, 3), [0, 1, 1, 2, 1, 0, 2, 1], "edge", 0.0, np.int32),
        ((4, 5), [-1, 2, 1, -2], "constant", -2.0, np.float32),  # negative pads crop
        ((4, 5), [-1, 0, 0, -3], "edge", 0.0, np.float32),
        ((4, 5), [-1, 2, 0, -2], "reflect", 0.0, np.float32),
    ],
)
def test_pad(shape, pads, mode, value, dtype):
    x = data(*shape, dtype=dtype)
    inputs = [x, ints(pads)]
    if mode == "constant":
        inputs.append(Const(value, dtype))
    expected = run_onnx("Pad", inputs, {"mode": mode})
    attrs = {"mode": mode, "pads": PadOp.resolve_pads(len(shape), pads), "constant_value": value}
    check(PadOp, [x], attrs, expected)


def test_pad_default_mode_and_value():
    x = data(2, 3)
    check(PadOp, [x], {"pads": [1, 1, 1, 1]}, run_onnx("Pad", [x, ints([1, 1, 1, 1])]))


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
def test_pad_axes_opset18(mode):
    x = data(2, 3, 4)
    axes, pads = [-1, 1], [2, 1, 1, 0]
    expected = run_onnx("Pad", [x, ints(pads), None, ints(axes)], {"mode": mode}, opset=18)
    full = PadOp.resolve_pads(3, pads, axes)
    assert full == [0, 1, 2, 0, 0, 1]
    check(PadOp, [x], {"mode": mode, "pads": full}, expected)


@pytest.mark.parametrize("pads", [[1, 2, 2, 3], [-1, 3, 1, -2], [1, -1, 2, 6]])
def test_pad_wrap_opset19(pads):
    x = data(4, 5)
    expected = run_onnx("Pad", [x, ints(pads)], {"mode": "wrap"}, opset=19)
    check(PadOp, [x], {"mode": "wrap", "pads": pads}, expected)


# ----------------------------------------------------------------------
# Shuffle
# ----------------------------------------------------------------------


@pytest.mark.parametrize("perm", [None, [1, 0, 2], [2, 0, 1], [0, 1, 2]])
def test_transpose(perm):
    x = data(2, 3, 4)
    expected = run_onnx("Transpose", [x], None if perm is None else {"perm": perm})
    check(TransposeOp, [x], {} if perm is None else {"perm": perm}, expected)


@pytest.mark.parametrize("shape, blocksize", [((1, 8, 2, 3), 2), ((2, 18, 2, 2), 3), ((1, 4, 1, 1), 1)])
@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space(shape, blocksize, mode):
    x = data(*shape)
    expected = run_onnx("DepthToSpace", [x], {"blocksize": blocksize, "mode": mode})
    check(DepthToSpaceOp, [x], {"blocksize": blocksize, "mode": mode}, expected)


def test_depth_to_space_default_mode_is_dcr():
    x = data(1, 8, 2, 2)
    check(DepthToSpaceOp, [x], {"blocksize": 2}, run_onnx("DepthToSpace", [x], {"blocksize": 2}))


@pytest.mark.parametrize("shape, blocksize", [((1, 2, 4, 6), 2), ((2, 3, 3, 6), 3)])
def test_space_to_depth(shape, blocksize):
    x = data(*shape)
    expected = run_onnx("SpaceToDepth", [x], {"blocksize": blocksize})
    check(SpaceToDepthOp, [x], {"blocksize": blocksize}, expected)


# ----------------------------------------------------------------------
# One-to-Many
# ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape, onnx_shape",
    [((3, 1), [2, 1, 4]), ((1,), [3]), ((2, 3), [1, 1]), ((3, 1), [3, 4]), ((2, 1, 3), [2, 1, 5, 1]), ((), [2, 2])],
)
def test_expand(shape, onnx_shape):
    x = data(*shape)
    expected = run_onnx("Expand", [x, ints(onnx_shape)])
    check(ExpandOp, [x], {"shape": ExpandOp.resolve_shape(shape, onnx_shape)}, expected)


@pytest.mark.parametrize("shape, repeats", [((2, 3), [2, 1]), ((2, 3), [1, 3]), ((2, 3), [0, 2]), ((2, 1, 2), [1, 2, 3])])
def test_tile(shape, repeats):
    x = data(*shape, dtype=np.int64)
    check(TileOp, [x], {"repeats": repeats}, run_onnx("Tile", [x, ints(repeats)]))


@pytest.mark.parametrize(
    "shape, indices, axis, idtype",
    [
        ((5, 4), [[0, -1], [3, -5]], 0, np.int64),
        ((5, 4), [-1, 0, 2, -4], 1, np.int64),
        ((5, 4), [3, -2], 1, np.int32),
        ((5, 4), 2, 0, np.int32),  # scalar index drops the axis
        ((5, 4), -1, -1, np.int64),
        ((2, 3, 4), [[1, -3], [0, 2]], -2, np.int64),
    ],
)
def test_gather(shape, indices, axis, idtype):
    x = data(*shape)
    idx = np.asarray(indices, dtype=idtype)
    expected = run_onnx("Gather", [x, idx], {"axis": axis})
    check(GatherOp, [x, idx], {"axis": axis}, expected)


def test_gather_default_axis():
    x = data(4, 2)
    idx = np.array([-1, 1], np.int64)
    check(GatherOp, [x, idx], {}, run_onnx("Gather", [x, idx]))


@pytest.mark.parametrize(
    "shape, indices, axis",
    [
        ((3, 4), [[0, -1, 2, 1], [-3, 0, 1, 2]], 0),
        ((3, 4), [[3, -4], [0, 0], [-1, 2]], 1),
        ((3, 4), [[1, 0], [2, 1]], -1),  # smaller than data outside the axis
        ((2, 2, 3), [[[0, 1, -1]], [[-2, 0, 1]]], 2),
    ],
)
def test_gather_elements(shape, indices, axis):
    x = data(*shape)
    idx = np.asarray(indices, dtype=np.int64)
    expected = run_onnx("GatherElements", [x, idx], {"axis": axis})
    check(GatherElementsOp, [x, idx], {"axis": axis}, expected)


def test_gather_index_out_of_range_is_a_runtime_error():
    x = data(3, 2)
    idx = np.array([0, 3], np.int64)
    spec = GatherOp.infer([TensorSpec.of(x), TensorSpec.of(idx)], {"axis": 0})
    with pytest.raises(IndexError, match=r"gather index 3 is out of range \[-3, 3\)"):
        GatherOp.reference([x, idx], {"axis": 0}, spec)


RESIZE_TRANSFORMS = ["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric"]


def run_resize(x, attrs, scales=None, sizes=None, opset=19, roi=None):
    inputs = [x, None if roi is None else Const(roi, np.float32), None if scales is None else Const(scales, np.float32),
              None if sizes is None else ints(sizes)]
    return run_onnx("Resize", inputs, attrs, opset=opset)


def check_resize(x, ecg_attrs, expected, exact):
    if exact:
        check(ResizeOp, [x], ecg_attrs, expected)
        return
    specs = [TensorSpec.of(x)]
    full = ResizeOp.complete_attrs(specs, ecg_attrs)
    (result,) = ResizeOp.infer(specs, full)
    assert result.shape == expected[0].shape and result.dtype == expected[0].dtype
    (got,) = ResizeOp.reference([x], full, [result])
    assert got.dtype == expected[0].dtype
    # onnxruntime interpolates in f32, the reference in f64: they agree to a few ulps of
    # the input's largest value (a cubic sum of values near 4 that cancels to 0.0025 is
    # 2.2e-6 off in onnxruntime's f32, its arithmetic replayed in f32 matching it exactly).
    np.testing.assert_allclose(got, expected[0], rtol=2e-6, atol=8 * np.finfo(np.float32).eps * np.abs(x).max())


def resize_input(*shape, dtype=np.float32):
    return (np.random.RandomState(0).rand(*shape) * 4).astype(dtype)


@pytest.mark.parametrize("transform", RESIZE_TRANSFORMS)
@pytest.mark.parametrize("nearest_mode", ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
@pytest.mark.parametrize("scales", [[1, 1, 2, 2], [1, 1, 1.5, 0.6], [1, 1, 0.7, 1.7]])
def test_resize_nearest_scales(transform, nearest_mode, scales):
    x = resize_input(1, 2, 5, 4)
    attrs = {"mode": "nearest", "coordinate_transformation_mode": transform, "nearest_mode": nearest_mode}
    expected = run_resize(x, attrs, scales=scales)
    check_resize(x, {**attrs, **ResizeOp.resolve(x.shape, scales=scales)}, expected, exact=True)


@pytest.mark.parametrize("transform", RESIZE_TRANSFORMS)
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("sizes", [[1, 2, 9, 3], [1, 2, 1, 1], [1, 2, 10, 8]])
def test_resize_sizes(transform, mode, sizes):
    x = resize_input(1, 2, 5, 4)
    attrs = {"mode": mode, "coordinate_transformation_mode": transform}
    expected = run_resize(x, attrs, sizes=sizes)
    check_resize(x, {**attrs, "sizes": ResizeOp.resolve(x.shape, sizes=sizes)["sizes"]}, expected, exact=mode == "nearest")


@pytest.mark.parametrize("transform", RESIZE_TRANSFORMS)
@pytest.mark.parametrize("mode, cubic_coeff_a, exclude_outside", [("linear", -0.75, 0), ("cubic", -0.75, 0), ("cubic", -0.5, 1)])
@pytest.mark.parametrize("scales", [[1, 1, 2, 2], [1, 1, 1.5, 0.6], [1, 1, 0.5, 3.0]])
def test_resize_interpolating(transform, mode, cubic_coeff_a, exclude_outside, scales):
    x = resize_input(1, 2, 5, 4)
    attrs = {"mode": mode, "coordinate_transformation_mode": transform, "cubic_coeff_a": cubic_coeff_a,
             "exclude_outside": exclude_outside}
    expected = run_resize(x, attrs, scales=scales)
    check_resize(x, {**attrs, **ResizeOp.resolve(x.shape, scales=scales)}, expected, exact=False)


@pytest.mark.parametrize("transform", RESIZE_TRANSFORMS)
@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("exclude_outside", [0, 1])
@pytest.mark.parametrize("scales", [[1, 1, 0.5, 0.3], [1, 1, 0.6, 2.5]])
def test_resize_antialias(transform, mode, exclude_outside, scales):
    """The filter widened by 1/scale along down-sampled axes, up-sampled ones as without."""
    x = resize_input(1, 2, 9, 8)
    attrs = {"mode": mode, "coordinate_transformation_mode": transform, "exclude_outside": exclude_outside,
             "antialias": 1}
    expected = run_resize(x, attrs, scales=scales)
    check_resize(x, {**attrs, **ResizeOp.resolve(x.shape, scales=scales)}, expected, exact=False)


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("roi", [[0.4, 0.6, 0.6, 0.8], [-0.2, 0.1, 1.3, 0.9]])
@pytest.mark.parametrize("sizes", [[3, 3], [7, 1], [5, 3], [5, 6]])
def test_resize_tf_crop_and_resize(mode, roi, sizes):
    """Samples of the region of interest; outside the input, the extrapolation value.
    An axis that keeps its size is left alone, its region too (onnxruntime's rule)."""
    x = resize_input(2, 1, 5, 6)
    attrs = {"mode": mode, "coordinate_transformation_mode": "tf_crop_and_resize", "extrapolation_value": 9.0,
             "axes": [2, 3]}
    expected = run_resize(x, attrs, sizes=sizes, roi=roi, opset=18)
    resolved = {**ResizeOp.resolve(x.shape, sizes=sizes, axes=[2, 3]), "roi": ResizeOp.full_roi(4, roi, [2, 3])}
    check_resize(x, {**{k: v for k, v in attrs.items() if k != "axes"}, **resolved}, expected, exact=mode == "nearest")


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_resize_keeping_the_shape_copies(mode):
    """Scales that keep every extent (3 * 1.25 and 4 * 1.1666666 truncate to 3 and 4):
    onnxruntime copies the input rather than resampling it at those scales."""
    x, scales = resize_input(1, 1, 3, 4), [1, 1, 1.25, 1.1666666]
    expected = run_resize(x, {"mode": mode}, scales=scales)
    np.testing.assert_array_equal(expected[0], x)
    check_resize(x, {"mode": mode, **ResizeOp.resolve(x.shape, scales=scales)}, expected, exact=True)


@pytest.mark.parametrize("nearest_mode", ["round_prefer_floor", "round_prefer_ceil"])
def test_resize_nearest_ties_within_a_tolerance(nearest_mode):
    """onnxruntime takes a coordinate within 1e-6 of a half for a tie (each value here
    measured against it): 0.49999997 (0.5 - 2^-25), 2.4999998 and 7.499999 round as 2.5
    does; 0.4999988 and 0.5000012 are no ties and round to the nearest integer."""
    coords = np.array([0.5 - 2.0 ** -25, 2.5 - 2.0 ** -22, 2.5, 7.499999, 0.4999988, 0.5000012], np.float32)
    ties = [0, 2, 2, 7] if nearest_mode == "round_prefer_floor" else [1, 3, 3, 8]
    assert nearest_indices(coords, nearest_mode, False).tolist() == [*ties, 0, 1]


@pytest.mark.parametrize("policy", ["stretch", "not_larger", "not_smaller"])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_resize_axes_and_keep_aspect_ratio_opset18(policy, mode):
    # onnxruntime ignores negative axes under not_larger/not_smaller (onnx shape inference
    # agrees with ``resolve``), so this compares with non-negative, unsorted axes.
    x = resize_input(1, 2, 5, 4)
    attrs = {"mode": mode, "axes": [3, 2], "keep_aspect_ratio_policy": policy}
    expected = run_resize(x, attrs, sizes=[7, 8], opset=18)
    resolved = ResizeOp.resolve(x.shape, sizes=[7, 8], axes=[3, 2], keep_aspect_ratio_policy=policy)
    check_resize(x, {"mode": mode, **resolved}, expected, exact=mode == "nearest")


def test_resize_negative_axes():
    x = resize_input(1, 2, 5, 4)
    expected = run_resize(x, {"axes": [-1, 2]}, sizes=[7, 8], opset=18)
    check_resize(x, ResizeOp.resolve(x.shape, sizes=[7, 8], axes=[-1, 2]), expected, exact=True)
    expected = run_resize(x, {"axes": [-1, -2]}, scales=[1.5, 0.5], opset=18)
    check_resize(x, ResizeOp.resolve(x.shape, scales=[1.5, 0.5], axes=[-1, -2]), expected, exact=True)


def test_resize_default_attributes_and_integer_input():
    x = data(2, 3, 5, 4, dtype=np.int32)
    expected = run_resize(x, {}, scales=[1, 1, 2, 3])
    check_resize(x, ResizeOp.resolve(x.shape, scales=[1, 1, 2, 3]), expected, exact=True)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("scales", [[1, 1, 2, 2], [1, 1, 0.5, 0.6], [1, 1, 1.5, 2.5]])
def test_resize_opset10(mode, scales):
    """Resize-10 (like Upsample): asymmetric coordinates, "simple" nearest rounding."""
    x = resize_input(1, 2, 5, 4)
    expected = run_onnx("Resize", [x, Const(scales, np.float32)], {"mode": mode}, opset=10)
    attrs = {"mode": mode, "coordinate_transformation_mode": "asymmetric", "nearest_mode": "simple",
             **ResizeOp.resolve(x.shape, scales=scales)}
    check_resize(x, attrs, expected, exact=mode == "nearest")


def test_resize_flops():
    x, y = spec(1, 2, 5, 4), spec(1, 2, 10, 8)
    attrs = ResizeOp.complete_attrs([x], {"sizes": [1, 2, 10, 8], "mode": "linear"})
    assert ResizeOp.count_flops([x], [y], attrs) == 3 * 2 * y.numel
    assert ResizeOp.count_flops([x], [y], {**attrs, "mode": "nearest"}) == 0


# ----------------------------------------------------------------------
# verifier errors
# ----------------------------------------------------------------------


F32 = np.float32


def spec(*shape, dtype=F32):
    return TensorSpec(shape, dtype)


@pytest.mark.parametrize(
    "op_cls, operands, attrs, message",
    [
        (TransposeOp, [spec(2, 3, 4)], {"perm": [0, 0, 1]}, r"perm \[0, 0, 1\] is not a permutation of 0..2"),
        (TransposeOp, [spec(2, 3, 4)], {"perm": [1, 0]}, r"perm \[1, 0\] is not a permutation"),
        (ReshapeOp, [spec(2, 3)], {"shape": [4, 2]}, r"shape \[4, 2\] has 8 elements but the input tensor<2x3xf32> has 6"),
        (ReshapeOp, [spec(2, 3)], {"shape": [-1, 2]}, r"must be static and non-negative"),
        (FlattenOp, [spec(2, 3, 4)], {"axis": 4}, r"axis 4 is out of range \[-3, 3\]"),
        (FlattenOp, [spec(2, 3, 4)], {"axis": -4}, r"axis -4 is out of range"),
        (ConcatOp, [spec(2, 3), spec(2, 3)], {"axis": 2}, r"axis 2 is out of range for rank 2"),
        (ConcatOp, [spec(2, 3), spec(3, 3)], {"axis": 1}, r"does not match tensor<2x3xf32> outside axis 1"),
        (ConcatOp, [spec(2, 3), spec(2, 3, dtype=np.int64)], {"axis": 0}, r"one element type"),
        (SplitOp, [spec(6, 2)], {"axis": 0, "split": [2, 3]}, r"split sizes \[2, 3\] sum to 5 but axis 0"),
        (SplitOp, [spec(6, 2)], {"axis": -3, "split": [6]}, r"axis -3 is out of range for rank 2"),
        (SqueezeOp, [spec(1, 3)], {"axes": [1]}, r"cannot squeeze axis 1 of size 3"),
        (SqueezeOp, [spec(1, 3)], {"axes": [2]}, r"axis 2 is out of range for rank 2"),
        (UnsqueezeOp, [spec(2, 3)], {"axes": [3]}, r"axis 3 is out of range for rank 3"),
        (UnsqueezeOp, [spec(2, 3)], {"axes": [1, -3]}, r"repeat an axis"),
        (SliceOp, [spec(4, 5)], {"starts": [0], "ends": [INT64_MAX], "axes": [1], "steps": [1]}, r"must be normalized"),
        (SliceOp, [spec(4, 5)], {"starts": [0], "ends": [2], "axes": [-1], "steps": [1]}, r"axes \[-1\] must be normalized"),
        (SliceOp, [spec(4, 5)], {"starts": [0], "ends": [2], "axes": [0], "steps": [0]}, r"step for axis 0 must not be 0"),
        (SliceOp, [spec(4, 5)], {"starts": [0, 1], "ends": [2], "axes": [0], "steps": [1]}, r"must have one length"),
        (PadOp, [spec(3, 4)], {"pads": [1, 1]}, r"pads \[1, 1\] must have 4 entries"),
        (PadOp, [spec(3, 4)], {"pads": [3, 0, 0, 0], "mode": "reflect"}, r"reflect pads \(3, 0\) of axis 0 must be smaller than its size 3"),
        (PadOp, [spec(3, 4)], {"pads": [0, 0, 0, 0], "mode": "symmetric"}, r"mode 'symmetric' is not one of"),
        (PadOp, [spec(3, 4)], {"pads": [-2, 0, -2, 0]}, r"crop more than the 3 elements of axis 0"),
        (DepthToSpaceOp, [spec(1, 6, 2, 2)], {"blocksize": 2}, r"channels 6 .* not divisible by blocksize² 4"),
        (DepthToSpaceOp, [spec(1, 8, 2, 2)], {"blocksize": 2, "mode": "XYZ"}, r"mode 'XYZ' must be DCR or CRD"),
        (DepthToSpaceOp, [spec(8, 2, 2)], {"blocksize": 2}, r"input must have rank 4"),
        (SpaceToDepthOp, [spec(1, 2, 3, 4)], {"blocksize": 2}, r"spatial dimensions 3x4 .* not divisible by blocksize 2"),
        (ExpandOp, [spec(3, 2)], {"shape": [3, 4]}, r"does not broadcast to shape \[3, 4\]"),
        (ExpandOp, [spec(3, 1)], {"shape": [4]}, r"does not broadcast to shape \[4\]"),
        (TileOp, [spec(2, 3)], {"repeats": [2]}, r"repeats \[2\] must have one entry per dimension"),
        (TileOp, [spec(2, 3)], {"repeats": [2, -1]}, r"must be non-negative"),
        (GatherOp, [spec(3, 4), spec(2)], {"axis": 0}, r"indices must be i32 or i64, got tensor<2xf32>"),
        (GatherOp, [spec(3, 4), spec(2, dtype=np.int64)], {"axis": 2}, r"axis 2 is out of range for rank 2"),
        (GatherElementsOp, [spec(3, 4), spec(2, dtype=np.int64)], {"axis": 0}, r"must have the rank of data"),
        (GatherElementsOp, [spec(3, 4), spec(2, 5, dtype=np.int64)], {"axis": 0}, r"exceed data .* in dimension 1"),
        (ResizeOp, [spec(1, 2, 3, 3)], {"sizes": [1, 2, 6]}, r"sizes \[1, 2, 6\] must have one entry per dimension"),
        (ResizeOp, [spec(1, 2, 3, 3)], {"sizes": [1, 2, 6, 6], "mode": "bicubic"}, r"mode 'bicubic' is not nearest, linear or cubic"),
        (ResizeOp, [spec(1, 2, 3, 3)], {"sizes": [1, 2, 6, 6], "coordinate_transformation_mode": "tf_crop_and_scale"},
         r"coordinate_transformation_mode 'tf_crop_and_scale' is not supported"),
        (ResizeOp, [spec(1, 2, 3, 3)], {"sizes": [1, 2, 6, 6], "roi": np.zeros(4, np.float32)}, r"roi must be 8 f32 values"),
        (ResizeOp, [spec(1, 2, 3, 3)], {"sizes": [1, 2, 6, 6], "antialias": 2}, r"antialias must be 0 or 1"),
        (ResizeOp, [spec(1, 2, 3, 3, dtype=np.int32)], {"sizes": [1, 2, 6, 6], "mode": "linear"}, r"linear interpolation needs a floating-point input"),
        (ResizeOp, [spec(2, 3)], {"sizes": [4, 6], "scales": np.array([2, 0], np.float32)}, r"scales \[2.0, 0.0\] must be positive"),
        (ResizeOp, [spec(2, 3)], {"sizes": [4, 6], "scales": np.array([2, 2], np.float64)}, r"scales must be 2 f32 values"),
    ],
)
def test_verification_errors(op_cls, operands, attrs, message):
    with pytest.raises(VerificationError, match=message):
        op_cls.infer(operands, op_cls.complete_attrs(operands, attrs))


def test_required_attributes():
    with pytest.raises(VerificationError, match="requires attribute split"):
        SplitOp.complete_attrs([spec(4)], {})
    with pytest.raises(VerificationError, match="requires attribute axis"):
        ConcatOp.complete_attrs([spec(4)], {})
    with pytest.raises(VerificationError, match="has no attribute allowzero"):
        ReshapeOp.complete_attrs([spec(4)], {"shape": [4], "allowzero": 1})


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: ReshapeOp.resolve_shape((2, 3), [-1, -1]), r"more than one -1"),
        (lambda: ReshapeOp.resolve_shape((2, 3), [4, -1]), r"cannot hold the 6 elements"),
        (lambda: ReshapeOp.resolve_shape((2, 3), [0, 0, 0]), r"copies dimension 2 \(0\) of a rank-2 input"),
        (lambda: ReshapeOp.resolve_shape((0, 3), [0, -1], allowzero=1), r"both 0 and -1"),
        (lambda: ReshapeOp.resolve_shape((2, 3), [5]), r"has 5 elements but the input of shape \(2, 3\) has 6"),
        (lambda: SplitOp.resolve_split(5, 4), r"cannot be split into 4 pieces"),
        (lambda: SliceOp.normalize((3,), [0], [1], [0], [0]), r"must not be 0"),
        (lambda: SliceOp.normalize((3,), [0], [1], [1], [1]), r"axis 1 is out of range for rank 1"),
        (lambda: PadOp.resolve_pads(2, [1, 1], axes=[0, 1]), r"must have 4 entries for axes"),
        (lambda: ExpandOp.resolve_shape((3,), [2]), r"do not broadcast"),
        (lambda: ResizeOp.resolve((2, 3), scales=[1, 2], sizes=[2, 6]), r"scales or sizes, not both"),
        (lambda: ResizeOp.resolve((2, 3), sizes=[2, 6], axes=[0]), r"one entry per axis in \[0\]"),
        (lambda: ResizeOp.resolve((2, 3), sizes=[4], axes=[1], keep_aspect_ratio_policy="fit"), r"keep_aspect_ratio_policy 'fit'"),
    ],
)
def test_importer_helper_errors(call, message):
    with pytest.raises(VerificationError, match=message):
        call()


# ----------------------------------------------------------------------
# MLIR
# ----------------------------------------------------------------------


MLIR_CASES = [
    (ReshapeOp, [spec(2, 3, 4)], {"shape": [6, 4]}),
    (FlattenOp, [spec(2, 3, 4)], {"axis": -1}),
    (SqueezeOp, [spec(1, 3, 1)], {}),
    (UnsqueezeOp, [spec(3)], {"axes": [0, -1]}),
    (SliceOp, [spec(4, 6)], SliceOp.normalize((4, 6), [-1, 1], [INT64_MIN, 100], [0, 1], [-1, 2])),
    (ConcatOp, [spec(2, 3), spec(2, 4)], {"axis": -1}),
    (SplitOp, [spec(6, 4)], {"axis": 0, "split": [2, 2, 2]}),
    (PadOp, [spec(3, 4)], {"pads": [1, -1, 2, 0], "mode": "edge"}),
    (PadOp, [spec(3, 4, dtype=np.int32)], {"pads": [1, 1, 1, 1], "constant_value": 3.0}),
    (TransposeOp, [spec(2, 3, 4)], {}),
    (DepthToSpaceOp, [spec(1, 8, 2, 3)], {"blocksize": 2, "mode": "CRD"}),
    (SpaceToDepthOp, [spec(1, 2, 4, 6)], {"blocksize": 2}),
    (ExpandOp, [spec(3, 1)], {"shape": [2, 3, 5]}),
    (TileOp, [spec(2, 3, dtype=np.bool_)], {"repeats": [2, 2]}),
    (GatherOp, [spec(5, 4), spec(2, 3, dtype=np.int32)], {"axis": 1}),
    (GatherElementsOp, [spec(5, 4), spec(2, 4, dtype=np.int64)], {"axis": 0}),
    (ResizeOp, [spec(1, 2, 5, 4)], {"sizes": [1, 2, 10, 6], "mode": "cubic", "coordinate_transformation_mode": "align_corners"}),
    (ResizeOp, [spec(1, 2, 5, 4, dtype=np.uint8)], ResizeOp.resolve((1, 2, 5, 4), scales=[1, 1, 1.5, 2.0])),
]


def build_module(op_cls, operands, attrs, result_types=None):
    module = ir.Module.create()
    built = []
    with ir.InsertionPoint(module.body):

        @func.FuncOp.from_py_func(*[to_mlir(s) for s in operands])
        def f(*args):
            op = op_cls.build(list(args), attrs, result_types)
            built.append(op)
            return list(op.results)

    return module, built[0]


@pytest.mark.parametrize("op_cls, operands, attrs", MLIR_CASES, ids=lambda v: getattr(v, "__name__", None))
def test_build_verify_print(op_cls, operands, attrs):
    with dnnf_mlir.make_context(), ir.Location.unknown():
        module, op = build_module(op_cls, operands, attrs)
        assert module.operation.verify()
        full = op_cls.complete_attrs(operands, attrs)
        assert set(op.attrs) == set(full)
        for name, value in full.items():
            if isinstance(value, np.ndarray):
                np.testing.assert_array_equal(op.attrs[name], value, strict=True)
            else:
                assert op.attrs[name] == (list(value) if isinstance(value, (list, tuple)) else value), name
        assert op.result_specs == op_cls.infer(operands, full)
        assert op.flops() == op_cls.count_flops(operands, op.result_specs, full)
        assert op.mapping_type == op_cls.MAPPING
        text = str(module)
        assert f'"ecg.{op_cls._op_name}"' in text
        reparsed = ir.Module.parse(text)
        assert reparsed.operation.verify()
        assert str(reparsed) == text


@pytest.mark.parametrize(
    "op_cls, operands, attrs",
    [
        (ReshapeOp, [spec(1, 1)], {"shape": []}),
        (SqueezeOp, [spec(2, 3)], {}),
        (UnsqueezeOp, [spec(2, 3)], {"axes": []}),
        (TransposeOp, [spec()], {}),
        (TileOp, [spec(dtype=np.int64)], {"repeats": []}),
        (PadOp, [spec()], {"pads": [], "constant_value": 0.0}),
        (ExpandOp, [spec()], {"shape": []}),
        (SliceOp, [spec(3)], {"starts": [], "ends": []}),
        (ResizeOp, [spec()], {"sizes": []}),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_build_empty_array_attributes(op_cls, operands, attrs):
    """Empty arrays are falsy, which ``ext``'s builder would drop."""
    with dnnf_mlir.make_context(), ir.Location.unknown():
        module, op = build_module(op_cls, operands, attrs)
        assert module.operation.verify()
        for name, value in op_cls.complete_attrs(operands, attrs).items():
            if isinstance(value, (list, np.ndarray)) and len(value) == 0:
                assert len(op.attrs[name]) == 0
        assert ir.Module.parse(str(module)).operation.verify()


def test_split_has_several_results():
    with dnnf_mlir.make_context(), ir.Location.unknown():
        module, op = build_module(SplitOp, [spec(2, 9)], {"axis": -1, "split": [3, 3, 3]})
        assert module.operation.verify()
        assert len(op.results) == 3 and len(op.outputs) == 3
        assert op.result_specs == [spec(2, 3)] * 3


def test_mlir_verifier_reports_infer_errors():
    with dnnf_mlir.make_context(), ir.Location.unknown():
        module, _ = build_module(ReshapeOp, [spec(2, 3)], {"shape": [7]}, result_types=[spec(7)])
        with pytest.raises(MLIRError, match=r"'ecg.reshape' op shape \[7\] has 7 elements but the input tensor<2x3xf32> has 6"):
            module.operation.verify()
        module, _ = build_module(TransposeOp, [spec(2, 3)], {"perm": [1, 0]}, result_types=[spec(2, 3)])
        with pytest.raises(MLIRError, match=r"do not match the inferred types \(tensor<3x2xf32>\)"):
            module.operation.verify()


@pytest.mark.parametrize(
    "op_cls, operands, attrs",
    [(ConcatOp, [spec(2, 3), spec(2, 5)], {"axis": 1}), (SplitOp, [spec(5, 2)], {"axis": 0, "split": [2, 3]})],
)
def test_heterogeneous_variadic_types(op_cls, operands, attrs):
    with dnnf_mlir.make_context(), ir.Location.unknown():
        module, _ = build_module(op_cls, operands, attrs)
        assert module.operation.verify()


def test_mapping_types_and_algebra():
    reorganize = [ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp, SliceOp, ConcatOp, SplitOp, PadOp]
    shuffle = [TransposeOp, DepthToSpaceOp, SpaceToDepthOp]
    one_to_many = [ExpandOp, TileOp, GatherOp, GatherElementsOp, ResizeOp]
    for classes, mapping in [(reorganize, MappingType.REORGANIZE), (shuffle, MappingType.SHUFFLE), (one_to_many, MappingType.ONE_TO_MANY)]:
        for op_cls in classes:
            assert op_cls.MAPPING == mapping, op_cls
            assert op_cls.ONNX and op_cls.ALGEBRA.commutes_with, op_cls
    assert ReshapeOp.ALGEBRA.commutes_with == ("unary elementwise",)
    assert "unary elementwise" not in PadOp.ALGEBRA.commutes_with  # constant padding needs f(c) == c
    assert "unary elementwise" not in ResizeOp.ALGEBRA.commutes_with  # only nearest moves elements
