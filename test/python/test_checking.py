"""dnnf_mlir.checking: the element-wise tolerance, widened by float32 noise, degenerate references,
informative inputs."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from dnnf_mlir.checking import (
    ATOL,
    INPUT_SCALES,
    NOISE_MULTIPLE,
    RTOL,
    compare,
    degenerate,
    informative_inputs,
    make_inputs,
    measure_noise,
    with_softmax_inputs,
)
from dnnf_mlir.ecg import TensorSpec


def softmax(logits, axis=-1):
    e = np.exp(logits - logits.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_a_wrong_small_value_next_to_a_large_one_fails():
    want = np.array([1000.0, 0.001], np.float32)
    got = np.array([1000.0, 0.002], np.float32)
    assert np.abs(got - want).max() / np.abs(want).max() < RTOL  # the old, relative-to-max measure passed it
    result = compare(got, want)
    assert not result.ok
    assert result.worst == ((1,), pytest.approx(0.002), pytest.approx(0.001))
    assert "worst element [1]" in str(result) and f"atol {ATOL:g} + rtol {RTOL:g}" in str(result)


def test_the_tolerance_is_atol_plus_rtol_times_want():
    want = np.array([[1.0, -2.0], [0.0, 300.0]])
    result = compare(want + [[RTOL / 2, 0], [ATOL / 2, 0]], want)
    assert result.ok and result.ratio == pytest.approx(0.5, rel=1e-6)
    assert compare(want + [[0, 0], [0, 0.9 * (ATOL + RTOL * 300)]], want).ok
    assert not compare(want + [[0, 0], [2 * ATOL, 0]], want).ok
    assert compare(want + [[0, 0], [2 * ATOL, 0]], want, atol=3 * ATOL).ok


def test_non_finite_values_must_match_and_integers_exactly():
    want = np.array([np.nan, np.inf, 1.0], np.float32)
    assert compare(want.copy(), want).ok
    assert not compare(np.array([np.nan, -np.inf, 1.0], np.float32), want).ok
    assert not compare(np.array([0.0, np.inf, 1.0], np.float32), want).ok
    assert not compare(np.array([1.0, np.inf, np.nan], np.float32), want).ok
    assert compare(np.float32(2), np.float32(2)).ok and not compare(np.float32(2), np.float32(3)).ok
    assert compare(np.arange(4), np.arange(4)).ok
    assert not compare(np.array([0, 1, 2, 4]), np.arange(4)).ok
    shape = compare(np.zeros((2, 3)), np.zeros((3, 2)))
    assert not shape.ok and str(shape) == "shape [2, 3], expected [3, 2]"


@pytest.mark.parametrize("want,reason", [
    (np.zeros((2, 3), np.float32), "all zero"),
    (np.full((2, 3), 0.001, np.float32), "constant"),
    (np.array([1.0, np.nan]), "not finite"),
    (softmax(np.array([[0.0, 1.0, 9.0]])), "one-hot"),
    # opset 9's softmax over every axis after the first: [1, 1000, 1, 1]
    (softmax(np.arange(1000.0).reshape(1, 1000, 1, 1) / 5, axis=1), "saturated softmax"),
])
def test_degenerate_references_are_named(want, reason):
    assert reason in degenerate(want)
    assert reason in str(compare(want, want))


@pytest.mark.parametrize("want", [
    softmax(np.random.default_rng(0).standard_normal((2, 1000))),
    np.maximum(np.random.default_rng(1).standard_normal((4, 8)), 0),  # a ReLU output: half zeros
    np.array([3.0]),
    np.arange(6),
])
def test_informative_references_are_not_degenerate(want):
    assert degenerate(want) == ""


def sharp_softmax(inputs):
    """A reference whose softmax saturates unless its input is small."""
    return [softmax(40 * inputs[0]), inputs[1]]


NAMES = ["x", "input_ids"]
SPECS = [TensorSpec((2, 16), np.float32), TensorSpec((1, 8), np.int64)]


def test_random_inputs_are_scaled_down_until_the_reference_is_informative():
    inputs, want, scale = informative_inputs(NAMES, SPECS, sharp_softmax)
    assert degenerate(sharp_softmax(make_inputs(NAMES, SPECS))[0])
    assert scale in INPUT_SCALES[1:] and not degenerate(want[0])
    np.testing.assert_array_equal(inputs[0], make_inputs(NAMES, SPECS, scale=scale)[0])
    np.testing.assert_array_equal(inputs[1], make_inputs(NAMES, SPECS)[1])  # token ids are not scaled


def test_given_inputs_are_kept_and_a_hopeless_reference_keeps_scale_one():
    x = np.ones((2, 16), np.float32)
    inputs, _, scale = informative_inputs(NAMES, SPECS, sharp_softmax, given={"x": x})
    assert scale is None and inputs[0] is x
    _, want, scale = informative_inputs(NAMES, SPECS, lambda values: [np.zeros(3)])
    assert scale == 1.0 and degenerate(want[0]) == "all zero"


def test_softmax_logits_become_an_extra_output():
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["logits"]), helper.make_node("Softmax", ["logits"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    extended = with_softmax_inputs(model)
    assert [o.name for o in extended.graph.output] == ["y", "logits"]
    onnx.checker.check_model(extended, full_check=True)
    assert with_softmax_inputs(extended) is extended  # nothing more to expose


def heavy_tailed_noise(rng, want, worst: float):
    """float32-like noise on ``want``: most elements off by a tiny fraction of the
    tolerance, a few by ``worst`` times it."""
    tolerance = ATOL + RTOL * np.abs(want)
    ratios = rng.standard_normal(want.shape) * 0.05
    ratios[rng.choice(want.size, 5, replace=False)] = worst
    return want + ratios * tolerance


def test_float32_noise_widens_the_tolerance_and_the_output_says_how():
    rng = np.random.default_rng(0)
    want = rng.standard_normal(4096)
    noise = measure_noise(heavy_tailed_noise(rng, want, 4.0), want, "the interpreter in float64")
    assert noise.max_ratio == pytest.approx(4.0) and noise.rms_ratio < 0.2
    got = heavy_tailed_noise(rng, want, 12.0)  # float32 summing in another order, noisier at its worst element
    assert not compare(got, want).ok
    result = compare(got, want, noise=noise)
    assert result.ok and result.element_ratio == pytest.approx(12.0)
    assert result.ratio == pytest.approx(12.0 / (NOISE_MULTIPLE * 4.0))
    assert (f"widened to {NOISE_MULTIPLE:g}x onnxruntime float32's own error against it (4 of the tolerance at its "
            "worst element") in str(result)
    assert not compare(heavy_tailed_noise(rng, want, 20.0), want, noise=noise).ok  # beyond NOISE_MULTIPLE times it


def test_a_systematic_error_within_the_elementwise_spread_fails_in_rms():
    rng = np.random.default_rng(1)
    want = rng.standard_normal(4096)
    noise = measure_noise(heavy_tailed_noise(rng, want, 5.0), want, "float64")
    planted = compare(want * (1 + 1e-3), want, noise=noise)  # one kernel's result scaled by 1 + 1e-3
    assert planted.element_ratio < NOISE_MULTIPLE * noise.max_ratio  # inside the worst element's spread
    assert planted.rms > NOISE_MULTIPLE * noise.rms_ratio and not planted.ok
    assert planted.ratio == pytest.approx(min(planted.element_ratio, planted.rms / (NOISE_MULTIPLE * noise.rms_ratio)))


def test_noise_never_widens_an_exact_or_non_finite_check():
    want = np.array([1.0, 2.0, np.inf])
    assert measure_noise(np.array([1.0, 2.0, 3.0], np.float32), want, "float64") is None
    exact = measure_noise(want.astype(np.float32), want, "float64")
    assert exact.max_ratio == exact.rms_ratio == 0
    assert not compare(np.array([1.0, 2.01, np.inf]), want, noise=exact).ok
    assert compare(np.arange(3), np.arange(3), noise=exact).ok and not compare(np.arange(3) + 1, np.arange(3)).ok
