"""The model run in float64, the reference that tells float32 noise from a wrong result
(``checking.noise_tolerance`` measures onnxruntime's float32 error against it).

The model's float32 tensors, initializers, constants, casts and LayerNormalization
stashes are made float64. onnxruntime runs that model where it has a double kernel for
every op (MatMul, Gemm, Softmax, ...: the transformers); it has none for Conv or Erf,
so the CNNs and the BERTs run in the interpreter instead, imported from the same
float64 model (numpy computes each op in float64). The reference is made once per model
and inputs (cached on disk, ``_cached``): a CNN in the interpreter takes seconds to a minute.
"""

import fcntl
import hashlib
import os
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper

from ..cache.keys import compiler_fingerprint
from ..cache.store import default_root
from ..checking import ATOL, RTOL, measure_noise
from ..frontend.onnx_importer import MIN_OPSET, import_onnx
from ..frontend.onnx_upgrade import upgrade
from ..interpreter import interpret

FLOAT, DOUBLE = TensorProto.FLOAT, TensorProto.DOUBLE
TYPE_ATTRIBUTES = ("to", "dtype", "stash_type")  # Cast, ConstantOfShape / Random*, LayerNormalization


class Float64Unavailable(Exception):
    """Neither onnxruntime nor the interpreter runs the model in float64 (why: the message)."""


def as_float64(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of ``model`` whose float32 tensors are all float64."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    _graph_as_float64(copy.graph)
    return copy


def _graph_as_float64(graph: onnx.GraphProto) -> None:
    for value in [*graph.input, *graph.output, *graph.value_info]:
        if value.type.tensor_type.elem_type == FLOAT:
            value.type.tensor_type.elem_type = DOUBLE
    for tensor in graph.initializer:
        _tensor_as_float64(tensor)
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.name in TYPE_ATTRIBUTES and attribute.type == AttributeProto.INT and attribute.i == FLOAT:
                attribute.i = DOUBLE
            elif attribute.type == AttributeProto.TENSOR:
                _tensor_as_float64(attribute.t)
            elif attribute.type == AttributeProto.GRAPH:
                _graph_as_float64(attribute.g)
        if node.op_type == "LayerNormalization" and not any(a.name == "stash_type" for a in node.attribute):
            node.attribute.append(helper.make_attribute("stash_type", DOUBLE))


def _tensor_as_float64(tensor: onnx.TensorProto) -> None:
    if tensor.data_type != FLOAT:
        return
    if tensor.raw_data:  # converted in place: through numpy_helper, a large CNN's weights take seconds
        tensor.raw_data = np.frombuffer(tensor.raw_data, dtype="<f4").astype("<f8").tobytes()
        tensor.data_type = DOUBLE
    else:
        tensor.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(tensor).astype(np.float64), tensor.name))


