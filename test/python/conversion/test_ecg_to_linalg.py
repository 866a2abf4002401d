"""convert-ecg-to-linalg against the reference interpreter.

Each case builds a small ECG function, lowers it to linalg on tensors, JIT-compiles
it with the ExecutionEngine (dnnf_mlir.conversion.jit) and compares the outputs with
the interpreter's: relative error max|got - want| / max|want| at most 1e-5 for
floats, equality otherwise. The end-to-end tests do the same for SqueezeNet and the
first two layers of DistilBERT (skipped unless tools/gen_models.py has generated them);
the whole DistilBERT only with DNNF_JIT_LARGE=1 (its naive loops run for a minute).
"""

import os
import time

import numpy as np
import pytest

import dnnf_mlir
from dnnf_mlir.codegen import cpu
from dnnf_mlir._mlir import func, ir
from dnnf_mlir.checking import compare, make_inputs
from dnnf_mlir.conversion import LOWERINGS, ConversionError, convert_ecg_to_linalg
from dnnf_mlir.conversion.jit import LoopsJitFunction
from dnnf_mlir.ecg import OPS, TensorSpec, from_mlir, to_mlir
from dnnf_mlir.ecg.ops.resize import ResizeOp
from dnnf_mlir.ecg.ops.slicing import SliceOp
from dnnf_mlir.interpreter import find_function, interpret

RNG = np.random.default_rng(0)
RTOL = 1e-5


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def positive(*shape):
    return (np.abs(RNG.standard_normal(shape)) + 0.1).astype(np.float32)


def ints(*shape, low=-5, high=6, dtype=np.int64):
    return RNG.integers(low, high, shape).astype(dtype)


def bools(*shape):
    return RNG.random(shape) < 0.5


# ----- building, lowering, running -----


class Builder:
    """Emits ECG ops into the function being built: ``b.op("add", x, y, axis=1)``."""

    def op(self, mnemonic, *operands, result_types=None, **attrs):
        view = OPS[mnemonic].build(list(operands), attrs, result_types)
        results = list(view.operation.results)
        return results[0] if len(results) == 1 else results

    def const(self, array):
        return self.op("constant", value=np.asarray(array))


def build(inputs, body):
    """A module whose @main takes arrays shaped like ``inputs`` and returns ``body(b, *args)``."""
    context = dnnf_mlir.make_context()
    with context, ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            types = [to_mlir(TensorSpec.of(np.asarray(a))) for a in inputs]
            function = func.FuncOp("main", (types, []))
            block = function.add_entry_block()
            with ir.InsertionPoint(block):
                results = body(Builder(), *block.arguments)
                results = list(results) if isinstance(results, (list, tuple)) else [results]
                func.ReturnOp(results)
            function.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get(types, [r.type for r in results])
            )
        module.operation.verify()
    return module


def assert_close(got, want, rtol=RTOL, how=""):
    """``checking.compare`` with atol = rtol: the ops' outputs on standard-normal
    inputs are of order 1, so an element that cancels to near 0 may err by rtol."""
    result = compare(got, want, rtol, rtol)
    assert result.ok, f"{how}: {result}"


def lower_and_run(module, inputs, **jit_options):
    convert_ecg_to_linalg(module)
    module.operation.verify()
    text = str(module)
    assert '"ecg.' not in text, text
    return LoopsJitFunction(module, **jit_options)(*inputs)


def compile_and_run(module, inputs):
    """The same module through the optimizing code generator (tiled, vectorized)."""
    convert_ecg_to_linalg(module)
    return cpu.jit(module)["main"](*inputs)


def check(inputs, body, rtol=RTOL, **jit_options):
    """Interpreter vs the loops harness and vs the code generator."""
    module = build(inputs, body)
    want = interpret(module, inputs)
    # The same module for both (a body may draw random constants: building it twice
    # would compile different functions).
    copy = ir.Module.parse(str(module), module.context)
    runs = {"loops": lower_and_run(module, inputs, **jit_options), "codegen": compile_and_run(copy, inputs)}
    for how, got in runs.items():
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype, (how, g.shape, g.dtype, w.shape, w.dtype)
            assert_close(g, w, rtol, how)


# ----- elementwise -----

FLOAT_UNARY = [
    "abs", "neg", "exp", "relu", "sigmoid", "tanh", "erf", "floor", "ceil", "round", "sign", "sin", "cos",
    "softplus", "softsign", "hard_swish", "hard_sigmoid", "leaky_relu", "elu", "selu", "gelu", "reciprocal",
]


