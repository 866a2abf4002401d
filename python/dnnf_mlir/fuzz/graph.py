"""A random ONNX graph while it is drawn, and the finished case it becomes.

The builder tracks each value's shape, element type and typical magnitude (the RMS
of its elements when the float inputs are standard normal), so that the generator
only writes well-typed nodes and keeps values in a range where float32 comparisons
are informative. A finished ``Case`` is an ONNX model whose metadata says how to
make its inputs and how large its outputs are: the model file alone is a complete
reproducer (``Case.from_bytes``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper, numpy_helper

OPSET = 20  # Gelu is new in 20; onnxruntime and the importer run every op used here at 20
METADATA = "dnnf.fuzz"  # metadata_props key: JSON of the inputs' distributions, outputs' scales, threads
FLOAT = np.dtype(np.float32)
# Values whose typical magnitude leaves [1 / NORMAL_RANGE, NORMAL_RANGE] are rescaled
# before use: a chain of products or sums would otherwise grow or shrink without bound
# and the comparisons would rest on absolute errors alone.
NORMAL_RANGE = 16.0


@dataclass(frozen=True)
class Value:
    name: str
    shape: tuple
    dtype: np.dtype = FLOAT
    scale: float = 1.0  # typical magnitude of the elements (float values)
    exact: bool = False  # a graph input: read without rounding, so discontinuous ops may take it

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def is_float(self) -> bool:
        return self.dtype == FLOAT


class GraphBuilder:
    """Nodes, initializers and inputs of one graph; ``values`` is the pool that later
    nodes read from, newest last."""

    def __init__(self):
        self.nodes, self.initializers, self.inputs, self.values = [], [], [], []
        self.distributions = {}  # input name -> {"scale": s} (normal) or {"high": n} (integers in [0, n))
        self.count = 0
        self.weights_as_inputs = False  # weights are graph inputs (run-time values) rather than initializers

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def input(self, shape, dtype=FLOAT, scale: float = 1.0, high: int | None = None) -> Value:
        value = Value(self.fresh("in"), tuple(shape), np.dtype(dtype), scale if high is None else 0.0, exact=True)
        self.inputs.append(helper.make_tensor_value_info(value.name, helper.np_dtype_to_tensor_dtype(value.dtype), shape))
        self.distributions[value.name] = {"scale": scale} if high is None else {"high": high}
        self.values.append(value)
        return value

    def constant(self, array) -> str:
        name = self.fresh("c")
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op_type: str, inputs: list, shapes: list, dtype=FLOAT, scale: float = 1.0, **attrs) -> list:
        """Append a node reading ``inputs`` (values or names; "" for an absent optional
        input) and writing one value per shape of ``shapes`` (of ``dtype``, or of one
        element type each when it is a tuple); the new values join the pool."""
        names = [v.name if isinstance(v, Value) else v for v in inputs]
        dtypes = [np.dtype(d) for d in (dtype if isinstance(dtype, tuple) else (dtype,) * len(shapes))]
        outputs = [Value(self.fresh("v"), tuple(s), d, scale if d == FLOAT else 0.0) for s, d in zip(shapes, dtypes)]
        self.nodes.append(helper.make_node(op_type, names, [v.name for v in outputs], **attrs))
        self.values.extend(outputs)
        return outputs

    def one(self, op_type: str, inputs: list, shape, dtype=FLOAT, scale: float = 1.0, **attrs) -> Value:
        (value,) = self.node(op_type, inputs, [shape], dtype, scale, **attrs)
        return value

    def normalized(self, value: Value) -> Value:
        """``value``, multiplied back to magnitude 1 if it left the normal range."""
        if not value.is_float or 1 / NORMAL_RANGE <= value.scale <= NORMAL_RANGE:
            return value
        factor = self.constant(np.array(1 / value.scale, FLOAT))
        return self.one("Mul", [value, factor], value.shape)

    def model(self, outputs: list, threads: tuple) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes, "fuzz", self.inputs,
            [helper.make_tensor_value_info(v.name, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape) for v in outputs],
            self.initializers,
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="dnnf-fuzz")
        meta = {"inputs": self.distributions, "scales": [v.scale for v in outputs], "threads": list(threads)}
        helper.set_model_props(model, {METADATA: json.dumps(meta)})
        return model


@dataclass
class Case:
    """One generated graph: the model, how to make its inputs, the outputs' magnitudes,
    and the thread counts its compiled code runs with."""

    model: onnx.ModelProto

    @property
    def meta(self) -> dict:
        (entry,) = [p.value for p in self.model.metadata_props if p.key == METADATA]
        return json.loads(entry)

    @property
    def threads(self) -> tuple:
        return tuple(self.meta["threads"])

    @property
    def output_scales(self) -> list:
        return self.meta["scales"]

    def inputs(self, seed: int = 0) -> list:
        """The inputs in graph order: normal floats times their scale, integers below their bound."""
        rng = np.random.default_rng(seed)
        arrays = []
        for info in self.model.graph.input:
            distribution = self.meta["inputs"][info.name]
            shape = [d.dim_value for d in info.type.tensor_type.shape.dim]
            dtype = helper.tensor_dtype_to_np_dtype(info.type.tensor_type.elem_type)
            if "high" in distribution:
                arrays.append(np.asarray(rng.integers(0, distribution["high"], shape), dtype))
            else:
                arrays.append(np.asarray(rng.standard_normal(shape) * distribution["scale"], dtype))
        return arrays

    def op_types(self) -> list:
        return [node.op_type for node in self.model.graph.node]

    def to_bytes(self) -> bytes:
        return self.model.SerializeToString()

    @classmethod
    def from_bytes(cls, data: bytes) -> "Case":
        return cls(onnx.load_from_string(data))


__all__ = ["Case", "FLOAT", "GraphBuilder", "METADATA", "NORMAL_RANGE", "OPSET", "Value"]
