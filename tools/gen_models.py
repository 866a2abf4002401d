#!/usr/bin/env python3
"""Generate the 14 judged ONNX models of dnnf-mlir.

CNNs (opset 9) are derived from the onnx wheel's "light" backend-test models
(``onnx/backend/test/data/light/light_<src>.onnx``).  Those store every weight
as ``ConstantOfShape(<w>__SHAPE)`` splatting 0.02, with ``__SHAPE`` tensors
that are both initializers and graph inputs, plus a few real float tensors.
Here every float parameter is replaced by a seeded random initializer chosen by
the role of the slot it feeds (looking through Reshape/Unsqueeze):

* Conv W / Gemm B: He normal, std = sqrt(2 / fan_in) (fan_in honours transB);
* Conv / Gemm bias: U(-0.05, 0.05);
* BatchNormalization scale U(0.9, 1.1), bias U(-0.1, 0.1), mean U(-0.1, 0.1),
  var U(0.9, 1.1); the Caffe2 "Scale" after BN in densenet121/inception_v2
  (``Mul``/``Add`` of an Unsqueezed vector) gets the same scale/bias ranges.

The ConstantOfShape nodes, ``__SHAPE`` tensors and unused initializers are
dropped, so the only graph input is the image; IR version becomes 4 (the first
allowing initializers that are not inputs); nodes and opset 9 are unchanged.
Plain He gain keeps activations at unit scale layer by layer, except that each
residual ``Sum`` adds branch variance; in resnet50 and shufflenet the BN scale
closing a residual branch is therefore multiplied by RESIDUAL_BN_GAIN.

Transformers are Hugging Face ``transformers`` models built from their default
configs with seeded random init, eager attention, eval mode, exported by the
TorchScript exporter (``torch.onnx.export(dynamo=False)``, opset 17) with
static shapes: ``input_ids`` and ``attention_mask``, int64 [1, SEQ_LEN], and a
single output ``last_hidden_state``; weights are stored inside the file.

Every model is checked before it is published: onnx.checker plus an
onnxruntime run with finite, non-degenerate outputs (CNNs) or outputs matching
torch within 1e-4 on padded and unpadded masks (transformers).

Usage: python tools/gen_models.py --out DIR [--only NAME ...] [--list]
"""

import argparse
import os
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

CNN_SOURCES = {
    "alexnet": "bvlc_alexnet",
    "densenet121": "densenet121",
    "inception_v1": "inception_v1",
    "inception_v2": "inception_v2",
    "resnet50": "resnet50",
    "shufflenet": "shufflenet",
    "squeezenet": "squeezenet",
    "vgg19": "vgg19",
    "zfnet512": "zfnet512",
}
# name -> (transformers model class, config class)
TRANSFORMERS = {
    "bert_base": ("BertModel", "BertConfig"),
    "distilbert": ("DistilBertModel", "DistilBertConfig"),
    "albert_base": ("AlbertModel", "AlbertConfig"),
    "mobilebert": ("MobileBertModel", "MobileBertConfig"),
    "gpt2": ("GPT2Model", "GPT2Config"),
}
MODEL_NAMES = tuple(CNN_SOURCES) + tuple(TRANSFORMERS)

SEQ_LEN = 128
TRANSFORMER_OPSET = 17
TRANSFORMER_ATOL = 1e-4
RESIDUAL_BN_GAIN = 0.5
LIGHT_DIR = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def seed_of(name):
    """Fixed per-model seed."""
    return zlib.crc32(name.encode())


def input_specs(model):
    """[(name, shape, numpy dtype)] of a model's real (non-initializer) inputs."""
    if not isinstance(model, onnx.ModelProto):
        model = onnx.load(str(model), load_external_data=False)
    inits = {t.name for t in model.graph.initializer}
    return [
        (
            i.name,
            tuple(d.dim_value if d.HasField("dim_value") else d.dim_param
                  for d in i.type.tensor_type.shape.dim),
            onnx.helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type),
        )
        for i in model.graph.input
        if i.name not in inits
    ]