@pytest.mark.parametrize("mnemonic", FLOAT_UNARY)
def test_unary_float(mnemonic):
    x = randn(2, 3, 4) * 3
    check([x], lambda b, x: b.op(mnemonic, x))


@pytest.mark.parametrize("mnemonic", ["log", "sqrt"])
def test_unary_positive(mnemonic):
    check([positive(3, 5)], lambda b, x: b.op(mnemonic, x))


def test_unary_attributes():
    x = randn(4, 6) * 4
    check([x], lambda b, x: [
        b.op("gelu", x, approximate="tanh"), b.op("leaky_relu", x, alpha=0.3), b.op("elu", x, alpha=0.7),
        b.op("hard_sigmoid", x, alpha=0.3, beta=0.4),
    ])


@pytest.mark.parametrize("mnemonic", ["abs", "neg", "relu", "sign"])
def test_unary_int(mnemonic):
    check([ints(3, 4)], lambda b, x: b.op(mnemonic, x))


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_square(dtype):
    check([(randn(3, 4) * 5).astype(dtype)], lambda b, x: b.op("square", x))


def test_not():
    check([bools(3, 4)], lambda b, x: b.op("not", x))


@pytest.mark.parametrize("source,target", [
    (np.float32, "i64"), (np.float32, "i1"), (np.bool_, "f32"), (np.int64, "f32"), (np.float32, "f64"),
    (np.int64, "i32"), (np.int32, "i64"), (np.bool_, "i64"), (np.int64, "i1"), (np.float64, "f32"),
])
def test_cast(source, target):
    x = (randn(3, 4) * 5).astype(source) if source is not np.bool_ else bools(3, 4)
    check([x], lambda b, x: b.op("cast", x, to=target))


def test_clip():
    check([randn(4, 5)], lambda b, x: [b.op("clip", x, min=-0.5, max=0.7), b.op("clip", x)])
    # the default bounds of an i64 clip, float(2**63 - 1), saturate to the type's range
    check([ints(4, 5, dtype=np.int64)], lambda b, x: [b.op("clip", x, min=-2, max=3), b.op("clip", x)])


FLOAT_BINARY = ["add", "sub", "mul", "div", "max", "min", "prelu", "equal", "less", "less_or_equal",
                "greater", "greater_or_equal"]


@pytest.mark.parametrize("mnemonic", FLOAT_BINARY)
def test_binary_broadcast(mnemonic):
    check([randn(2, 1, 4), randn(3, 1)], lambda b, x, y: b.op(mnemonic, x, y))


@pytest.mark.parametrize("mnemonic", ["add", "sub", "mul", "div", "max", "min", "equal", "less", "greater"])
def test_binary_int(mnemonic):
    y = ints(4, 3)
    y[y == 0] = 3
    check([ints(2, 4, 3, low=-20, high=20), y], lambda b, x, y: b.op(mnemonic, x, y))


@pytest.mark.parametrize("fmod", [0, 1])
def test_mod(fmod):
    y = ints(5, low=1, high=4) * np.array([1, -1, 1, -1, 1])
    check([ints(3, 5, low=-20, high=20), y], lambda b, x, y: b.op("mod", x, y, fmod=fmod))
    if fmod:
        check([randn(3, 5) * 5, positive(5)], lambda b, x, y: b.op("mod", x, y, fmod=1))
    else:
        check([randn(3, 5) * 5, positive(5) * np.array([1, -1, 1, -1, 1], np.float32)],
              lambda b, x, y: b.op("mod", x, y))


def test_pow():
    check([positive(2, 3), randn(3)], lambda b, x, y: b.op("pow", x, y))
    # a constant integer exponent of a negative base (GPT-2's x**3)
    check([randn(2, 3)], lambda b, x: b.op("pow", x, b.const(np.array(3.0, np.float32))))


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint32, np.int8, np.int64])
def test_bit_shift(direction, dtype):
    """Amounts of the bit width or more, and negative ones for signed types, included."""
    width = np.dtype(dtype).itemsize * 8
    low = -3 if np.dtype(dtype).kind == "i" else 0
    x = RNG.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, (3, 6), endpoint=True).astype(dtype)
    y = np.array([0, 1, width - 1, width, width + 1, low], dtype)
    check([x, y], lambda b, x, y: b.op("bit_shift", x, y, direction=direction))


@pytest.mark.parametrize("mnemonic", ["and", "or", "xor"])
def test_logical(mnemonic):
    check([bools(2, 3), bools(3)], lambda b, x, y: b.op(mnemonic, x, y))


