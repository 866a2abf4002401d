"""Padded buffers filled on their border only (``codegen/cpu/border_fills.py``).

The slabs ``border_slabs`` returns cover every element outside the interior exactly
once and none inside it; on IR, the whole-buffer fill before a copy into the interior
becomes fills of those slabs. End to end against onnxruntime: Pads with a nonzero value
(f32 and int8: a border left unfilled reads whatever the buffer held, not the value),
and padded convolutions (3x3/1, 3x3/2 through phase planes, depthwise, asymmetric
pads), on AVX2 (x86-64-v3) and AVX-512 (x86-64-v4). Pads compare exactly;
convolutions to 1e-4 of the output's largest magnitude (float32 sums of at most 1152
terms in another order).
"""

import itertools

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from compile_helpers import compile_onnx
from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen.cpu.border_fills import border_slabs, fill_only_borders
from dnnf_mlir.ir_walk import walk_ops

CPUS = ["x86-64-v3", "x86-64-v4"]


@pytest.mark.parametrize("shape, offsets, sizes", [
    ((1, 8, 10, 10), (0, 0, 1, 1), (1, 8, 8, 8)),
    ((2, 3, 7, 9), (1, 0, 2, 0), (1, 2, 3, 9)),
    ((5,), (0,), (5,)),
    ((4, 6), (3, 5), (1, 1)),
])
def test_slabs_cover_the_border_once(shape, offsets, sizes):
    count = np.zeros(shape, np.int64)
    for slab_offsets, slab_sizes in border_slabs(list(shape), list(offsets), list(sizes)):
        count[tuple(slice(o, o + s) for o, s in zip(slab_offsets, slab_sizes))] += 1
    interior = np.zeros(shape, bool)
    interior[tuple(slice(o, o + s) for o, s in zip(offsets, sizes))] = True
    assert (count[interior] == 0).all()
    assert (count[~interior] == 1).all()


PADDED_COPY = """
func.func @pad(%src: memref<1x4x6x6xf32>) -> memref<1x4x8x9xf32> {
  %cst = arith.constant 2.5 : f32
  %buf = memref.alloc() : memref<1x4x8x9xf32>
  linalg.fill ins(%cst : f32) outs(%buf : memref<1x4x8x9xf32>)
  %view = memref.subview %buf[0, 0, 1, 2] [1, 4, 6, 6] [1, 1, 1, 1]
      : memref<1x4x8x9xf32> to memref<1x4x6x6xf32, strided<[288, 72, 9, 1], offset: 11>>
  memref.copy %src, %view : memref<1x4x6x6xf32> to memref<1x4x6x6xf32, strided<[288, 72, 9, 1], offset: 11>>
  return %buf : memref<1x4x8x9xf32>
}
"""


def test_whole_fill_becomes_border_fills():
    with ir.Context():
        module = ir.Module.parse(PADDED_COPY)
        fill_only_borders(module)
        boxes = []
        for fill in walk_ops(module.operation, {"linalg.fill"}):
            view = fill.operands[-1].owner
            assert view.name == "memref.subview"
            boxes.append((list(ir.DenseI64ArrayAttr(view.attributes["static_offsets"])),
                          list(ir.DenseI64ArrayAttr(view.attributes["static_sizes"]))))
    assert boxes == [([0, 0, 0, 0], [1, 4, 1, 9]), ([0, 0, 7, 0], [1, 4, 1, 9]),
                     ([0, 0, 1, 0], [1, 4, 6, 2]), ([0, 0, 1, 8], [1, 4, 6, 1])]


