"""Grouped convolutions (``codegen/cpu/grouped.py``) against onnxruntime: ONNX Conv models
with 2 to 32 groups of 1 to 16 channels (and a wide group, which keeps the dense loop
over the groups), kernels 1, 3 and 5, strides 1 and 2, padding, dilation 2, odd and
prime planes, bias, ReLU and residual epilogues, batches of 1 and 2, 1-D and 2-D; on
AVX2 (x86-64-v3) and AVX-512 (x86-64-v4), at 1 and 2 threads. Tolerance: 1e-4 of the
output's largest magnitude (float32 sums of at most 400 terms in another order)."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from compile_helpers import compile_onnx

CPUS = ["x86-64-v3", "x86-64-v4"]


def conv_model(groups, cg, fg, batch, plane, kernel, stride, pad, dilation, bias, epilogue, seed):
    """A Conv of ``groups`` groups of ``cg`` input and ``fg`` output channels over ``plane``
    (one dim: 1-D; two: 2-D) with seeded random weights, then ``epilogue`` (``relu``,
    ``residual`` (+ an input the output's shape, then ReLU) or ``none``). Returns the
    model and its feeds."""
    rng = np.random.default_rng(seed)
    rank = len(plane)
    out = [(p + 2 * pad - dilation * (kernel - 1) - 1) // stride + 1 for p in plane]
    x = rng.standard_normal((batch, groups * cg, *plane)).astype(np.float32)
    w = (rng.standard_normal((groups * fg, cg, *[kernel] * rank)) / np.sqrt(cg * kernel**rank)).astype(np.float32)
    initializers = [numpy_helper.from_array(w, "w")]
    inputs = ["x", "w"]
    if bias:
        initializers.append(numpy_helper.from_array(rng.standard_normal(groups * fg).astype(np.float32), "b"))
        inputs.append("b")
    out_shape = [batch, groups * fg, *out]
    nodes = [helper.make_node("Conv", inputs, ["c"], group=groups, kernel_shape=[kernel] * rank, pads=[pad] * 2 * rank,
                              strides=[stride] * rank, dilations=[dilation] * rank)]
    graph_inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))]
    feeds = {"x": x}
    last = "c"
    if epilogue == "residual":
        graph_inputs.append(helper.make_tensor_value_info("r", TensorProto.FLOAT, out_shape))
        feeds["r"] = rng.standard_normal(out_shape).astype(np.float32)
        nodes.append(helper.make_node("Add", ["c", "r"], ["a"]))
        last = "a"
    if epilogue in ("relu", "residual"):
        nodes.append(helper.make_node("Relu", [last], ["y"]))
        last = "y"
    graph = helper.make_graph(nodes, "grouped", graph_inputs,
                              [helper.make_tensor_value_info(last, TensorProto.FLOAT, out_shape)], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), feeds


# groups, input / output channels per group, batch, plane, kernel, stride, pad, dilation, bias, epilogue, threads
CASES = [
    (32, 4, 4, 1, (28, 28), 3, 1, 1, 1, True, "relu", 1),  # ResNeXt's 3x3 layers
    (32, 8, 8, 1, (14, 14), 3, 1, 1, 1, True, "relu", 2),
    (32, 8, 8, 1, (28, 28), 3, 2, 1, 1, True, "relu", 1),  # strided: rows of taps read with a stride of 2
    (2, 3, 5, 2, (13, 11), 5, 1, 2, 1, True, "residual", 2),  # odd planes, a residual: apart from the tiles
    (3, 1, 2, 1, (17, 17), 3, 2, 0, 1, False, "none", 1),  # one channel per group, no padding
    (4, 16, 16, 1, (9, 9), 3, 1, 2, 2, True, "relu", 2),  # dilation 2
    (8, 2, 3, 2, (7, 23), 3, 2, 1, 1, True, "relu", 1),  # a strided row wider than an AVX2 vector
    (4, 5, 4, 2, (31, 37), 1, 1, 0, 1, True, "none", 2),  # 1x1 over two images
    (2, 16, 1, 1, (19, 41), 3, 1, 1, 1, True, "relu", 1),  # one output channel per group, two vectors per row
    (4, 4, 4, 1, (50,), 3, 1, 1, 1, True, "relu", 2),  # 1-D
    (8, 2, 2, 2, (41,), 5, 2, 2, 1, True, "none", 1),  # 1-D, strided
]


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"g{c[0]}c{c[1]}f{c[2]}n{c[3]}-{'x'.join(map(str, c[4]))}"
                                                      f"-k{c[5]}s{c[6]}p{c[7]}d{c[8]}-{c[10]}-t{c[11]}")
def test_grouped_matches_onnxruntime(case, cpu):
    *shape, threads = case
    model, feeds = conv_model(*shape, seed=CASES.index(case))
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    got, schedules = compile_onnx(model, feeds, cpu, threads)
    assert "grouped" in {schedule.strategy for schedule in schedules}
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4 * np.abs(want).max())


# Wide groups (more than ``MAX_GROUP_CHANNELS`` input channels each): a loop over the
# groups of one register-tiled dense convolution each (measured faster there), whose
# accumulator starts from a fill in the loop. Cases as CASES, and whether the group's
# convolution runs over flat rows (``flat_conv_rows``: one image, stride 1).
WIDE_CASES = [
    (2, 24, 16, 1, (20, 20), 5, 1, 2, 1, True, "relu", 1, True),  # AlexNet's 5x5 layer, narrower
    (2, 24, 8, 1, (12, 12), 3, 1, 1, 1, True, "relu", 2, True),  # AlexNet's 3x3 layers
    (3, 20, 12, 1, (11, 9), 3, 1, 1, 1, False, "residual", 1, True),  # odd plane, a residual after the loop
    (2, 18, 8, 1, (23, 23), 3, 2, 1, 1, True, "relu", 2, False),  # strided: phases of rows, not flat
    (2, 17, 8, 2, (10, 10), 3, 1, 1, 1, True, "none", 1, False),  # two images
]


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("case", WIDE_CASES, ids=lambda c: f"g{c[0]}c{c[1]}f{c[2]}n{c[3]}-{'x'.join(map(str, c[4]))}"
                                                           f"-k{c[5]}s{c[6]}p{c[7]}-{c[10]}-t{c[11]}")
def test_wide_groups_keep_the_dense_convolution(case, cpu):
    *shape, threads, flat = case
    model, feeds = conv_model(*shape, seed=WIDE_CASES.index(case))
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    got, schedules = compile_onnx(model, feeds, cpu, threads)
    convolutions = [schedule for schedule in schedules if schedule.strategy == "conv2d"]
    assert convolutions and "grouped" not in {schedule.strategy for schedule in schedules}
    # Flat rows: one row of OH * (OW + KW - 1) columns (rounded up), the window's KH rows as phases.
    assert all((schedule.shape[2] == 1 and schedule.details.get("phases") == shape[5]) == flat for schedule in convolutions)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4 * np.abs(want).max())
