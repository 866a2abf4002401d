"""Byte matmuls on AVX512-VNNI (codegen/cpu/int8_matmuls.py, dnnf-int8-matmuls; the
kernel in vnni_matmul.py, the conversion kernels it reads through in byte_offsets.py):
which MatMulInteger / QLinearMatMul nodes take the kernel, and their compiled results
against onnxruntime.

Tolerance: none. MatMulInteger's int32 result and QLinearMatMul's requantized bytes are
exact in onnxruntime's arithmetic (integer sums, one float multiply, round half to
even), and dnnf computes the same: outputs equal, bit for bit. The shapes make every
part of the kernel run: rows past the 4-row tiles (7, 13), columns past the 64-column
tiles and past a 16-lane vector (45, 71, 5), depths no multiple of 4 (37, 63, 10),
where A's last word is read bounded. The numeric tests run for the CPU the tests are
pinned to (``DNNF_CPU``): on a CPU with avx512vnni the kernel (the rule tests say
which cases take it), elsewhere (x86-64-v3) the f32 matmul, which must give the same
bits.

QLinearConv and ConvInteger take the kernel through their windows (byte_windows.py):
channels no multiple of 4 (3, 5, 7: words that straddle taps, depths whose last word is
read bounded) or of 16 (20, 5, 18), output pixels past the 4-row tiles, stride 2,
dilation 2, asymmetric padding (with the zero point's byte: a wrong one changes the
border), a batch of 2, per-channel filter scales, u8 and s8 inputs, and the importer's
i32 convolution (sums past f32's exact integers).
"""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnf_mlir
from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen.cpu.byte_offsets import ByteOffset, byte_offset
from dnnf_mlir.codegen.cpu.int8_matmuls import int8_matmuls
from dnnf_mlir.codegen.cpu.vnni_matmul import packed_weights
from dnnf_mlir.codegen.target import get_target
from dnnf_mlir.frontend.onnx_importer import import_onnx
from dnnf_mlir.kernel_functions import LAUNCHED_ATTR, UNIQUE_ATTR, kernel_counts
from dnnf_mlir.transforms.pipeline import build_pass_manager

RNG = np.random.default_rng(4629)
ONNX_TYPES = {np.dtype(np.uint8): TensorProto.UINT8, np.dtype(np.int8): TensorProto.INT8}


def _ints(dtype, shape, low=None, high=None):
    info = np.iinfo(dtype)
    low, high = info.min if low is None else low, info.max if high is None else high
    return RNG.integers(low, high, shape, endpoint=True).astype(dtype)


def _model(op_type, a, constants: dict, **attributes):
    """One ``op_type`` node (opset 10, ``attributes``) of the input ``a`` and the initializers
    ``constants`` (name -> array, in the node's input order after ``a``; None: an omitted input)."""
    names = ["a"] + [name if value is not None else "" for name, value in constants.items()]
    node = helper.make_node(op_type, names, ["y"], **attributes)
    graph = helper.make_graph(
        [node], "q", [helper.make_tensor_value_info("a", ONNX_TYPES[a.dtype], a.shape)],
        [onnx.ValueInfoProto(name="y")],
        [numpy_helper.from_array(v, n) for n, v in constants.items() if v is not None])
    return onnx.shape_inference.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 10)]))


def _matmul_integer(a_type, b, a_zero, b_zero, rows=7):
    a = _ints(a_type, (rows, b.shape[0]))
    zero_points = {"az": None if a_zero is None else np.array(a_zero, a_type),
                   "bz": None if b_zero is None else np.array(b_zero, b.dtype)}
    if zero_points["bz"] is None:
        zero_points.pop("bz")
        if zero_points["az"] is None:
            zero_points.pop("az")
    return _model("MatMulInteger", a, {"b": b, **zero_points}), {"a": a}


def _qlinear_matmul(b, b_zero, rows=13):
    a = _ints(np.uint8, (rows, b.shape[0]))
    constants = {"as": np.array(0.02, np.float32), "az": np.array(131, np.uint8), "b": b,
                 "bs": np.array(0.01, np.float32), "bz": np.array(b_zero, b.dtype),
                 "ys": np.array(0.35, np.float32), "yz": np.array(120, np.uint8)}
    return _model("QLinearMatMul", a, constants), {"a": a}


def _qlinear_conv(a_type, a_shape, w, a_zero, w_zero, bias=False, w_scales=(0.01,), **attributes):
    """A QLinearConv of random bytes ``a_shape`` by the filters ``w`` (per-channel scales
    when ``w_scales`` has one per output channel)."""
    a = _ints(a_type, a_shape)
    constants = {"as": np.array(0.02, np.float32), "az": np.array(a_zero, a_type), "w": w,
                 "ws": np.array(w_scales, np.float32).reshape(-1) if len(w_scales) > 1 else
                 np.array(w_scales[0], np.float32),
                 "wz": np.array(w_zero, w.dtype), "ys": np.array(0.4, np.float32), "yz": np.array(117, a_type)}
    if bias:
        constants["b"] = RNG.integers(-3000, 3000, w.shape[0]).astype(np.int32)
    return _model("QLinearConv", a, constants, **attributes), {"a": a}


