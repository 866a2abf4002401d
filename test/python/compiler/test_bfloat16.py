"""bfloat16 models compiled for the host, checked against the interpreter and float64.

onnxruntime's CPU provider has no bf16 kernels for most ops, and ONNX's reference
implementation sums a bf16 MatMul's products in bf16 (ml_dtypes' numpy matmul: at K=256
every element differs from the exactly rounded product), so the expected values are the
interpreter's, which computes each bf16 op in float32 and rounds its result to nearest
even (it passes ONNX's bf16 node cases), and for the matrix product the float64 product
rounded once. The compiled code lowers a bf16 op as its f32 twin between extf and truncf:
its f32 values differ from the interpreter's only in summation order and the math
approximations, a few f32 ulps, which can move a result across a bf16 rounding boundary
(one bf16 ulp); Softmax then turns one ulp of its input (up to 0.03 at 4) into 3% of its
output, and a mean of normalized rows cancels to 0.03, so the outputs of those two are
compared with float64 on the compiled code's own inputs. Casts are exact.
"""

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from dnnf_mlir import InferenceSession
from dnnf_mlir.onnx_backend import DnnfBackend

BF16 = ml_dtypes.bfloat16
ONE_ULP = 2.0**-7  # relative spacing of bf16 near the bottom of a binade


def _model(nodes, inputs, outputs, initializers=(), opset=21):
    graph = helper.make_graph(nodes, "bf16", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _run_both(model, feeds):
    want = DnnfBackend.prepare(model, "CPU").run(list(feeds.values()))
    got = InferenceSession(model, use_cache=False, threads=1).run(None, feeds)
    assert [g.dtype for g in got] == [w.dtype for w in want]
    return got, want


def test_mlp_block_matches_interpreter_and_float64():
    """MatMul (K=256) + bias + Gelu + Softmax + LayerNormalization + ReduceMean, bf16 and f32 outputs."""
    rng = np.random.default_rng(7)
    w = (rng.standard_normal((256, 64)) / 16).astype(BF16)
    bias, scale = rng.standard_normal(64).astype(BF16), rng.standard_normal(64).astype(BF16)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "b"], ["a"]),
        helper.make_node("Gelu", ["a"], ["g"]), helper.make_node("Softmax", ["g"], ["s"], axis=-1),
        helper.make_node("LayerNormalization", ["a", "scale"], ["n"], axis=-1),
        helper.make_node("ReduceMean", ["n", "axes"], ["r"], keepdims=1),
        helper.make_node("Cast", ["g"], ["g32"], to=TensorProto.FLOAT),
    ]
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [8, 256])],
                   [helper.make_tensor_value_info("m", TensorProto.BFLOAT16, [8, 64]),
                    helper.make_tensor_value_info("g32", TensorProto.FLOAT, [8, 64]),
                    helper.make_tensor_value_info("s", TensorProto.BFLOAT16, [8, 64]),
                    helper.make_tensor_value_info("n", TensorProto.BFLOAT16, [8, 64]),
                    helper.make_tensor_value_info("r", TensorProto.BFLOAT16, [8, 1])],
                   [numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias, "b"),
                    numpy_helper.from_array(scale, "scale"), numpy_helper.from_array(np.array([-1]), "axes")])
    x = rng.standard_normal((8, 256)).astype(BF16)
    got, want = _run_both(model, {"x": x})
    exact = (x.astype(np.float64) @ w.astype(np.float64)).astype(BF16)
    np.testing.assert_allclose(got[0].astype(np.float32), exact.astype(np.float32), rtol=ONE_ULP, atol=1e-6)
    for index in (0, 1, 3):
        np.testing.assert_allclose(got[index].astype(np.float32), want[index].astype(np.float32), rtol=ONE_ULP,
                                   atol=1e-6, err_msg=f"output {index}")
    # Softmax on the compiled code's own input: within one ulp of it.
    g = got[1].astype(np.float64)
    softmax = np.exp(g - g.max(-1, keepdims=True))
    softmax = (softmax / softmax.sum(-1, keepdims=True)).astype(BF16)
    np.testing.assert_allclose(got[2].astype(np.float32), softmax.astype(np.float32), rtol=ONE_ULP, atol=1e-6)
    # The mean of the normalized rows cancels to ~0.03: on the compiled code's own rows.
    mean = got[3].astype(np.float64).mean(-1, keepdims=True).astype(BF16)
    np.testing.assert_allclose(got[4].astype(np.float32), mean.astype(np.float32), rtol=ONE_ULP, atol=1e-6)