def test_where_broadcasts_three_ways():
    check([bools(3, 1), randn(1, 4), randn(2, 1, 1)], lambda b, c, x, y: b.op("where", c, x, y))


def test_batch_normalization():
    params = [randn(4), randn(4), randn(4), positive(4)]
    check([randn(2, 4, 3, 3)], lambda b, x: b.op("batch_normalization", x, *map(b.const, params), epsilon=1e-3))


def test_constants_scalar_and_bool():
    check([randn(2, 3)], lambda b, x: [
        b.op("mul", x, b.const(np.array(2.5, np.float32))),
        b.const(np.array([[True, False, True]])),
        b.const(np.arange(6, dtype=np.int64).reshape(2, 3)),
    ])


# ----- convolution, matrix products, pooling -----


@pytest.mark.parametrize("case", [
    dict(x=(1, 3, 7, 7), w=(4, 3, 3, 3), bias=True, pads=[1, 1, 1, 1]),
    dict(x=(2, 3, 9, 8), w=(5, 3, 3, 2), bias=True, strides=[2, 3], pads=[1, 0, 2, 1]),
    dict(x=(1, 2, 9, 9), w=(3, 2, 3, 3), bias=False, dilations=[2, 2], strides=[2, 1]),
    dict(x=(1, 4, 6, 6), w=(6, 2, 3, 3), bias=True, group=2, pads=[1, 1, 1, 1]),
    dict(x=(1, 4, 6, 6), w=(4, 1, 3, 3), bias=True, group=4, strides=[2, 2], pads=[1, 1, 1, 1]),
    dict(x=(1, 4, 6, 6), w=(8, 1, 3, 3), bias=False, group=4),
    dict(x=(1, 3, 7, 7), w=(4, 3, 3, 3), bias=True, auto_pad="SAME_UPPER", strides=[2, 2]),
    dict(x=(1, 64, 6, 7), w=(64, 2, 3, 3), bias=True, group=32, pads=[1, 0, 1, 2], strides=[1, 2]),
    dict(x=(2, 3, 10), w=(4, 3, 3), bias=True, pads=[1, 2], strides=[2]),
    dict(x=(1, 4, 10), w=(4, 1, 3), bias=False, group=4),
    dict(x=(1, 6, 11), w=(9, 2, 3), bias=True, group=3, dilations=[2], pads=[2, 1]),
    dict(x=(1, 4, 5, 6, 7), w=(6, 2, 3, 2, 3), bias=True, group=2, pads=[1, 0, 1, 1, 1, 0], strides=[2, 1, 2]),
    dict(x=(2, 3, 7, 5, 6), w=(4, 3, 2, 3, 2), bias=False, dilations=[2, 1, 2], strides=[1, 2, 1]),
    dict(x=(1, 4, 4, 5, 6), w=(4, 1, 3, 3, 3), bias=True, group=4, pads=[1] * 6),
    # depth slices stacked as rows: dilated along the depth, strided across, a batch of 2
    dict(x=(2, 3, 6, 6, 7), w=(3, 1, 3, 3, 3), bias=True, group=3, pads=[1] * 6, dilations=[2, 1, 2],
         strides=[1, 2, 2]),
    # not stacked: strided along the depth, rows (7) not a multiple of the vertical stride
    dict(x=(1, 2, 5, 5, 6), w=(2, 1, 3, 3, 3), bias=False, group=2, strides=[2, 1, 1]),
    dict(x=(1, 2, 4, 7, 6), w=(2, 1, 2, 3, 3), bias=False, group=2, strides=[1, 2, 1]),
    dict(x=(1, 6, 3, 4, 5), w=(4, 6, 1, 1, 2), bias=True, strides=[1, 1, 2]),
    dict(x=(1, 2, 4, 3, 4, 5), w=(3, 2, 2, 2, 1, 3), bias=True, pads=[1, 0, 0, 1] + [0, 1, 0, 1]),
], ids=["pads-bias", "strides-asymmetric", "dilations", "grouped", "depthwise", "depthwise-multiplier",
        "same-upper", "grouped-32", "conv1d", "depthwise1d", "grouped1d", "grouped3d", "conv3d-dilations",
        "depthwise3d", "depthwise3d-dilated-strided", "depthwise3d-depth-strided", "depthwise3d-odd-rows-strided",
        "conv3d-merged-axes", "conv4d"])
