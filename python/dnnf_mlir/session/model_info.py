"""What a session tells of its model before compiling it, as onnxruntime tells it.

``NodeArg`` is an input or output: ``name``, ``shape`` (a fixed dimension as an int,
a symbolic one as its name, one without either as None; ``[]`` when the model gives
no shape at all) and ``type`` (``"tensor(float)"``, ``"tensor(int64)"``, ...).
``ModelMetadata`` holds the model's producer, names, doc strings, version and
``metadata_props``. Both round-trip through JSON, so that a cache hit need not parse
the model again (``ModelInfo.to_json``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

import numpy as np
import onnx
from onnx import TensorProto

# onnxruntime shows a model without model_version as the largest int64.
UNSET_VERSION = 2**63 - 1


@dataclass(frozen=True)
class NodeArg:
    name: str
    shape: list
    type: str
    ranked: bool = True  # False when the model gives no shape: any rank is accepted

    @property
    def dtype(self) -> np.dtype:
        """The numpy element type of ``type``."""
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(TensorProto.DataType.Value(self.type[7:-1].upper())))

    @classmethod
    def from_value_info(cls, value_info: onnx.ValueInfoProto) -> "NodeArg":
        tensor = value_info.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in tensor.shape.dim]
        type_name = f"tensor({TensorProto.DataType.Name(tensor.elem_type).lower()})"
        return cls(value_info.name, dims, type_name, tensor.HasField("shape"))


@dataclass(frozen=True)
class ModelMetadata:
    producer_name: str = ""
    graph_name: str = ""
    domain: str = ""
    description: str = ""
    graph_description: str = ""
    version: int = UNSET_VERSION
    custom_metadata_map: dict = field(default_factory=dict)


@dataclass(frozen=True)
class ModelInfo:
    inputs: list  # NodeArg, the graph inputs that are not initializers
    outputs: list  # NodeArg
    metadata: ModelMetadata

    @classmethod
    def from_proto(cls, model: onnx.ModelProto) -> "ModelInfo":
        graph = model.graph
        initializers = {i.name for i in graph.initializer}
        version = model.model_version if model.HasField("model_version") else UNSET_VERSION
        metadata = ModelMetadata(model.producer_name, graph.name, model.domain, model.doc_string, graph.doc_string,
                                 version, {p.key: p.value for p in model.metadata_props})
        return cls([NodeArg.from_value_info(i) for i in graph.input if i.name not in initializers],
                   [NodeArg.from_value_info(o) for o in graph.output], metadata)

    def static_shapes(self, overrides: dict) -> dict | None:
        """Every input's shape, ``overrides`` (name -> shape) first; None when one is not
        fixed or an override names no input (then only a compilation can say why)."""
        if set(overrides) - {a.name for a in self.inputs}:
            return None
        shapes = {a.name: tuple(overrides.get(a.name, a.shape if a.ranked else [None])) for a in self.inputs}
        return shapes if all(isinstance(d, int) for shape in shapes.values() for d in shape) else None

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> "ModelInfo":
        document = json.loads(text)
        return cls([NodeArg(**a) for a in document["inputs"]], [NodeArg(**a) for a in document["outputs"]],
                   ModelMetadata(**document["metadata"]))


__all__ = ["ModelInfo", "ModelMetadata", "NodeArg"]
