"""How computed outputs are checked against a reference (onnxruntime, the interpreter,
numpy): inputs that keep the outputs informative, one element-wise tolerance, and a
verdict on references too degenerate to prove anything. dnnf-run --check, dnnf-bench,
the code generator's benchmark and the tests all check through ``compare``.

The tolerance is numpy.testing.assert_allclose's, element by element:
``|got - want| <= atol + rtol * |want|``. An error relative to the output's largest
magnitude would hide a wrong small value next to a large one.

A deep net's float32 noise can exceed that tolerance (DenseNet-121 on an AVX2 machine:
onnxruntime's own two graph optimization levels differ by 5 times it), so the checks
judge against the model run in float64 (``tools/float64_reference.py``) and measure the
noise as onnxruntime float32's own error against it (``Noise``): an output passes within
the tolerance, or within NOISE_MULTIPLE times onnxruntime's error both at the worst
element and in RMS over all elements (both relative to the tolerance). The RMS bound
catches a systematic error that hides in the elementwise spread: one kernel's result
scaled by 1 + 1e-3 fails.
"""

from dataclasses import dataclass

import numpy as np
import onnx

# float32 code that sums in another order than the reference (tiling, vectorized and
# threaded reductions, fused epilogues, rewritten algebra) differs in the last bits of
# each sum: relative errors stay near 1e-6 over the judged models' sums of thousands of
# products, so RTOL leaves two orders of magnitude of room. ATOL covers the elements
# that cancel (terms whose absolute sum S ends near 0), whose error is about
# float32-epsilon * S per rounding, unbounded relative to the element: the near-zero
# logits of AlexNet and VGG-19 (S ~ 120 over 4096 products) differ from onnxruntime's
# by 8e-6 and 1e-5 after eight and nineteen layers; ATOL leaves a factor 3 for other
# CPUs' summation orders.
RTOL = 1e-4
ATOL = 3e-5

# A result may be this many times as far from float64 as onnxruntime float32 is, at the
# worst element and in RMS: dnnf's own float32 code errs 1.1 to 3.3 times as much as
# onnxruntime at the worst element (Inception-v2 to DistilBERT, on an AVX-512 EPYC) and
# 1.2 to 2.5 times as much in RMS, while one kernel's result scaled by 1 + 1e-3 errs
# hundreds of times as much in RMS (DenseNet-121, BERT's FFN outputs).
NOISE_MULTIPLE = 4.0

# Random float inputs are standard normal times the first of these scales whose reference
# output is not degenerate (see ``informative_inputs``).
INPUT_SCALES = (1.0, 0.25, 0.0625)

# A softmax-like output is saturated when its largest element holds nearly all the mass,
# or when most elements are negligible next to it (their logits lie ln(1e6) ~ 14 below
# the top one, or underflowed to 0): the check then rests on a handful of elements.
ONE_HOT = 0.99
NEGLIGIBLE = 1e-6
MOSTLY = 0.9


def make_inputs(names, specs, seed: int = 0, given: dict | None = None, dummy: bool = False,
                scale: float = 1.0) -> list:
    """Model inputs: ``given[name]`` where present; else the ONNX test runner's dummy
    input (``dummy``, for models shipped with expected outputs); else seeded random
    values: normal floats times ``scale``, token ids in [0, 100), all-ones attention masks."""
    given = given or {}
    rng = np.random.default_rng(seed)
    inputs = []
    for name, spec in zip(names, specs):
        if name in given:
            value = given[name]
        elif dummy and spec.is_float:
            value = (np.arange(spec.numel).reshape(spec.shape) / spec.numel).astype(spec.dtype)
        elif spec.is_float:
            value = (rng.standard_normal(spec.shape) * scale).astype(spec.dtype)
        elif spec.dtype == np.bool_:
            value = rng.integers(0, 2, spec.shape).astype(np.bool_)
        elif "mask" in name:
            value = np.ones(spec.shape, spec.dtype)
        else:
            value = rng.integers(0, 100, spec.shape).astype(spec.dtype)
        inputs.append(np.asarray(value))
    return inputs