def test_conv(case):
    case = dict(case)
    x, w, bias = randn(*case.pop("x")), randn(*case.pop("w")), case.pop("bias")
    b_value = randn(w.shape[0])

    def body(b, x):
        operands = [x, b.const(w)] + ([b.const(b_value)] if bias else [])
        return b.op("conv", *operands, **case)

    check([x], body)


# Transposed convolutions of one input each, one module per input.
CONV_TRANSPOSES = {
    "2-d": ((1, 2, 5, 5), [
        dict(w=(2, 3, 3, 3), bias=False),
        dict(w=(2, 3, 3, 3), bias=True, strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1]),
        dict(w=(2, 3, 4, 3), bias=False, strides=[2, 3], pads=[1, 0, 2, 1], output_padding=[1, 0]),
        dict(w=(2, 3, 3, 3), bias=False, dilations=[2, 2], strides=[1, 2]),
        dict(w=(2, 3, 2, 2), bias=True, strides=[3, 3]),  # phases without taps
        dict(w=(2, 3, 4, 4), bias=True, strides=[2, 2], pads=[1, 1, 1, 1], dilations=[2, 3]),
    ]),
    "output-shape-and-same": ((1, 2, 5, 5), [
        dict(w=(2, 3, 3, 3), bias=True, strides=[2, 2], output_shape=[9, 12]),
        dict(w=(2, 3, 4, 4), bias=False, strides=[3, 3], auto_pad="SAME_UPPER"),
        dict(w=(2, 3, 3, 3), bias=True, strides=[2, 2], auto_pad="SAME_LOWER"),
        dict(w=(2, 3, 3, 3), bias=False, strides=[2, 2], auto_pad="VALID"),
    ]),
    "grouped": ((2, 4, 5, 4), [
        dict(w=(4, 3, 3, 3), bias=True, group=2, strides=[2, 2]),
        dict(w=(4, 1, 4, 4), bias=False, group=4, strides=[2, 2], pads=[1, 1, 1, 1]),
    ]),
    "1-d": ((2, 3, 7), [dict(w=(3, 2, 3), bias=True, strides=[2], pads=[1, 2]), dict(w=(3, 4, 5), bias=False)]),
    "3-d": ((1, 2, 3, 4, 3), [dict(w=(2, 2, 2, 3, 2), bias=True, strides=[2, 1, 2], pads=[0, 1, 0, 1, 1, 0])]),
}


@pytest.mark.parametrize("name", CONV_TRANSPOSES)
def test_conv_transpose(name):
    shape, cases = CONV_TRANSPOSES[name]

    def body(b, x):
        results = []
        for case in cases:
            case = dict(case)
            w, bias = randn(*case.pop("w")), case.pop("bias")
            operands = [x, b.const(w)] + ([b.const(randn(w.shape[1] * case.get("group", 1)))] if bias else [])
            results.append(b.op("conv_transpose", *operands, **case))
        return results

    check([randn(*shape)], body)


@pytest.mark.parametrize("case", [
    dict(a=(4, 5), b=(5, 3)),
    dict(a=(5, 4), b=(3, 5), transA=1, transB=1, alpha=0.5, c=(3,)),
    dict(a=(4, 5), b=(3, 5), transB=1, c=(4, 3), beta=2.0),
    dict(a=(4, 5), b=(5, 3), c=(1, 3)),
    dict(a=(5, 4), b=(5, 3), transA=1, c=(4, 1), alpha=2.0, beta=0.5),
], ids=["plain", "transposed-alpha", "transB-beta", "row-bias", "transA-column-bias"])
def test_gemm(case):
    case = dict(case)
    a, w = randn(*case.pop("a")), randn(*case.pop("b"))
    c = randn(*case.pop("c")) if "c" in case else None
    check([a], lambda b, a: b.op("gemm", a, b.const(w), *([b.const(c)] if c is not None else []), **case))


@pytest.mark.parametrize("shapes", [
    ((4, 5), (5, 3)), ((5,), (5, 3)), ((4, 5), (5,)), ((5,), (5,)), ((2, 7, 5), (5, 3)),
    ((2, 3, 4, 5), (2, 3, 5, 6)), ((2, 1, 4, 5), (3, 5, 2)), ((4, 5), (2, 5, 3)), ((3, 4, 5), (5,)),
], ids=str)
def test_mat_mul(shapes):
    check([randn(*shapes[0]), randn(*shapes[1])], lambda b, x, y: b.op("mat_mul", x, y))