def test_conv_matches_interpreter():
    rng = np.random.default_rng(3)
    k = (rng.standard_normal((8, 16, 3, 3)) / 12).astype(BF16)
    model = _model([helper.make_node("Conv", ["x", "k"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["y"])],
                   [helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [1, 16, 10, 10])],
                   [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [1, 8, 10, 10])],
                   [numpy_helper.from_array(k, "k")])
    x = rng.standard_normal((1, 16, 10, 10)).astype(BF16)
    got, want = _run_both(model, {"x": x})
    np.testing.assert_allclose(got[0].astype(np.float32), want[0].astype(np.float32), rtol=ONE_ULP, atol=1e-6)


def test_casts_round_to_nearest_even():
    """f32 -> bf16 on ties, NaN, infinities and overflow, and bf16 -> f32 / f16 / int32, bit for bit
    (a subnormal's flush to zero aside)."""
    one = np.float32(1.0)
    ties = np.array([1 + 2**-8, 1 + 3 * 2**-8, -(1 + 2**-8), 3.0e38, 3.4e38, np.inf, -np.inf, np.nan, 1e-40, 0.0,
                     -0.0, 65504.0, 70000.0, one / 3, -2.5], np.float32)
    nodes = [helper.make_node("Cast", ["x"], ["b"], to=TensorProto.BFLOAT16),
             helper.make_node("Cast", ["b"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Cast", ["b"], ["h"], to=TensorProto.FLOAT16),
             helper.make_node("Cast", ["b"], ["i"], to=TensorProto.INT32)]
    finite = ~np.isnan(ties) & ~np.isinf(ties) & (np.abs(ties) < 2**31)
    n = len(ties)
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
                   [helper.make_tensor_value_info("b", TensorProto.BFLOAT16, [n]),
                    helper.make_tensor_value_info("f", TensorProto.FLOAT, [n]),
                    helper.make_tensor_value_info("h", TensorProto.FLOAT16, [n]),
                    helper.make_tensor_value_info("i", TensorProto.INT32, [n])])
    got = InferenceSession(model, use_cache=False, threads=1).run(None, {"x": ties})
    rounded = ties.astype(BF16)
    # A subnormal (1e-40) may flush to zero: VCVTNEPS2BF16 (AVX512-BF16, which LLVM uses for
    # truncf where the CPU has it) treats denormals as zero; every other bit pattern is exact.
    normal = np.abs(ties) != np.float32(1e-40)
    assert np.array_equal(got[0].view(np.uint16)[normal], rounded.view(np.uint16)[normal])
    assert got[0][~normal] in (0.0, rounded[~normal])
    assert got[0][0] == 1.0 and got[0][1] == 1 + 2**-6  # ties to even
    np.testing.assert_array_equal(got[1][normal], rounded.astype(np.float32)[normal])
    np.testing.assert_array_equal(got[2][normal], rounded.astype(np.float32).astype(np.float16)[normal])
    np.testing.assert_array_equal(got[3][finite], rounded.astype(np.float32)[finite].astype(np.int32))


def test_bf16_constant_round_trips_through_the_ir():
    """A bf16 initializer reaches the interpreter with its bits (MLIR gives no buffer for bf16)."""
    values = np.array([[1.5, -2.25, 3.0e38], [np.inf, -0.0, 1e-3]], BF16)
    model = _model([helper.make_node("Identity", ["c"], ["y"])], [],
                   [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [2, 3])], [numpy_helper.from_array(values, "c")])
    onnx.checker.check_model(model)
    (out,) = DnnfBackend.prepare(model, "CPU").run([])
    assert out.dtype == BF16 and np.array_equal(out.view(np.uint16), values.view(np.uint16))