def param_count(model):
    return sum(int(np.prod(t.dims)) for t in model.graph.initializer)


# --------------------------------------------------------------------------- CNNs


def _residual_closers(graph, producer):
    """Outputs of BatchNormalizations that feed a Sum directly (end of a residual branch)."""
    return {
        x
        for node in graph.node
        if node.op_type == "Sum"
        for x in node.input
        if x in producer and producer[x].op_type == "BatchNormalization"
    }


def _param_role(name, shape, consumers, const):
    """(role, fan_in, consumer node output) of a float parameter tensor.

    Follows single-consumer Reshape/Unsqueeze chains to the slot that uses it.
    """
    while True:
        (node, idx), = consumers[name]
        if node.op_type == "Reshape" and idx == 0:
            target = [shape[k] if s == 0 else int(s) for k, s in enumerate(const[node.input[1]])]
            shape = np.empty(shape, np.int8).reshape(target).shape
            name = node.output[0]
        elif node.op_type == "Unsqueeze" and idx == 0:
            name = node.output[0]
        else:
            break
    op = node.op_type
    if op == "Conv" and idx == 1:
        return "weight", int(np.prod(shape[1:])), node.output[0]
    if op == "Gemm" and idx == 1:
        trans_b = any(a.name == "transB" and a.i for a in node.attribute)
        return "weight", shape[1] if trans_b else shape[0], node.output[0]
    if op in ("Conv", "Gemm") and idx == 2:
        return "bias", None, node.output[0]
    if op == "BatchNormalization" and idx in (1, 2, 3, 4):
        return ("scale", "shift", "mean", "var")[idx - 1], None, node.output[0]
    if op == "Mul":
        return "scale", None, node.output[0]
    if op == "Add":
        return "shift", None, node.output[0]
    raise ValueError(f"no weight role for {name!r} feeding {op} input {idx}")


def _random_param(rng, role, shape, fan_in):
    if role == "weight":
        return rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)
    low, high = {
        "bias": (-0.05, 0.05),
        "scale": (0.9, 1.1),
        "shift": (-0.1, 0.1),
        "mean": (-0.1, 0.1),
        "var": (0.9, 1.1),
    }[role]
    return rng.uniform(low, high, shape)


def derive_cnn(name):
    """The seeded-random-weight variant of a light CNN (see module docstring)."""
    model = onnx.load(str(LIGHT_DIR / f"light_{CNN_SOURCES[name]}.onnx"))
    graph = model.graph
    rng = np.random.default_rng(seed_of(name))
    const = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    splats = {n.output[0]: n for n in graph.node if n.op_type == "ConstantOfShape"}
    consumers, producer = {}, {}
    for node in graph.node:
        for idx, x in enumerate(node.input):
            consumers.setdefault(x, []).append((node, idx))
        producer.update((y, node) for y in node.output)
    closers = _residual_closers(graph, producer)

    params = {}
    for node in graph.node:
        for x in node.input:
            if x in params:
                continue
            if x in splats:
                shape = tuple(int(d) for d in const[splats[x].input[0]])
            elif x in const and const[x].dtype == np.float32:
                shape = const[x].shape
            else:
                continue
            role, fan_in, user = _param_role(x, shape, consumers, const)
            value = _random_param(rng, role, shape, fan_in)
            if role == "scale" and user in closers:
                value *= RESIDUAL_BN_GAIN
            params[x] = value.astype(np.float32)

    nodes = [n for n in graph.node if n.op_type != "ConstantOfShape"]
    used = {x for n in nodes for x in n.input}
    kept = [t for t in graph.initializer if t.name in used and t.name not in params]
    inputs = [i for i in graph.input if i.name not in const]
    del graph.node[:], graph.initializer[:], graph.input[:]
    graph.node.extend(nodes)
    graph.input.extend(inputs)
    graph.initializer.extend(kept)
    graph.initializer.extend(numpy_helper.from_array(v, k) for k, v in params.items())
    model.ir_version = max(model.ir_version, 4)
    return model