def test_mat_mul_int():
    check([ints(3, 4), ints(4, 2)], lambda b, x, y: b.op("mat_mul", x, y))


@pytest.mark.parametrize("case", [
    dict(kernel_shape=[2, 2], strides=[2, 2]),
    dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
    dict(kernel_shape=[2, 3], strides=[1, 2], dilations=[2, 1], pads=[0, 1, 1, 0]),
    dict(kernel_shape=[3, 3], auto_pad="SAME_UPPER", strides=[2, 2]),
    dict(kernel_shape=[12, 7], strides=[11, 6], dilations=[1, 2], pads=[1, 0, 0, 1], ceil_mode=1),
], ids=["plain", "pads", "ceil", "dilated", "same", "window-past-input"])
def test_max_pool(case):
    check([randn(2, 3, 9, 8)], lambda b, x: b.op("max_pool", x, **case))


def test_max_pool_1d_and_int():
    check([randn(2, 3, 9)], lambda b, x: b.op("max_pool", x, kernel_shape=[3], strides=[2], pads=[1, 1]))
    check([ints(1, 2, 6, 6)], lambda b, x: b.op("max_pool", x, kernel_shape=[2, 2], strides=[2, 2]))


@pytest.mark.parametrize("case", [
    dict(kernel_shape=[2, 2], strides=[2, 2]),
    dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1),
    dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1, pads=[1, 0, 1, 0]),
    dict(kernel_shape=[3], strides=[2], pads=[1, 1]),
    dict(kernel_shape=[12, 7], strides=[11, 6], dilations=[1, 2], pads=[1, 0, 0, 1], ceil_mode=1),
    dict(kernel_shape=[12, 7], strides=[11, 6], dilations=[1, 2], pads=[1, 0, 0, 1], ceil_mode=1,
         count_include_pad=1),
], ids=["plain", "pads", "count-pad", "ceil", "1d", "window-past-input", "window-past-input-count-pad"])
def test_average_pool(case):
    shape = (2, 3, 9) if len(case["kernel_shape"]) == 1 else (2, 3, 9, 8)
    check([randn(*shape)], lambda b, x: b.op("average_pool", x, **case))


def test_global_pools():
    check([randn(2, 3, 5, 4)], lambda b, x: [b.op("global_average_pool", x), b.op("global_max_pool", x)])


def test_lrn():
    check([randn(2, 7, 3, 3)], lambda b, x: b.op("lrn", x, size=3, alpha=1e-2, beta=0.75, bias=2.0))
    check([randn(1, 6, 2, 2)], lambda b, x: b.op("lrn", x, size=4))


# ----- softmax, normalizations, reductions -----


@pytest.mark.parametrize("mnemonic", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [-1, 1])
def test_softmax(mnemonic, axis):
    check([randn(2, 4, 5) * 3], lambda b, x: b.op(mnemonic, x, axis=axis))


def test_layer_normalization():
    scale, bias = randn(8), randn(8)
    check([randn(2, 3, 8)], lambda b, x: b.op("layer_normalization", x, b.const(scale), b.const(bias), epsilon=1e-5))
    scale2 = randn(3, 8)
    check([randn(2, 3, 8)], lambda b, x: b.op("layer_normalization", x, b.const(scale2), axis=1))
    check([randn(2, 8)], lambda b, x: b.op("layer_normalization", x, b.const(scale), stash_type=11))


def test_instance_normalization():
    check([randn(2, 3, 4, 5)], lambda b, x: b.op("instance_normalization", x, b.const(randn(3)), b.const(randn(3))))


REDUCTIONS = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_l1", "reduce_l2",
              "reduce_sum_square", "reduce_log_sum", "reduce_log_sum_exp"]


@pytest.mark.parametrize("mnemonic", REDUCTIONS)
def test_reductions(mnemonic):
    x = positive(2, 3, 4) if mnemonic in ("reduce_log_sum", "reduce_prod") else randn(2, 3, 4)
    check([x], lambda b, x: [
        b.op(mnemonic, x, axes=[1]), b.op(mnemonic, x, axes=[0, 2], keepdims=0), b.op(mnemonic, x),
        b.op(mnemonic, x, axes=[-1], keepdims=0), b.op(mnemonic, x, noop_with_empty_axes=1),
    ])


def test_reductions_int():
    check([ints(3, 4)], lambda b, x: [b.op("reduce_sum", x, axes=[1]), b.op("reduce_max", x, axes=[0], keepdims=0)])