def informative_inputs(names, specs, reference, seed: int = 0, given: dict | None = None,
                       dummy: bool = False) -> tuple:
    """(inputs, reference outputs, scale): ``make_inputs`` at the first of INPUT_SCALES
    where no output of ``reference(inputs)`` is degenerate (a standard-normal image
    saturates some CNNs' softmax), else at scale 1. Given and dummy inputs are kept as
    they are; ``scale`` is None when no float input is random (nothing to scale)."""
    given = given or {}
    if dummy or not any(spec.is_float and name not in given for name, spec in zip(names, specs)):
        inputs = make_inputs(names, specs, seed, given, dummy)
        return inputs, reference(inputs), None
    tries = []
    for scale in INPUT_SCALES:
        inputs = make_inputs(names, specs, seed, given, scale=scale)
        tries.append((inputs, reference(inputs), scale))
        if not any(degenerate(output) for output in tries[-1][1]):
            return tries[-1]
    return tries[0]


def degenerate(want) -> str:
    """Why comparing with ``want`` proves little ('' when it does not): not finite, all
    zero, constant, or a saturated softmax (one-hot, or all but a few elements negligible)."""
    want = np.asarray(want)
    if want.dtype.kind not in "fc" or want.size < 2:
        return ""
    if not np.isfinite(want).all():
        return "not finite"
    if not want.any():
        return "all zero"
    if (want == want.flat[0]).all():
        return "constant"
    return _saturated(want.reshape(-1, want.shape[-1])) or _saturated(want.reshape(want.shape[0], -1))


def _saturated(rows) -> str:
    """Why ``rows``, if each is a probability distribution, is a saturated softmax; both
    softmax layouts are tried: over the last axis, and opset 1-12's over all axes after the first."""
    rows = rows.astype(np.float64)
    if rows.shape[1] > 1 and (rows >= 0).all() and np.allclose(rows.sum(axis=1), 1, atol=1e-3):
        top = rows.max(axis=1)
        if (top >= ONE_HOT).any():
            return f"one-hot (a saturated softmax: largest element {top.max():.4g})"
        negligible = (rows < NEGLIGIBLE * top[:, None]).mean(axis=1)
        if (negligible > MOSTLY).any():
            return (f"a saturated softmax ({negligible.max():.1%} of a row below {NEGLIGIBLE:g} "
                    "times its largest element)")
    return ""


@dataclass(frozen=True)
class Noise:
    """onnxruntime float32's own error against the float64 reference ``source``, over
    the tolerance: at its worst element (``max_ratio``) and in RMS over all elements."""

    max_ratio: float
    rms_ratio: float
    source: str

    def describe(self) -> str:
        return (f"against {self.source}; widened to {NOISE_MULTIPLE:g}x onnxruntime float32's own error against it "
                f"({self.max_ratio:.3g} of the tolerance at its worst element, {self.rms_ratio:.3g} in RMS)")


def measure_noise(fp32, float64, source: str, rtol: float = RTOL, atol: float = ATOL) -> Noise | None:
    """The Noise of onnxruntime's float32 output ``fp32`` against ``float64``; None for
    an output that is not float or not finite (it is then judged by the tolerance alone)."""
    fp32, float64 = np.asarray(fp32), np.asarray(float64)
    if float64.dtype.kind != "f" or fp32.shape != float64.shape or not float64.size:
        return None
    ratios = _ratios(_errors(fp32, float64), float64, rtol, atol)
    if not np.isfinite(ratios).all():
        return None
    return Noise(float(ratios.max()), _rms(ratios), source)


def _errors(got, want):
    """Each element's absolute error (0 for equal infinities and for NaN against NaN,
    inf where one value is not finite and the other differs)."""
    g, w = got.astype(np.float64).ravel(), want.astype(np.float64).ravel()
    with np.errstate(invalid="ignore"):
        error = np.abs(g - w)
        same = (g == w) | (np.isnan(g) & np.isnan(w))
        error[same] = 0.0
        error[~same & ~np.isfinite(error)] = np.inf
    return error


