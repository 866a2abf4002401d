"""Nearest Resize with tf_crop_and_resize at near-ties of its rounding, against onnxruntime.

Regions of tenths give coordinates whose exact value is a half (or 0) but whose f32
expression lands an ulp off (0.50000006): onnxruntime's nearest mode rounds the value it
computes in double (``resize_taps.nearest_crop_coordinates``), so round_prefer_floor
takes 0 where the f32 coordinate took 1. The input counts 0, 1, 2, ... so that the output
is the index read (-1: the extrapolation value); interpreter and compiled code must equal
onnxruntime's exactly. The cases below all disagreed with the f32 coordinates.
"""

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper

import dnnf_mlir
from dnnf_mlir import InferenceSession
from dnnf_mlir.frontend.onnx_importer import import_onnx
from dnnf_mlir.interpreter import interpret

CASES = [(-0.3, 0.4, 4, 7), (-0.6, 1.6, 4, 3), (-0.6, 1.6, 4, 7), (-0.1, 0.75, 7, 3)]  # roi start, end, in, out


def crop_model(start, end, size_in, size_out, nearest_mode):
    """A nearest Resize of a [1, 2, 3, size_in] ramp along its last axis (the others kept)."""
    node = helper.make_node("Resize", ["x", "roi", "", "sizes"], ["y"], mode="nearest", nearest_mode=nearest_mode,
                            coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-1.0)
    roi = helper.make_tensor("roi", TensorProto.FLOAT, [8], [0, 0, 0, start, 1, 1, 1, end])
    sizes = helper.make_tensor("sizes", TensorProto.INT64, [4], [1, 2, 3, size_out])
    graph = helper.make_graph([node], "crop", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, size_in])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [roi, sizes])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    x = np.broadcast_to(np.arange(size_in, dtype=np.float32), (1, 2, 3, size_in)).copy()
    return model, x


@pytest.mark.parametrize("nearest_mode", ["round_prefer_floor", "round_prefer_ceil"])
@pytest.mark.parametrize("start, end, size_in, size_out", CASES)
def test_matches_onnxruntime(start, end, size_in, size_out, nearest_mode):
    model, x = crop_model(start, end, size_in, size_out, nearest_mode)
    want = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    with dnnf_mlir.make_context() as context:
        interpreted = interpret(import_onnx(model, context=context), [x])[0]
    np.testing.assert_array_equal(interpreted, want)
    compiled = InferenceSession(model, use_cache=False, threads=1).run(None, {"x": x})[0]
    np.testing.assert_array_equal(compiled, want)