@pytest.mark.parametrize("mnemonic", ["arg_max", "arg_min"])
def test_arg_reductions(mnemonic):
    check([ints(3, 6, low=0, high=3)], lambda b, x: [
        b.op(mnemonic, x, axis=1), b.op(mnemonic, x, axis=0, keepdims=0),
        b.op(mnemonic, x, axis=1, select_last_index=1),
    ])
    check([randn(4, 5)], lambda b, x: b.op(mnemonic, x, axis=-1, keepdims=0))


# ----- data movement -----


def test_reshapes():
    check([randn(2, 3, 4)], lambda b, x: [
        b.op("reshape", x, shape=[6, 4]), b.op("reshape", x, shape=[2, 12, 1]), b.op("reshape", x, shape=[4, 6]),
        b.op("reshape", x, shape=[1, 2, 3, 2, 2]), b.op("reshape", x, shape=[24]), b.op("flatten", x, axis=2),
        b.op("flatten", x, axis=0), b.op("unsqueeze", x, axes=[0, 3]),
    ])
    check([randn(1, 3, 1, 1)], lambda b, x: [
        b.op("squeeze", x), b.op("squeeze", x, axes=[2]), b.op("reshape", x, shape=[3]),
        b.op("reshape", b.op("reshape", x, shape=[1, 1, 3]), shape=[3, 1]),
    ])
    check([randn(1, 1)], lambda b, x: b.op("unsqueeze", b.op("reshape", x, shape=[]), axes=[0]))


def test_transpose():
    check([randn(2, 3, 4, 5)], lambda b, x: [b.op("transpose", x, perm=[0, 2, 1, 3]), b.op("transpose", x)])


def test_concat_and_split():
    check([randn(2, 3, 4), randn(2, 5, 4)], lambda b, x, y: b.op("concat", x, y, axis=1))
    check([ints(2, 3), ints(1, 3)], lambda b, x, y: b.op("concat", x, y, axis=-2))
    check([randn(2, 9)], lambda b, x: b.op("split", x, axis=1, split=[2, 3, 4]))


def test_slice():
    def sliced(x, **onnx):
        shape = x.type.shape
        return lambda b: b.op("slice", x, **SliceOp.normalize(shape, **onnx))

    check([randn(5, 6, 7)], lambda b, x: [
        sliced(x, starts=[1, 0], ends=[4, 7], axes=[0, 2], steps=[1, 2])(b),
        sliced(x, starts=[-1], ends=[-100], axes=[1], steps=[-2])(b),
        sliced(x, starts=[4, 5], ends=[0, -100], axes=[0, 2], steps=[-1, -3])(b),
    ])


def test_gather():
    table = randn(10, 4)
    ids = np.array([[0, 3, 9], [-1, 2, 2]], np.int64)
    check([ids], lambda b, i: b.op("gather", b.const(table), i))
    check([randn(3, 5, 2)], lambda b, x: b.op("gather", x, b.const(np.array([4, 0, -2], np.int32)), axis=1))
    check([randn(3, 5)], lambda b, x: b.op("gather", x, b.const(np.array(2, np.int64)), axis=0))


def test_gather_elements():
    indices = np.array([[0, 2, -1], [1, 0, 0]], np.int64)
    check([randn(2, 3)], lambda b, x: b.op("gather_elements", x, b.const(indices), axis=1))


def test_expand_and_tile():
    check([randn(3, 1)], lambda b, x: [b.op("expand", x, shape=[2, 3, 4]), b.op("tile", x, repeats=[2, 3])])
    check([randn(1, 1, 3)], lambda b, x: b.op("expand", x, shape=[2, 4, 3]))


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "wrap"])
def test_pad(mode):
    check([randn(3, 5)], lambda b, x: [
        b.op("pad", x, pads=[1, 2, 2, 1], mode=mode, constant_value=1.5),
        b.op("pad", x, pads=[0, -1, 2, 3], mode=mode),
    ])


def test_depth_space():
    check([randn(1, 8, 2, 3)], lambda b, x: [
        b.op("depth_to_space", x, blocksize=2), b.op("depth_to_space", x, blocksize=2, mode="CRD"),
    ])
    check([randn(1, 2, 4, 6)], lambda b, x: b.op("space_to_depth", x, blocksize=2))


def resized(shape, scales=None, sizes=None, roi=None, **attrs):
    """The attributes of a Resize of ``shape`` by ``scales`` or to ``sizes``."""
    attrs.update(ResizeOp.resolve(shape, scales=scales, sizes=sizes))
    if roi is not None:
        attrs.update(coordinate_transformation_mode="tf_crop_and_resize", roi=ResizeOp.full_roi(len(shape), roi))
    return attrs


