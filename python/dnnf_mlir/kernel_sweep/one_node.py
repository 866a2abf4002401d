"""What every sweep case is made of: ``SweepCase`` and its one-node ONNX model.

Shared by the op families' cases (``cases.py``) and the grid of shapes (``grid.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import onnx
from onnx import helper, numpy_helper

_TYPES = {np.dtype(np.float32): onnx.TensorProto.FLOAT, np.dtype(np.int64): onnx.TensorProto.INT64,
          np.dtype(np.uint8): onnx.TensorProto.UINT8, np.dtype(np.int8): onnx.TensorProto.INT8,
          np.dtype(np.int32): onnx.TensorProto.INT32}


@dataclass(frozen=True)
class SweepCase:
    family: str  # "Resize", "Conv", ...
    name: str  # unique: "resize-linear"
    shape: str  # what is computed, in words: "1x64x56x56 -> 1x64x112x112"
    build: Callable  # rng -> (onnx.ModelProto, {input name: array})

    def model(self, seed: int = 0) -> tuple:
        return self.build(np.random.default_rng(seed))


def one_node(op: str, inputs: dict, constants: dict = None, order: list = None, opset: int = 23, outputs: int = 1,
             **attrs) -> onnx.ModelProto:
    """A model of one ``op`` node: ``inputs`` are graph inputs, ``constants``
    initializers, read in ``order`` (names; "" skips an optional input; default: the
    inputs, then the constants)."""
    constants = constants or {}
    order = order if order is not None else [*inputs, *constants]
    node = helper.make_node(op, order, [f"y{i}" for i in range(outputs)], **attrs)
    graph_inputs = [helper.make_tensor_value_info(n, _TYPES[v.dtype], v.shape) for n, v in inputs.items()]
    initializers = [numpy_helper.from_array(v, n) for n, v in constants.items()]
    graph_outputs = [onnx.ValueInfoProto(name=f"y{i}") for i in range(outputs)]
    graph = helper.make_graph([node], op.lower(), graph_inputs, graph_outputs, initializers)
    return onnx.shape_inference.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]))


def randn(rng, *shape) -> np.ndarray:
    """Standard normal float32 values of ``shape``."""
    return rng.standard_normal(shape).astype(np.float32)


__all__ = ["SweepCase", "one_node", "randn"]
