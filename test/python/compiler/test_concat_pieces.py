"""Concatenations whose pieces are computed in place in their slices of the result
(codegen/cpu/concat_pieces.py) against onnxruntime.

SqueezeNet's fire module (a 1x1 convolution's bias + ReLU epilogue, collapsed to rows,
beside the ReLU of another kernel's result), pieces that are the kernel's arguments
(copied), a concat along the rows or the columns (where a slice of the collapsed
epilogue is no view: copied), pieces computed in the opposite order to the concat's;
odd, prime and tiny planes, channel counts that are no multiple of a vector, at 1 and 2
threads, on this CPU (AVX-512 here) and AVX2 (x86-64-v3). Inputs are standard normal so
that a piece written into the wrong slice, or a slice left unwritten, is off by O(1).
Tolerance (``compare``'s) rtol 1e-5, atol 1e-5: at most 16 products summed in another
order than onnxruntime's, the rest exact.
"""

import numpy as np
import pytest
from onnx import helper
from test_depthwise_loops import compare

RNG = np.random.default_rng(2903)
TARGETS = [("native", 1), ("native", 2), ("x86-64-v3", 1), ("x86-64-v3", 2)]


def conv_relu(x: str, out: str, c_in: int, c_out: int, weights: dict) -> list:
    """Nodes of relu(conv1x1(x) + b) into ``out``; its weights added to ``weights``."""
    weights[f"{out}_w"] = RNG.standard_normal((c_out, c_in, 1, 1)).astype(np.float32)
    weights[f"{out}_b"] = RNG.standard_normal(c_out).astype(np.float32)
    return [helper.make_node("Conv", [x, f"{out}_w", f"{out}_b"], [f"{out}_c"]),
            helper.make_node("Relu", [f"{out}_c"], [out])]


@pytest.mark.parametrize("cpu,threads", TARGETS)
@pytest.mark.parametrize("c_in,c_conv,c_other,hw", [
    (16, 64, 64, (55, 55)),  # SqueezeNet's fire2
    (5, 7, 3, (13, 7)),  # prime plane, channels no multiple of a vector
    (3, 2, 1, (3, 3)),  # tiny
])
def test_fire_module(c_in, c_conv, c_other, hw, cpu, threads):
    """concat(relu(conv1x1(s) + b), relu(e)) along the channels."""
    inputs = {"s": RNG.standard_normal((1, c_in, *hw)).astype(np.float32),
              "e": RNG.standard_normal((1, c_other, *hw)).astype(np.float32)}
    weights = {}
    nodes = conv_relu("s", "a", c_in, c_conv, weights) + [
        helper.make_node("Relu", ["e"], ["r"]),
        helper.make_node("Concat", ["a", "r"], ["y"], axis=1)]
    compare(nodes, inputs, weights, threads, cpu)


@pytest.mark.parametrize("cpu,threads", TARGETS)
@pytest.mark.parametrize("axis", [1, 2, 3])
def test_computed_and_copied_pieces(axis, cpu, threads):
    """concat(relu(conv(x)), m, relu(z)) along ``axis``: the middle piece an argument,
    copied; along the columns (3) the convolution's collapsed epilogue is copied too."""
    shape = [1, 6, 11, 13]
    inputs = {"x": RNG.standard_normal(shape).astype(np.float32)}
    for name, size in (("m", 3), ("z", 5)):
        piece = list(shape)
        piece[axis] = size
        inputs[name] = RNG.standard_normal(piece).astype(np.float32)
    weights = {}
    nodes = conv_relu("x", "a", 6, 6, weights) + [
        helper.make_node("Relu", ["z"], ["r"]),
        helper.make_node("Concat", ["a", "m", "r"], ["y"], axis=axis)]
    compare(nodes, inputs, weights, threads, cpu)


@pytest.mark.parametrize("cpu,threads", TARGETS)
def test_pieces_computed_in_reverse_order(cpu, threads):
    """concat(relu(conv(x)), relu(e)) where relu(e) is computed first: the later piece in
    place, the one before it written where the concat puts it all the same."""
    inputs = {"x": RNG.standard_normal((1, 9, 17, 19)).astype(np.float32),
              "e": RNG.standard_normal((1, 4, 17, 19)).astype(np.float32)}
    weights = {}
    nodes = [helper.make_node("Relu", ["e"], ["r"])] + conv_relu("x", "a", 9, 12, weights) + [
        helper.make_node("Concat", ["a", "r"], ["y"], axis=1)]
    compare(nodes, inputs, weights, threads, cpu)