def weightless(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` with its initializers made graph inputs of the same types: all that
    onnxruntime needs to choose its kernels, without the bytes of the weights."""
    graph = model.graph
    known = {i.name for i in graph.input}
    weights = [(t.name, t.data_type, t.dims) for t in graph.initializer]
    weights += [(t.values.name, t.values.data_type, t.dims) for t in graph.sparse_initializer]
    inputs = [*graph.input, *(helper.make_tensor_value_info(name, element, list(dims))
                              for name, element, dims in weights if name not in known)]
    skeleton = helper.make_graph(graph.node, graph.name, inputs, graph.output, value_info=graph.value_info)
    return helper.make_model(skeleton, opset_imports=model.opset_import, ir_version=model.ir_version,
                             functions=model.functions)


class Float64Reference:
    """Runs ``model`` (float32, as onnxruntime_session loads it) in float64; ``source``
    names what runs it. Raises Float64Unavailable when nothing can."""

    def __init__(self, model: onnx.ModelProto):
        import onnxruntime

        self._model = as_float64(upgrade(model, MIN_OPSET))
        self.names = [i.name for i in self._model.graph.input]
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
        options.log_severity_level = 3
        self._session = self._module = None
        try:
            # Without its weights first: a CNN's float64 weights take seconds to serialize
            # for a session that onnxruntime then refuses for want of a double Conv.
            for model_or_skeleton in (weightless(self._model), self._model):
                self._session = onnxruntime.InferenceSession(model_or_skeleton.SerializeToString(), options,
                                                             providers=["CPUExecutionProvider"])
            self.source = "onnxruntime in float64"
        except Exception as error:  # noqa: BLE001 - onnxruntime raises its own untyped failures
            self._use_interpreter(str(error).splitlines()[0])

    def _use_interpreter(self, why_not_onnxruntime: str):
        """Run the model in the interpreter from now on (onnxruntime lacks a double
        kernel: when it loads the model, as for Conv, or only when it runs it, as for GRU)."""
        self._session = None
        try:
            self._module = import_onnx(self._model)
        except Exception as error:  # noqa: BLE001 - whatever the importer refuses, the check goes on without
            raise Float64Unavailable(f"onnxruntime: {why_not_onnxruntime}; the interpreter: {error}") from None
        self.source = "the interpreter in float64"

    def run(self, feeds: dict) -> list:
        """The outputs in float64 for ``feeds`` (name -> value, floats made float64)."""
        values = {name: value.astype(np.float64) if value.dtype == np.float32 else value
                  for name, value in feeds.items()}
        if self._session is not None:
            known = {i.name for i in self._session.get_inputs()}
            try:
                return self._session.run(None, {n: v for n, v in values.items() if n in known})
            except Exception as error:  # noqa: BLE001 - onnxruntime raises its own untyped failures
                self._use_interpreter(str(error).splitlines()[0])
        try:
            return interpret(self._module, [values[name] for name in self.names if name in values])
        except Exception as error:  # noqa: BLE001 - a reference that fails leaves today's check
            raise Float64Unavailable(f"{self.source}: {str(error).splitlines()[0]}") from None


def _cached(model: onnx.ModelProto, feeds: dict) -> tuple:
    """(what ran it, the float64 outputs of ``model`` on ``feeds``), kept on disk beside the
    compile cache, keyed by the model, the inputs and the compiler's fingerprint (which
    covers the interpreter): a test run checks each model in several modes and targets
    on the same inputs, and a CNN's reference takes the interpreter seconds to a minute.
    Made under the key's lock: a process that needs it meanwhile waits and reads it."""
    digest = hashlib.sha256(compiler_fingerprint().encode() + model.SerializeToString())
    for name in sorted(feeds):
        value = np.ascontiguousarray(feeds[name])
        digest.update(f"{name}:{value.dtype}:{value.shape}".encode() + value.tobytes())
    path = default_root().parent / "float64" / f"{digest.hexdigest()}.npz"
    stored = _stored(path)
    if stored is not None:
        return stored
    with _locked(path.with_suffix(".lock")):
        stored = _stored(path)
        if stored is not None:
            return stored
        reference = Float64Reference(model)
        outputs = reference.run(feeds)
        try:
            with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".npz", delete=False) as scratch:
                np.savez(scratch, source=reference.source, count=len(outputs),
                         **{f"output_{i}": np.asarray(o) for i, o in enumerate(outputs)})
            os.replace(scratch.name, path)
        except OSError:
            pass  # an unwritable cache only costs the next check the time again
    return reference.source, outputs


def _stored(path) -> tuple | None:
    """(source, outputs) kept at ``path``, None if there is none (or it cannot be read)."""
    try:
        with np.load(path, allow_pickle=False) as stored:
            return str(stored["source"]), [stored[f"output_{i}"] for i in range(int(stored["count"]))]
    except (OSError, KeyError, ValueError):
        return None


@contextmanager
def _locked(path):
    """Holds the exclusive lock of ``path`` (made with its directory), or none where it
    cannot be made (an unwritable cache)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


@dataclass(frozen=True)
class JudgedReference:
    """What outputs are judged against: ``outputs`` of ``name`` with the Noise of
    onnxruntime float32 against each (float64), or onnxruntime float32's own outputs
    with no noise and ``note`` saying why there is no float64 reference."""

    name: str
    outputs: list
    noises: list
    note: str = ""


def judged_reference(model: onnx.ModelProto, feeds: dict, fp32_outputs: list, rtol: float = RTOL,
                     atol: float = ATOL) -> JudgedReference:
    """The float64 reference of ``model`` on ``feeds``, made once per check, with
    onnxruntime float32's ``fp32_outputs`` measuring the noise (relative to the
    tolerance ``atol + rtol * |want|`` that the check applies); else the float32 ones."""
    try:
        source, outputs = _cached(model, feeds)
    except Float64Unavailable as error:
        return JudgedReference("onnxruntime", list(fp32_outputs), [None] * len(fp32_outputs),
                               f"no float64 reference: {error}")
    noises = [measure_noise(fp32, float64, source, rtol, atol)
              for fp32, float64 in zip(fp32_outputs, outputs)]
    return JudgedReference("float64", list(outputs), noises)
