"""An ``onnx.backend`` backend over the importer and the reference interpreter.

It lets ONNX's own backend test suite (``onnx.backend.test.BackendTest``) check
the importer and the ECG ops' reference semantics::

    rep = DnnfBackend.prepare(model)
    outputs = rep.run([x, y])

The importer needs static shapes. A model whose inputs all have static shapes is
imported in ``prepare``; otherwise (symbolic or missing dimensions) it is imported
at ``run`` with the shapes of the actual inputs, once per distinct set of shapes.

The importer also needs shape-like operands (Reshape's shape, Slice's starts,
reduction axes, ...) at compile time. ``prepare(model, constant_inputs=names)``
binds the named graph inputs to the values given at ``run`` (as initializers,
so the model is imported once per distinct value); without it a graph input in
such a position is an ``OnnxImportError``.
"""

from typing import Any

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep, namedtupledict

from .frontend.onnx_importer import MAX_OPSET, MIN_OPSET, import_onnx
from .frontend.onnx_types import OnnxImportError
from .frontend.onnx_upgrade import upgrade
from .interpreter import interpret


def _graph_inputs(model: onnx.ModelProto) -> list:
    """The graph inputs the caller feeds: those that are not initializers."""
    initializers = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in initializers]


def _static_shape(value_info: onnx.ValueInfoProto):
    """The declared shape of a tensor input, or None when it is missing or symbolic."""
    if not value_info.type.HasField("tensor_type") or not value_info.type.tensor_type.HasField("shape"):
        return None
    dims = value_info.type.tensor_type.shape.dim
    if not all(d.HasField("dim_value") for d in dims):
        return None
    return tuple(d.dim_value for d in dims)


class DnnfBackendRep(BackendRep):
    """A prepared model: imported modules keyed by the input shapes they were built for."""

    def __init__(self, model: onnx.ModelProto, constant_inputs=(), context=None):
        self.model = model
        self.context = context
        self.inputs = _graph_inputs(model)
        self.output_names = [o.name for o in model.graph.output]
        unknown = set(constant_inputs) - {i.name for i in self.inputs}
        if unknown:
            raise ValueError(f"constant_inputs names no graph input: {', '.join(sorted(unknown))}")
        self.constant = [i.name in constant_inputs for i in self.inputs]
        self.modules = {}
        declared = [_static_shape(i) for i in self.inputs]
        if not any(self.constant) and all(shape is not None for shape in declared):
            self.modules[tuple(declared)] = import_onnx(model, context=context)

    def module_for(self, inputs: list):
        """The module for these inputs' shapes (and values of the constant ones)."""
        key = tuple(
            (x.shape, x.dtype.str, x.tobytes()) if constant else x.shape for x, constant in zip(inputs, self.constant)
        )
        if key not in self.modules:
            model = self.model
            if any(self.constant):
                model = onnx.ModelProto()
                model.CopyFrom(self.model)
                model.graph.initializer.extend(
                    onnx.numpy_helper.from_array(x, i.name)
                    for i, x, constant in zip(self.inputs, inputs, self.constant)
                    if constant
                )
            shapes = {i.name: x.shape for i, x, constant in zip(self.inputs, inputs, self.constant) if not constant}
            self.modules[key] = import_onnx(model, shapes=shapes, context=self.context)
        return self.modules[key]

    def run(self, inputs: Any, **kwargs: Any) -> tuple:
        if isinstance(inputs, dict):
            inputs = [inputs[i.name] for i in self.inputs]
        elif isinstance(inputs, np.ndarray):
            inputs = [inputs]
        inputs = [np.asarray(x) for x in inputs]
        if len(inputs) != len(self.inputs):
            raise ValueError(f"the model takes {len(self.inputs)} inputs, got {len(inputs)}")
        module = self.module_for(inputs)
        outputs = interpret(module, [x for x, constant in zip(inputs, self.constant) if not constant])
        return namedtupledict("Outputs", self.output_names)(*outputs)


class DnnfBackend(Backend):
    """ONNX backend running models with the ECG reference interpreter (CPU only)."""

    @classmethod
    def prepare(
        cls, model: onnx.ModelProto, device: str = "CPU", constant_inputs=(), context=None, **kwargs: Any
    ) -> DnnfBackendRep:
        """Upgrade (old opsets, see ``onnx_upgrade``), check and (with static input shapes) import ``model``.

        ``constant_inputs`` names graph inputs to bind to their values at ``run``;
        ``context`` is the MLIR context to import into (default: a new one per
        import; sharing one saves the dialect loading when preparing many small
        models). Other keyword arguments (such as the test runner's rtol/atol)
        are ignored.
        """
        model = upgrade(model, MIN_OPSET)
        super().prepare(model, device)  # onnx.checker
        for value_info in model.graph.input:  # a sequence or optional input could not even be fed to ``run``
            if not value_info.type.HasField("tensor_type"):
                raise OnnxImportError(f"graph input '{value_info.name}' is not a tensor")
        if not cls.supports_device(device):
            raise ValueError(f"device '{device}' is not supported")
        return DnnfBackendRep(model, constant_inputs, context)

    @classmethod
    def run_node(
        cls, node: onnx.NodeProto, inputs: Any, device: str = "CPU", outputs_info=None, constant_inputs=(), **kwargs: Any
    ) -> tuple:
        """Run one node on ``inputs`` (a sequence in the node's input order, or a name -> array dict).

        The model has opset ``opset_version`` (default: the newest the importer supports);
        ``constant_inputs`` names the node inputs to bind as constants (see ``prepare``).
        """
        if not cls.supports_device(device):
            raise ValueError(f"device '{device}' is not supported")
        names = [name for name in node.input if name]
        if isinstance(inputs, dict):
            inputs = [inputs[name] for name in names]
        inputs = [np.asarray(x) for x in inputs]
        graph = onnx.helper.make_graph(
            [node],
            node.name or node.op_type,
            [
                onnx.helper.make_tensor_value_info(name, onnx.helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)
                for name, x in zip(names, inputs)
            ],
            [onnx.helper.make_empty_tensor_value_info(name) for name in node.output if name],
        )
        opset = onnx.helper.make_opsetid(node.domain, kwargs.get("opset_version", MAX_OPSET))
        model = onnx.helper.make_model(graph, opset_imports=[opset])
        return DnnfBackendRep(model, constant_inputs).run(inputs)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device.split(":")[0] == "CPU"


prepare = DnnfBackend.prepare
run_node = DnnfBackend.run_node
run_model = DnnfBackend.run_model
supports_device = DnnfBackend.supports_device