UP, DOWN = [1, 1, 2, 1.5], [1, 1, 0.6, 0.7]
TRANSFORMS = ["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric"]
# Resizes of one input, one module each: every mode, transformation and option, up and down.
RESIZES = {
    "nearest": ((1, 2, 5, 4), [
        resized((1, 2, 5, 4), scales, mode="nearest", nearest_mode=rounding, coordinate_transformation_mode=transform)
        for scales in (UP, DOWN)
        for rounding, transform in zip(["round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple"], TRANSFORMS)
    ]),
    "linear": ((1, 2, 5, 4), [
        resized((1, 2, 5, 4), scales, mode="linear", coordinate_transformation_mode=transform)
        for scales in (UP, DOWN) for transform in TRANSFORMS
    ]),
    "cubic": ((1, 2, 5, 4), [
        resized((1, 2, 5, 4), scales, mode="cubic", cubic_coeff_a=a, exclude_outside=exclude)
        for scales in (UP, DOWN) for a, exclude in [(-0.75, 0), (-0.5, 1)]
    ]),
    "antialias": ((1, 2, 9, 8), [
        resized((1, 2, 9, 8), scales, mode=mode, antialias=1, exclude_outside=exclude)
        for mode, scales, exclude in [("linear", [1, 1, 0.3, 0.6], 0), ("cubic", [1, 1, 0.5, 1.5], 1),
                                      ("cubic", [1, 1, 0.25, 0.25], 0)]
    ]),
    "tf_crop_and_resize": ((1, 2, 5, 4), [
        resized((1, 2, 5, 4), sizes=[1, 2, 4, 3], roi=[0, 0, 0.4, -0.2, 1, 1, 0.6, 1.3], mode=mode,
                extrapolation_value=7.5)
        for mode in ["nearest", "linear", "cubic"]
    ]),
    # At least MIN_ACROSS rows: the interpolated width is resized across them (transposed),
    # up and down, alone and with the height, cropped with extrapolation, antialiased.
    "across": ((1, 2, 13, 11), [
        resized((1, 2, 13, 11), scales, mode=mode, coordinate_transformation_mode=transform)
        for scales in ([1, 1, 2, 1.5], [1, 1, 1, 2.5], [1, 1, 0.6, 0.7]) for mode in ["linear", "cubic"]
        for transform in ["half_pixel", "align_corners"]
    ] + [
        resized((1, 2, 13, 11), sizes=[1, 2, 9, 7], roi=[0, 0, 0.1, -0.2, 1, 1, 0.8, 1.3], mode="cubic",
                extrapolation_value=7.5),
        resized((1, 2, 13, 11), [1, 1, 0.5, 0.4], mode="cubic", antialias=1, exclude_outside=1),
    ]),
    "3-d": ((1, 2, 3, 4, 5), [resized((1, 2, 3, 4, 5), [1, 1, 2, 1.5, 0.5], mode=mode) for mode in ["nearest", "linear"]]),
    "1-d": ((2, 3, 7), [resized((2, 3, 7), [1, 1, 2.5], mode=mode) for mode in ["nearest", "cubic"]]),
    "channels-last": ((1, 5, 4, 3), [resized((1, 5, 4, 3), [1, 2, 0.5, 1], mode=mode) for mode in ["nearest", "linear"]]),
    "empty": ((1, 2, 1, 4), [resized((1, 2, 1, 4), [1, 1, 0.5, 2], mode="linear")]),
}


@pytest.mark.parametrize("name", RESIZES)
def test_resize(name):
    shape, variants = RESIZES[name]
    check([randn(*shape)], lambda b, x: [b.op("resize", x, **attrs) for attrs in variants])


def test_resize_integers():
    attrs = resized((1, 2, 5, 4), UP, mode="nearest")
    check([ints(1, 2, 5, 4, dtype=np.int32)], lambda b, x: b.op("resize", x, **attrs))


def test_fused_block_is_inlined():
    text = """
    func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "ecg.fused"(%a, %b) ({
      ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
        %s = "ecg.add"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
        %r = "ecg.relu"(%s) : (tensor<4xf32>) -> tensor<4xf32>
        "ecg.yield"(%r) {operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>) -> ()
      }) {mapping = "One-to-One", operandSegmentSizes = array<i32: 1, 1, ZEROS>,
          resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %1 = "ecg.neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
      return %1 : tensor<4xf32>
    }
    """.replace("ZEROS", ", ".join(["0"] * 30))
    module = ir.Module.parse(text, dnnf_mlir.make_context())
    inputs = [randn(4), randn(4)]
    want = interpret(module, inputs)
    got = lower_and_run(module, inputs)
    assert_close(got[0], want[0])


