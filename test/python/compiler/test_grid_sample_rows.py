"""GridSample's multi-tap modes (linear, cubic) from 8 channels on, sampled over
(pixels, channels) rows (``frontend/onnx_grid_sample._sample_pixel_rows``): every tap of
an output pixel reads one contiguous row of channels; the input and the result are
transposed to and from that layout.

Compiled for the host and checked against onnxruntime (tolerance of test_node_suite_ops:
weighted sums of at most 16 taps), or against ONNX's reference where onnxruntime departs
from the spec (cubic with border padding, by up to 0.3) or lacks the op (3-D grids, cubic).
Cases: every padding mode, batch 2 (taps index the pixels of every batch), align_corners,
channel counts that are and are not a whole vector (8, 24, 13), an infinity in the data
(a tap outside reads the appended zero row with weight 0: it adds nothing), one 3-D grid
(linear), and the same rows on the GPU targets (Vulkan, OpenCL). The grid reaches 30% past the input's edges.
The taps are weighted as they are read (``ecg.gather_sum``): one kernel gathers and sums
them, and the interpreter (the op's reference) agrees with onnxruntime too.
"""

import json

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx.reference import ReferenceEvaluator

import dnnf_mlir
from dnnf_mlir import InferenceSession
from dnnf_mlir.compiler import Artifact, compile_model
from dnnf_mlir.frontend.onnx_importer import import_onnx
from dnnf_mlir.interpreter import interpret
from test_node_suite_ops import ATOL, RTOL, one_node

RNG = np.random.default_rng(27)


def sample(channels, padding, mode, batch=2, spatial=(9, 11), align=0):
    x = RNG.standard_normal((batch, channels, *spatial)).astype(np.float32)
    outputs = (7, 6, 5)[: len(spatial)]
    grid = RNG.uniform(-1.3, 1.3, (batch, *outputs, len(spatial))).astype(np.float32)
    feeds = {"x": x, "grid": grid}
    model = one_node("GridSample", feeds, opset=20, mode=mode, padding_mode=padding, align_corners=align)
    return model, feeds


def expected(model, feeds, spec_reference: bool):
    if spec_reference:
        return ReferenceEvaluator(model).run(None, feeds)[0]
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


@pytest.mark.parametrize("mode, padding, channels, align", [
    ("linear", "zeros", 8, 0), ("linear", "border", 24, 1), ("linear", "reflection", 13, 0),
    ("cubic", "zeros", 13, 1), ("cubic", "border", 8, 0), ("cubic", "reflection", 24, 0)])
def test_matches_onnxruntime(mode, padding, channels, align):
    model, feeds = sample(channels, padding, mode, align=align)
    got = InferenceSession(model, use_cache=False, threads=1).run(None, feeds)[0]
    want = expected(model, feeds, spec_reference=mode == "cubic" and padding == "border")
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def test_infinity_outside_adds_nothing():
    model, feeds = sample(16, "zeros", "linear")
    feeds["x"][0, 3, 0, :] = np.inf  # the top row, next to the taps above the input
    got = InferenceSession(model, use_cache=False, threads=1).run(None, feeds)[0]
    np.testing.assert_allclose(got, expected(model, feeds, False), rtol=RTOL, atol=ATOL)
    assert np.isfinite(got[1]).all() and not np.isfinite(got[0, 3]).all()


def test_volumetric():
    model, feeds = sample(8, "zeros", "linear", batch=1, spatial=(5, 6, 7))
    got = InferenceSession(model, use_cache=False, threads=1).run(None, feeds)[0]
    np.testing.assert_allclose(got, expected(model, feeds, True), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("target", ["vulkan", "opencl"])
def test_gpu_targets(target, tmp_path):
    model, feeds = sample(8, "zeros", "linear")
    onnx.save(model, str(tmp_path / "model.onnx"))
    compile_model(tmp_path / "model.onnx", tmp_path / "out", target=target)
    got, _ = Artifact(tmp_path / "out").run([feeds["x"], feeds["grid"]])
    np.testing.assert_allclose(got[0], expected(model, feeds, False), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("mode, padding, align", [("linear", "reflection", 1), ("cubic", "zeros", 0)])
def test_taps_weighted_as_read(mode, padding, align, tmp_path):
    """No kernel writes the taps to memory: one kernel gathers and weights them (before,
    a gather of every tap, then mul and reduce_sum in a kernel of their own)."""
    model, feeds = sample(13, padding, mode, batch=2, align=align)
    onnx.save(model, str(tmp_path / "model.onnx"))
    compile_model(tmp_path / "model.onnx", tmp_path / "out", threads=1, profile_kernels=True)
    launches = json.loads((tmp_path / "out" / "manifest.json").read_text())["kernel_launches"]
    ops = [set(launch["ops"].split("+")) for launch in launches]
    assert sum("gather_sum" in kernel for kernel in ops) == 1, ops
    assert not any({"gather", "reduce_sum"} & kernel for kernel in ops), ops
    got, _ = Artifact(tmp_path / "out").run([feeds["x"], feeds["grid"]])
    np.testing.assert_allclose(got[0], expected(model, feeds, False), rtol=RTOL, atol=ATOL)


def test_interpreter_matches_onnxruntime():
    model, feeds = sample(24, "border", "linear", align=1)
    with dnnf_mlir.make_context() as context:
        module = import_onnx(model, context=context)
        got = interpret(module, [feeds["x"], feeds["grid"]])[0]
    np.testing.assert_allclose(got, expected(model, feeds, False), rtol=RTOL, atol=ATOL)
