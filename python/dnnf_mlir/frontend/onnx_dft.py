"""ONNX DFT (opsets 17 and 20) imported as matrix products with the transform's constant
matrix: forward, inverse, one-sided (rfft) and one-sided inverse (irfft), any axis and
``dft_length``. Real and imaginary parts are separate real ``mat_mul``s (Yr = Xr Ar + Xi Ai,
Yi = Xr Br + Xi Bi), the fast path of both code generators: O(n^2) per signal rather than
an FFT's O(n log n), which is what audio front ends' frame lengths (a few hundred) allow.
"""

import numpy as np

from ..ecg.shapes import normalize_axis
from ..ecg.tensor_spec import dtype_name, element_kind
from .node_builder import NodeBuilder
from .onnx_converters import converter
from .onnx_types import OnnxImportError


def _matrices(length: int, used: int, inverse: bool, onesided: bool) -> tuple:
    """(Ar, Ai, Br, Bi) of shape (used, outputs) as float64, B None for a real result (irfft)."""
    if inverse and onesided:  # irfft: a Hermitian spectrum of length//2 + 1 bins to a real signal
        bins = np.arange(used)[:, None]
        phase = 2 * np.pi * bins * np.arange(length)[None, :] / length
        double = np.where((bins == 0) | ((length % 2 == 0) & (bins == length // 2)), 1.0, 2.0)
        return double * np.cos(phase) / length, -double * np.sin(phase) / length, None, None
    outputs = length // 2 + 1 if onesided else length
    phase = 2 * np.pi * np.arange(used)[:, None] * np.arange(outputs)[None, :] / length
    matrix = np.exp(1j * phase) / length if inverse else np.exp(-1j * phase)
    return matrix.real, -matrix.imag, matrix.imag, matrix.real


@converter("DFT")
def _dft(node: NodeBuilder):
    x = node.operand(0)
    spec = node.spec(x)
    if element_kind(spec.dtype) != "f" or spec.rank < 2 or spec.shape[-1] not in (1, 2):
        raise OnnxImportError(f"{node.info}: the input must be real or complex floats (..., 1 or 2), got {spec}")
    if node.opset >= 20:
        axis_input = node.known(2, "axis")
        axis = -2 if axis_input is None else int(axis_input.reshape(()))
    else:
        axis = node.attr("axis", 1)
    axis = normalize_axis(axis, spec.rank)
    if axis == spec.rank - 1:
        raise OnnxImportError(f"{node.info}: axis {axis} is the real/imaginary axis")
    inverse, onesided = bool(node.attr("inverse", 0)), bool(node.attr("onesided", 0))
    given = node.known(1, "dft_length")
    signal = spec.shape[axis]
    length = int(given.reshape(())) if given is not None else (2 * (signal - 1) if inverse and onesided else signal)
    if length < 1:
        raise OnnxImportError(f"{node.info}: dft_length {length} must be positive")
    used = min(signal, length // 2 + 1 if inverse and onesided else length)  # inputs past these are dropped

    rank = spec.rank - 1  # without the real/imaginary axis, the transformed axis moved last
    perm = [a for a in range(rank) if a != axis] + [axis]

    def part(index):
        value = node.emit_one("slice", [x], starts=[index, 0], ends=[index + 1, used], axes=[rank, axis], steps=[1, 1])
        value = node.emit_one("squeeze", [value], axes=[rank])
        return value if axis == rank - 1 else node.emit_one("transpose", [value], perm=perm)

    real = part(0)
    imaginary = part(1) if spec.shape[-1] == 2 else None
    results = []
    a_real, a_imaginary, b_real, b_imaginary = _matrices(length, used, inverse, onesided)
    for on_real, on_imaginary in ((a_real, a_imaginary), (b_real, b_imaginary)):
        if on_real is None:
            continue
        y = node.emit_one("mat_mul", [real, on_real.astype(spec.dtype)])
        if imaginary is not None:
            y = node.emit_one("add", [y, node.emit_one("mat_mul", [imaginary, on_imaginary.astype(spec.dtype)])])
        if axis != rank - 1:
            y = node.emit_one("transpose", [y], perm=list(np.argsort(perm)))
        results.append(node.emit_one("unsqueeze", [y], axes=[rank]))
    if len(results) == 1:
        return results
    return node.emit("concat", results, {"axis": rank})
