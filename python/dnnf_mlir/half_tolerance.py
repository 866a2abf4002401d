"""The tolerance of a model compiled with ``--precision fp16`` against onnxruntime fp32:
what the fp16 tests, ``dnnf-run --check`` on an fp16 artifact and ``dnnf-bench`` allow.

Every stored value (the weights, each kernel's result) is rounded to f16, a relative
error of at most u = 2^-11 ~ 4.9e-4. A dot product of K terms whose operands carry
independent errors of that size is off by about u * sqrt(K) times its terms' typical
size, since the kernels accumulate in f32 (no rounding of their own that matters); for
outputs of scale s (the reference's RMS) the check allows ``atol = 4 * u * sqrt(K) * s``
(4: the operands', the result's and the next kernel's roundings) and ``rtol = 8 * u``, K
the model's longest accumulation (``longest_accumulation``: a convolution's C/g * kh * kw,
a MatMul's or Gemm's inner dimension). An accumulation in f16 would be off by up to
K * u * s (0.125 s for K = 256, four times the bound). The judged models' normalizations
(batch norms folded into the convolutions, layer norms, softmaxes) keep the error carried
from layer to layer at the scale of one layer's.
"""

from __future__ import annotations

import numpy as np
import onnx

HALF_EPSILON = 2.0 ** -11  # unit roundoff of IEEE binary16 (11 significant bits)


def _rms(want: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(want, dtype=np.float64)))) if np.size(want) else 0.0


def half_tolerance(want: np.ndarray, accumulation: int) -> tuple:
    """(rtol, atol) for an fp16-storage result against the fp32 ``want`` (see the module
    docstring), ``accumulation`` the longest dot product's length K."""
    return 8 * HALF_EPSILON, 4 * HALF_EPSILON * np.sqrt(accumulation) * _rms(want)


def describe_half_tolerance(want: np.ndarray, accumulation: int) -> str:
    """How ``half_tolerance`` derived its bound, for a check's output."""
    rtol, atol = half_tolerance(want, accumulation)
    return (f"fp16 storage: rtol 8u = {rtol:.3g}, atol 4u sqrt(K) RMS(want) = {atol:.3g} "
            f"(u = 2^-11, K = {accumulation}, the longest accumulation; RMS {_rms(want):.3g})")


def longest_accumulation(model: onnx.ModelProto) -> int:
    """The most products a weight's dot products sum: a convolution's C/g * kh * kw, a
    MatMul's or Gemm's inner dimension (1 for a model without them)."""
    weights = {t.name: list(t.dims) for t in model.graph.initializer}
    lengths = [1]
    for node in model.graph.node:
        if node.op_type == "Conv" and node.input[1] in weights:
            lengths.append(int(np.prod(weights[node.input[1]][1:])))
        elif node.op_type == "MatMul" and node.input[1] in weights:
            lengths.append(weights[node.input[1]][-2])
        elif node.op_type == "Gemm" and node.input[1] in weights:
            trans_b = any(a.name == "transB" and a.i for a in node.attribute)
            lengths.append(weights[node.input[1]][1 if trans_b else 0])
    return max(lengths)


__all__ = ["HALF_EPSILON", "describe_half_tolerance", "half_tolerance", "longest_accumulation"]
