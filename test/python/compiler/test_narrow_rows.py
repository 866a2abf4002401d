"""Element-wise ops over rows narrower than a vector, their innermost loops merged
(codegen/cpu/narrow_rows.py), compiled for the host on 1 and 2 threads, for AVX-512
(this machine: 16 lanes) and AVX2 (``x86-64-v3``: 8), against onnxruntime.

What the merge decides is varied: how far it goes (7x7 planes: 49, then all channels
when nothing reads them alone; 3x3 planes times a prime channel count; 5-wide rows of
an odd plane), where a per-channel operand (a bias broadcast as [1, C, 1, 1]) stops
it, a broadcast along the rows ([1, 1, 1, W]: rows of one operand, which stop it at
the rows), a squeeze-and-excitation scale ([1, C, 1, 1] at constant indices: not
merged), and SiLU (its exp approximation) on the merged rows. Inputs standard
normal; tolerance rtol 1e-5, atol 1e-6 (one op per element; SiLU through the code
generator's exp approximation).
"""

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper

from dnnf_mlir import InferenceSession

RNG = np.random.default_rng(2929)


def compare(nodes, inputs: dict, threads: int, cpu: str):
    graph = helper.make_graph(nodes, "narrow", [helper.make_tensor_value_info(n, TensorProto.FLOAT, v.shape)
                                                for n, v in inputs.items()],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    want = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, inputs)[0]
    got = InferenceSession(model, use_cache=False, threads=threads, cpu=cpu).run(None, inputs)[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


SILU = [helper.make_node("Sigmoid", ["x"], ["s"]), helper.make_node("Mul", ["x", "s"], ["y"])]
BIASED_SILU = [helper.make_node("Add", ["x", "b"], ["a"]), helper.make_node("Sigmoid", ["a"], ["s"]),
               helper.make_node("Mul", ["a", "s"], ["y"])]
ROW_SCALE = [helper.make_node("Mul", ["x", "r"], ["m"]), helper.make_node("Relu", ["m"], ["y"])]
EXCITATION = [helper.make_node("Sigmoid", ["r"], ["s"]), helper.make_node("Mul", ["x", "s"], ["y"])]


@pytest.mark.parametrize("cpu", ["native", "x86-64-v3"])
@pytest.mark.parametrize("shape,nodes,extra,threads", [
    ((1, 1152, 7, 7), SILU, None, 1),  # EfficientNet's: one flat row
    ((1, 37, 3, 3), SILU, None, 2),  # a prime channel count of 3x3 planes
    ((2, 13, 5, 5), BIASED_SILU, (1, 13, 1, 1), 1),  # a bias: rows of 25
    ((1, 23, 6, 6), BIASED_SILU, (1, 23, 1, 1), 2),
    ((1, 11, 9, 5), ROW_SCALE, (1, 1, 1, 5), 1),  # an operand along the rows only
    ((1, 29, 3, 3), EXCITATION, (1, 29, 1, 1), 2),  # a squeeze-and-excitation scale: kept whole
])
def test_narrow_rows_against_onnxruntime(shape, nodes, extra, threads, cpu):
    inputs = {"x": RNG.standard_normal(shape).astype(np.float32)}
    if extra is not None:
        inputs["b" if nodes is BIASED_SILU else "r"] = RNG.standard_normal(extra).astype(np.float32)
    compare(nodes, inputs, threads, cpu)