def _conv_integer(a_type, a_shape, w, a_zero, **attributes):
    a = _ints(a_type, a_shape)
    return _model("ConvInteger", a, {"w": w, "az": np.array(a_zero, a_type)}, **attributes), {"a": a}


# (name, model and feeds, whether the kernel takes it)
CASES = [
    ("u8 x s8, zero points 0", lambda: _matmul_integer(np.uint8, _ints(np.int8, (37, 45)), 0, 0), True),
    ("u8 x s8, A's zero point 131", lambda: _matmul_integer(np.uint8, _ints(np.int8, (63, 71)), 131, None), True),
    ("u8 x s8, no zero points", lambda: _matmul_integer(np.uint8, _ints(np.int8, (10, 5)), None, None), True),
    ("s8 x s8, A's zero point -5", lambda: _matmul_integer(np.int8, _ints(np.int8, (37, 45)), -5, 0), True),
    ("s8 x s8, 130 rows", lambda: _matmul_integer(np.int8, _ints(np.int8, (64, 80)), 0, 0, rows=130), True),
    # B - b_zero within -128 ... 127: the centered weights fit the kernel's signed bytes
    ("u8 x u8, B's zero point 128", lambda: _matmul_integer(np.uint8, _ints(np.uint8, (37, 45)), 7, 128), True),
    ("u8 x s8, B's zero point 20", lambda: _matmul_integer(np.uint8, _ints(np.int8, (37, 45), -100, 100), 3, 20),
     True),
    # centered weights past -128 ... 127: the f32 matmul
    ("u8 x u8, B's zero point 0", lambda: _matmul_integer(np.uint8, _ints(np.uint8, (37, 45)), 7, 0), False),
    ("s8 x s8, B's zero point 100", lambda: _matmul_integer(np.int8, _ints(np.int8, (37, 45)), 0, 100), False),
    ("qlinear u8 x s8", lambda: _qlinear_matmul(_ints(np.int8, (64, 45)), 0), True),
    ("qlinear u8 x u8, B's zero point 128", lambda: _qlinear_matmul(_ints(np.uint8, (37, 71)), 128), True),
    ("conv 3x3 pad 1, 7 -> 20 channels", lambda: _qlinear_conv(
        np.uint8, (1, 7, 9, 11), _ints(np.int8, (20, 7, 3, 3)), 128, 0, pads=[1, 1, 1, 1]), True),
    ("conv stem 7x7 / 2, 3 -> 5 channels, bias", lambda: _qlinear_conv(
        np.uint8, (1, 3, 17, 15), _ints(np.int8, (5, 3, 7, 7)), 3, 0, bias=True, strides=[2, 2],
        pads=[3, 3, 3, 3]), True),
    ("conv 1x1 / 2, batch 2, per-channel scales", lambda: _qlinear_conv(
        np.uint8, (2, 33, 7, 7), _ints(np.int8, (18, 33, 1, 1)), 0, 0, w_scales=tuple(np.linspace(0.004, 0.02, 18)),
        strides=[2, 2]), True),
    ("conv s8 input, dilation 2, asymmetric pads", lambda: _qlinear_conv(
        np.int8, (1, 16, 10, 9), _ints(np.int8, (32, 16, 3, 3)), -7, 0, dilations=[2, 2], pads=[0, 2, 1, 0]),
     True),
    ("conv u8 filters, zero point 128", lambda: _qlinear_conv(
        np.uint8, (1, 5, 8, 8), _ints(np.uint8, (16, 5, 3, 3)), 250, 128, pads=[1, 1, 1, 1]), True),
    ("ConvInteger 3x3 / 2, pad 1", lambda: _conv_integer(
        np.uint8, (1, 12, 13, 13), _ints(np.int8, (24, 12, 3, 3)), 131, strides=[2, 2], pads=[1, 1, 1, 1]), True),
    # 115 * 9 taps of up to 128 * 128: sums past f32's exact integers, the importer's i32 convolution
    ("conv 3x3 pad 1, 115 -> 21 channels, i32", lambda: _qlinear_conv(
        np.uint8, (1, 115, 5, 6), _ints(np.int8, (21, 115, 3, 3)), 128, 0, pads=[1, 1, 1, 1]), True),
    ("ConvInteger 1x1, 2000 -> 3 channels, i32", lambda: _conv_integer(
        np.uint8, (1, 2000, 3, 2), _ints(np.int8, (3, 2000, 1, 1)), 128), True),
    # centered filters past -128 ... 127: the f32 convolution; grouped: no conv_2d_nchw_fchw
    ("conv u8 filters, zero point 0", lambda: _qlinear_conv(
        np.uint8, (1, 5, 8, 8), _ints(np.uint8, (16, 5, 3, 3)), 250, 0, pads=[1, 1, 1, 1]), False),
    ("conv 2 groups", lambda: _qlinear_conv(np.uint8, (1, 8, 6, 6), _ints(np.int8, (8, 4, 3, 3)), 128, 0, group=2),
     False),
]
IDS = [case[0] for case in CASES]