def test_jit_splits_long_functions():
    """The JIT splits the bufferized body into functions of a few ops: values cross calls."""

    def body(b, x, y):
        h = b.op("relu", b.op("add", x, y))
        g = b.op("mat_mul", h, b.op("transpose", y))
        s = b.op("softmax", b.op("mul", g, b.const(np.array(0.5, np.float32))))
        return [s, b.op("concat", h, x, axis=0), b.op("reduce_sum", g, axes=[1])]

    check([randn(3, 4), randn(3, 4)], body, max_ops_per_function=3)


# ----- errors -----


def test_op_without_lowering_is_an_error(monkeypatch):
    monkeypatch.delitem(LOWERINGS, "resize")  # every op has a lowering: take one away
    module = build([randn(1, 1, 2, 2)], lambda b, x: b.op("resize", x, sizes=[1, 1, 4, 4]))
    with pytest.raises(ConversionError, match="failed to legalize operation 'ecg.resize'"):
        convert_ecg_to_linalg(module)
    assert "ecg.resize" in str(module)  # nothing was changed


def test_unsupported_configuration_is_an_error():
    module = build([randn(1, 4, 5, 5, 5)], lambda b, x: b.op("max_pool", x, kernel_shape=[2, 2, 2]))
    with pytest.raises(ConversionError, match="3-d pooling"):
        convert_ecg_to_linalg(module)


# ----- whole models -----

def _model_inputs(module):
    """``checking.make_inputs``, the attention mask padded at the end (masking exercised)."""
    function = find_function(module)
    names = [attrs["onnx.name"].value for attrs in function.attributes["arg_attrs"]]
    inputs = make_inputs(names, [from_mlir(a.type) for a in function.regions[0].blocks[0].arguments])
    for name, value in zip(names, inputs):
        if "mask" in name:
            value[..., -3:] = 0
    return inputs


def _cut_after(module, location_part):
    """Make @main return the result of the first op whose location contains ``location_part``
    and drop the ops after it (a slice of the model from its inputs)."""
    function = find_function(module)
    block = function.regions[0].blocks[0]
    operations = list(block.operations)
    cut = next(i for i, op in enumerate(operations) if location_part in str(op.location))
    result = operations[cut].results[0]
    terminator = operations[-1]
    with module.context, ir.Location.unknown(), ir.InsertionPoint(terminator):
        func.ReturnOp([result])
    terminator.erase()
    for op in reversed(operations[cut + 1 : -1]):
        op.erase()
    inputs = [a.type for a in block.arguments]
    with module.context:
        function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, [result.type]))
    module.operation.verify()


def _end_to_end(path, capsys, cut=None):
    from dnnf_mlir.frontend.onnx_importer import import_onnx

    name = path.stem
    module = import_onnx(path)
    if cut:
        _cut_after(module, cut)
    inputs = _model_inputs(module)
    want = interpret(module, inputs)
    start = time.perf_counter()
    convert_ecg_to_linalg(module)
    module.operation.verify()
    timings = {"convert": time.perf_counter() - start}
    jit = LoopsJitFunction(module)
    timings.update(jit.timings)
    start = time.perf_counter()
    got = jit(*inputs)
    timings["run"] = time.perf_counter() - start
    with capsys.disabled():
        print(f"\n{name}{' up to ' + cut if cut else ''}: " + ", ".join(f"{k} {v:.2f}s" for k, v in timings.items()))
    for g, w in zip(got, want):
        assert_close(g, w, how=name)


def test_squeezenet_end_to_end(capsys, models):
    _end_to_end(models["squeezenet"], capsys)


def test_distilbert_two_layers_end_to_end(capsys, models):
    """Embeddings and the first two transformer layers (attention mask, softmax, GELU, ...)."""
    _end_to_end(models["distilbert"], capsys, cut="layer.1/output_layer_norm/")


@pytest.mark.skipif(not os.environ.get("DNNF_JIT_LARGE"), reason="minutes of LLVM compilation; set DNNF_JIT_LARGE=1")
def test_distilbert_end_to_end(capsys, models):
    _end_to_end(models["distilbert"], capsys)