SELF_COPY = """
func.func @shift(%arg: memref<1x4x8x9xf32>) -> memref<1x4x8x9xf32> {
  %cst = arith.constant 2.5 : f32
  %buf = memref.alloc() : memref<1x4x8x9xf32>
  linalg.map outs(%buf : memref<1x4x8x9xf32>) (%init: f32) { linalg.yield %cst : f32 }
  %from = memref.subview %buf[0, 0, 0, 0] [1, 4, 6, 6] [1, 1, 1, 1]
      : memref<1x4x8x9xf32> to memref<1x4x6x6xf32, strided<[288, 72, 9, 1]>>
  %view = memref.subview %buf[0, 0, 1, 2] [1, 4, 6, 6] [1, 1, 1, 1]
      : memref<1x4x8x9xf32> to memref<1x4x6x6xf32, strided<[288, 72, 9, 1], offset: 11>>
  memref.copy %from, %view : memref<1x4x6x6xf32, strided<[288, 72, 9, 1]>> to memref<1x4x6x6xf32, strided<[288, 72, 9, 1], offset: 11>>
  return %buf : memref<1x4x8x9xf32>
}
"""


def test_copy_out_of_the_buffer_keeps_its_whole_fill():
    """The copy reads the fill's values inside the interior: they must stay written."""
    with ir.Context():
        module = ir.Module.parse(SELF_COPY)
        fill_only_borders(module)
        maps = list(walk_ops(module.operation, {"linalg.map"}))
        assert len(maps) == 1 and maps[0].operands[-1].owner.name == "memref.alloc"
        assert not list(walk_ops(module.operation, {"linalg.fill"}))


def pad_model(shape, pads, value, element):
    """A constant-mode Pad of ``pads`` (ONNX order) with ``value``, of ``element`` data."""
    onnx_type = {np.float32: TensorProto.FLOAT, np.int8: TensorProto.INT8}[element]
    out = [d + pads[i] + pads[i + len(shape)] for i, d in enumerate(shape)]
    initializers = [numpy_helper.from_array(np.array(pads, np.int64), "pads"),
                    numpy_helper.from_array(np.array(value, element), "value")]
    node = helper.make_node("Pad", ["x", "pads", "value"], ["y"], mode="constant")
    graph = helper.make_graph([node], "pad", [helper.make_tensor_value_info("x", onnx_type, list(shape))],
                              [helper.make_tensor_value_info("y", onnx_type, out)], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("shape, pads, value, element", [
    ((1, 16, 14, 14), (0, 0, 1, 1, 0, 0, 1, 1), 2.5, np.float32),
    ((2, 3, 9, 11), (0, 1, 2, 0, 1, 0, 3, 1), -1.25, np.float32),
    ((1, 8, 13, 13), (0, 0, 1, 2, 0, 0, 2, 1), 7, np.int8),
])
def test_pads_read_their_value(cpu, shape, pads, value, element):
    rng = np.random.default_rng(0)
    x = (rng.integers(-100, 100, shape) if element == np.int8 else rng.standard_normal(shape)).astype(element)
    model = pad_model(shape, pads, value, element)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got, _ = compile_onnx(model, {"x": x}, cpu, 1)
    np.testing.assert_array_equal(got, want)


def conv_model(channels, filters, plane, stride, pads, groups, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, channels, plane, plane)).astype(np.float32)
    w = (rng.standard_normal((filters, channels // groups, 3, 3)) / np.sqrt(9 * channels // groups)).astype(np.float32)
    out = [(plane + pads[i] + pads[i + 2] - 3) // stride + 1 for i in range(2)]
    node = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], strides=[stride] * 2, pads=list(pads),
                            group=groups)
    graph = helper.make_graph([node], "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, filters, *out])],
                              [numpy_helper.from_array(w, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), {"x": x}


@pytest.mark.parametrize("cpu, case", list(itertools.product(CPUS, [
    (64, 64, 28, 1, (1, 1, 1, 1), 1),  # 3x3/1, pads 1: ResNet's 3x3 layers
    (128, 128, 28, 2, (1, 1, 1, 1), 1),  # 3x3/2: phase planes of the padded input
    (32, 32, 19, 1, (0, 2, 1, 0), 1),  # asymmetric pads
    (48, 48, 14, 2, (1, 1, 1, 1), 48),  # depthwise, strided
])))
def test_padded_convolutions(cpu, case):
    model, feeds = conv_model(*case, seed=1)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    got, _ = compile_onnx(model, feeds, cpu, 1)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4 * np.abs(want).max())