def _linalg_module(onnx_model, context):
    module = import_onnx(onnx_model, context=context)
    build_pass_manager("builtin.module(ecg-rewrite,ecg-fuse,ecg-outline-kernels,convert-ecg-to-linalg)",
                       context).run(module.operation)
    return module


@pytest.mark.parametrize("name,build,taken", CASES, ids=IDS)
def test_which_matmuls_take_the_kernel(name, build, taken):
    onnx_model, _ = build()
    context = dnnf_mlir.make_context()
    with context:
        module = _linalg_module(onnx_model, context)
        assert int8_matmuls(module, get_target("host", "znver4")) == int(taken), name
        assert module.operation.verify()
        functions = [op.name.value for op in module.body.operations if op.operation.name == "func.func"]
        if taken:  # the conversion kernel went: the entry passes the bytes, one kernel launched fewer
            assert not any("cast_sub" in f for f in functions), functions
        recorded = [ir.IntegerAttr(module.operation.attributes[a]).value for a in (LAUNCHED_ATTR, UNIQUE_ATTR)]
        assert tuple(recorded) == kernel_counts(module.operation) == (2 - taken, 2 - taken)


@pytest.mark.parametrize("case", [0, IDS.index("conv 3x3 pad 1, 7 -> 20 channels")])
@pytest.mark.parametrize("cpu", ["x86-64-v3", "skylake"])
def test_cpus_without_avx512_vnni_keep_the_f32_matmul(cpu, case):
    onnx_model, _ = CASES[case][1]()
    context = dnnf_mlir.make_context()
    with context:
        module = _linalg_module(onnx_model, context)
        assert int8_matmuls(module, get_target("host", cpu)) == 0


@pytest.mark.parametrize("threads", [1, 2])  # 2: the row tiles (and rows of windows) shared by the threads
@pytest.mark.parametrize("name,build,taken", CASES, ids=IDS)
def test_matmuls_equal_onnxruntime(name, build, taken, threads, tmp_path):
    onnx_model, feeds = build()
    want = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    got = dnnf_mlir.InferenceSession(onnx_model, cache_dir=tmp_path, threads=threads).run(None, feeds)
    assert got[0].dtype == want[0].dtype and got[0].shape == want[0].shape, name
    np.testing.assert_array_equal(got[0], want[0], err_msg=name)


def test_packed_weights_hold_four_rows_a_word_and_the_start_row():
    weights = _ints(np.int8, (10, 20))
    packed = packed_weights(weights, 131)
    assert packed.shape == (4, 32)  # ceil(10 / 4) words of rows, then the start row; 20 -> 32 columns
    as_bytes = packed[:3].view(np.int8).reshape(3, 32, 4)
    for q, n, j in [(0, 0, 0), (1, 19, 3), (2, 5, 1)]:
        assert as_bytes[q, n, j] == weights[4 * q + j, n]
    assert not as_bytes[2, :, 2:].any() and not as_bytes[:, 20:].any()  # past K and past N
    np.testing.assert_array_equal(packed[3, :20], -131 * weights.astype(np.int32).sum(axis=0))
    assert not packed[3, 20:].any()


def _conversion_kernel(body: str) -> str:
    return f"""
#map = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>
func.func private @convert(%x: tensor<8xi8>) -> tensor<8xf32> {{
  %c = arith.constant dense<3> : tensor<i32>
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {{indexing_maps = [#map, #scalar, #map], iterator_types = ["parallel"]}}
      ins(%x, %c : tensor<8xi8>, tensor<i32>) outs(%e : tensor<8xf32>) {{
  ^bb0(%in: i8, %k: i32, %out: f32):
{body}
  }} -> tensor<8xf32>
  return %r : tensor<8xf32>
}}"""


@pytest.mark.parametrize("body,offset", [
    ("%w = arith.extui %in : i8 to i32\n%s = arith.subi %w, %k : i32\n%f = arith.sitofp %s : i32 to f32\n"
     "linalg.yield %f : f32", ByteOffset(False, 3)),
    ("%w = arith.extsi %in : i8 to i32\n%s = arith.addi %w, %k : i32\n%f = arith.sitofp %s : i32 to f32\n"
     "linalg.yield %f : f32", ByteOffset(True, -3)),
    ("%f = arith.uitofp %in : i8 to f32\nlinalg.yield %f : f32", ByteOffset(False, 0)),
    # a scale, or bytes read as signed then as unsigned: no offset of the bytes
    ("%w = arith.extui %in : i8 to i32\n%f = arith.sitofp %w : i32 to f32\n%g = arith.addf %f, %f : f32\n"
     "linalg.yield %g : f32", None),
    ("%w = arith.extsi %in : i8 to i32\n%f = arith.uitofp %w : i32 to f32\nlinalg.yield %f : f32", None),
])
def test_byte_offsets_of_conversion_kernels(body, offset):
    context = dnnf_mlir.make_context()
    with context:
        module = ir.Module.parse(_conversion_kernel(body))
        assert byte_offset(module.body.operations[0]) == offset