def _ratios(error, want, rtol: float, atol: float):
    """Each element's ``error`` over its tolerance ``atol + rtol * |want|``."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(error == 0, 0.0, error / (atol + rtol * np.abs(want.astype(np.float64).ravel())))


def _rms(ratios) -> float:
    with np.errstate(over="ignore"):
        return float(np.sqrt(np.mean(np.square(ratios))))


@dataclass(frozen=True)
class Comparison:
    """The verdict on one output. ``element_ratio`` is the worst element's error over its
    tolerance, ``worst`` that element's (index, got, want), ``rms`` the RMS of all
    elements' errors over their tolerances. ``ratio`` is the error over what is allowed
    (ok when at most 1): ``element_ratio``, or where ``noise`` widens the tolerance and
    that is smaller, the larger of ``element_ratio`` and ``rms`` each over
    NOISE_MULTIPLE times onnxruntime's."""

    ok: bool
    ratio: float
    max_abs: float
    worst: tuple | None
    rtol: float
    atol: float
    degenerate: str
    problem: str = ""
    rms: float = 0.0
    element_ratio: float = 0.0
    noise: Noise | None = None

    def __str__(self) -> str:
        if self.problem:
            return self.problem
        text = f"max abs error {self.max_abs:.3g}"
        if self.worst is not None:
            index, got, want = self.worst
            text += (f", worst element {list(index)}: {got:.7g} vs {want:.7g}, error {self.ratio:.3g} of the tolerance"
                     f" ({self.derivation()})")
        if self.degenerate:
            text += f"; degenerate reference: {self.degenerate}"
        return text

    def derivation(self) -> str:
        """How the tolerance was derived, and where this output stands against it."""
        text = f"atol {self.atol:g} + rtol {self.rtol:g} * |want|"
        if self.noise is None:
            return text
        if self.ratio == self.element_ratio:
            return (f"{text} against {self.noise.source}; onnxruntime float32's own error against it: "
                    f"{self.noise.max_ratio:.3g} of the tolerance, {self.noise.rms_ratio:.3g} in RMS; "
                    f"this output's RMS: {self.rms:.3g}")
        return (f"{text} {self.noise.describe()}; this output: {self.element_ratio:.3g} at its worst "
                f"element, {self.rms:.3g} in RMS")


def compare(got, want, rtol: float = RTOL, atol: float = ATOL, noise: Noise | None = None) -> Comparison:
    """Compare element by element: floats within ``atol + rtol * |want|`` (the same
    non-finite values where the reference has them), anything else exactly; with the
    ``noise`` of float32 against the reference ``want``, also pass an output within
    NOISE_MULTIPLE times that noise at the worst element and in RMS."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return Comparison(False, float("inf"), float("inf"), None, rtol, atol, "",
                          f"shape {list(got.shape)}, expected {list(want.shape)}")
    if not want.size:
        return Comparison(True, 0.0, 0.0, None, rtol, atol, "")
    if want.dtype.kind not in "fc":
        rtol = atol = 0.0
        noise = None
    error = _errors(got, want)
    ratios = _ratios(error, want, rtol, atol)
    flat = int(np.argmax(ratios))
    index = np.unravel_index(flat, want.shape)
    worst = (tuple(int(i) for i in index), got[index].item(), want[index].item())
    element, rms = float(ratios[flat]), _rms(ratios)
    ratio = element
    if noise is not None and element > 1:
        widened = max(element / (NOISE_MULTIPLE * noise.max_ratio) if noise.max_ratio else np.inf,
                      rms / (NOISE_MULTIPLE * noise.rms_ratio) if noise.rms_ratio else np.inf)
        ratio = min(element, widened)
    return Comparison(bool(ratio <= 1), ratio, float(error.max()), worst, rtol, atol, degenerate(want),
                      rms=rms, element_ratio=element, noise=noise)


def with_softmax_inputs(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` (itself when nothing changes) also outputting the logits of every
    Softmax that produces a graph output: they stay informative where the softmax
    saturates, and a compiler compiles the extra output like any other."""
    outputs = {o.name for o in model.graph.output}
    logits = [n.input[0] for n in model.graph.node
              if n.op_type == "Softmax" and n.output[0] in outputs and n.input[0] not in outputs]
    if not logits:
        return model
    model = onnx.shape_inference.infer_shapes(model)
    types = {v.name: v for v in model.graph.value_info}
    model.graph.output.extend(types[name] for name in dict.fromkeys(logits))
    return model
