#!/usr/bin/env python3
"""Generate the 14 judged ONNX models of dnnf-mlir.

CNNs are derived from the onnx wheel's "light" backend-test models
(``onnx/backend/test/data/light/light_<src>.onnx``, IR 3, opset 9).  Those
store most weights as ``ConstantOfShape(<w>__SHAPE)`` splats of 0.02, where
the ``__SHAPE`` tensors are initializers and graph inputs, plus a few real
float tensors.  Every float parameter is replaced by a seeded random
initializer chosen by the slot it feeds (looking through Reshape/Unsqueeze):

* Conv W / Gemm B: normal, std = sqrt(gain / fan_in) (fan_in honours transB),
  gain 2 (He) when the layer input is a ReLU output, possibly pooled,
  reshaped or concatenated, else 1: He gain on non-ReLU inputs (the image,
  shufflenet's depthwise-conv output) made shufflenet's logits reach ~100;
* Conv / Gemm bias: U(-0.05, 0.05);
* BatchNormalization scale U(0.9, 1.1), bias U(-0.1, 0.1), mean U(-0.1, 0.1),
  var U(0.9, 1.1); the Caffe2 "Scale" after BN in densenet121/inception_v2
  (``Mul``/``Add`` of an Unsqueezed vector) gets the scale/bias ranges.
  The scale of a BN feeding a residual ``Sum`` (resnet50, shufflenet) is
  multiplied by RESIDUAL_BN_GAIN, otherwise every block doubles the variance
  and resnet50's logits reach ~1e3 (saturated softmax).

The ConstantOfShape nodes, ``__SHAPE`` tensors and unused initializers are
dropped, so the only graph input is the image, and IR becomes 4 (the first to
allow initializers that are not graph inputs); nodes and opset 9 are kept.

Transformers are Hugging Face ``transformers`` models built from their default
configs (albert: base sizes, see TRANSFORMERS) with seeded random init and
eager attention, in eval mode, exported by the TorchScript exporter
(``torch.onnx.export(dynamo=False)``, opset 17; traced with a padded mask) with
static shapes: inputs ``input_ids`` and ``attention_mask`` (int64 [1, 128]),
one output ``last_hidden_state``, weights stored in the file.

A model is only published after onnx.checker (full check) and an onnxruntime
run: finite, non-constant output, softmax not saturated (CNNs); output equal to
torch within 1e-4 with a padded and an unpadded mask (transformers).

Usage: python tools/gen_models.py --out DIR [--only NAME ...] [--list]
"""

import argparse
import os
import tempfile
import time
import warnings
import zlib
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
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
# name -> (transformers model class, config class, overrides of the default config);
# AlbertConfig() is albert-xxlarge (hidden 4096), so albert_base sets albert-base-v2 sizes.
TRANSFORMERS = {
    "bert_base": ("BertModel", "BertConfig", {}),
    "distilbert": ("DistilBertModel", "DistilBertConfig", {}),
    "albert_base": ("AlbertModel", "AlbertConfig",
                    {"hidden_size": 768, "num_attention_heads": 12, "intermediate_size": 3072}),
    "mobilebert": ("MobileBertModel", "MobileBertConfig", {}),
    "gpt2": ("GPT2Model", "GPT2Config", {}),
}
MODEL_NAMES = tuple(CNN_SOURCES) + tuple(TRANSFORMERS)

# The derivation is deterministic, so one cache serves every checkout; it is keyed by
# this script's content, so a changed derivation never reuses stale models.
_SCRIPT_KEY = zlib.crc32(Path(__file__).read_bytes()) & 0xFFFFFFFF
DEFAULT_DIR = Path(
    os.environ.get("DNNF_MODELS", Path.home() / ".cache" / "dnnf-mlir" / f"models-{_SCRIPT_KEY:08x}")
)
LIGHT_DIR = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
RESIDUAL_BN_GAIN = 0.5
SEQ_LEN = 128
TRANSFORMER_OPSET = 17
TRANSFORMER_ATOL = 1e-4
# Ops through which a ReLU output stays a (rearranged or pooled) ReLU output.
_RELU_PRESERVING = {"AveragePool", "Concat", "Dropout", "Flatten", "GlobalAveragePool",
                    "LRN", "MaxPool", "Reshape", "Transpose"}


def seed_of(name):
    """Fixed per-model seed."""
    return zlib.crc32(name.encode())


def input_specs(model):
    """[(name, shape, numpy dtype)] of the real inputs of a ModelProto or .onnx path."""
    if not isinstance(model, onnx.ModelProto):
        model = onnx.load(str(model), load_external_data=False)
    inits = {t.name for t in model.graph.initializer}
    return [
        (i.name,
         tuple(d.dim_value if d.HasField("dim_value") else d.dim_param
               for d in i.type.tensor_type.shape.dim),
         onnx.helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type))
        for i in model.graph.input if i.name not in inits
    ]


# --------------------------------------------------------------------------- CNNs


def _param_slot(name, shape, consumers, const):
    """(role, fan_in, consuming node) of a float parameter of a light model."""
    while True:
        (node, idx), = consumers[name]
        if node.op_type == "Reshape" and idx == 0:
            target = [shape[k] if s == 0 else int(s) for k, s in enumerate(const[node.input[1]])]
            shape = np.empty(shape, np.int8).reshape(target).shape
        elif node.op_type != "Unsqueeze":
            break
        name = node.output[0]
    op = node.op_type
    if op == "Conv" and idx == 1:
        return "weight", int(np.prod(shape[1:])), node
    if op == "Gemm" and idx == 1:
        trans_b = any(a.name == "transB" and a.i for a in node.attribute)
        return "weight", shape[1] if trans_b else shape[0], node
    if op in ("Conv", "Gemm") and idx == 2:
        return "bias", None, node
    if op == "BatchNormalization" and idx > 0:
        return ("scale", "shift", "mean", "var")[idx - 1], None, node
    if op in ("Mul", "Add"):
        return ("scale" if op == "Mul" else "shift"), None, node
    raise ValueError(f"no weight role for {name!r} feeding {op} input {idx}")


def _after_relu(x, producer):
    """Whether tensor x is a ReLU output, possibly pooled, reshaped or concatenated."""
    node = producer.get(x)
    if node is None or node.op_type not in _RELU_PRESERVING | {"Relu"}:
        return False
    sources = node.input if node.op_type == "Concat" else node.input[:1]
    return node.op_type == "Relu" or all(_after_relu(s, producer) for s in sources)


def derive_cnn(name):
    """The seeded random-weight variant of a light CNN (see the module docstring)."""
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

    params = {}
    for x in (x for node in graph.node for x in node.input):
        if x in params:
            continue
        if x in splats:
            shape = tuple(int(d) for d in const[splats[x].input[0]])
        elif x in const and const[x].dtype == np.float32:
            shape = const[x].shape
        else:
            continue
        role, fan_in, node = _param_slot(x, shape, consumers, const)
        if role == "weight":
            gain = 2.0 if _after_relu(node.input[0], producer) else 1.0
            value = rng.standard_normal(shape, np.float32) * np.float32(np.sqrt(gain / fan_in))
        else:
            low, high = {"bias": (-0.05, 0.05), "scale": (0.9, 1.1), "shift": (-0.1, 0.1),
                         "mean": (-0.1, 0.1), "var": (0.9, 1.1)}[role]
            value = rng.uniform(low, high, shape).astype(np.float32)
            if role == "scale" and node.op_type == "BatchNormalization" and any(
                    c.op_type == "Sum" for c, _ in consumers[node.output[0]]):
                value *= np.float32(RESIDUAL_BN_GAIN)
        params[x] = value

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


def check_cnn(name, model, path):
    """Run ``path`` (holding ``model``) in onnxruntime on a seeded random image: the
    output must be finite, not constant and, if a softmax, not saturated; return a
    summary."""
    rng = np.random.default_rng(seed_of(name))
    feeds = {n: rng.standard_normal(s).astype(t) for n, s, t in input_specs(model)}
    (out,) = _session(path).run(None, feeds)
    softmax = any(n.op_type == "Softmax" and n.output[0] == model.graph.output[0].name
                  for n in model.graph.node)
    if not (np.isfinite(out).all() and out.std() > 1e-3 * np.abs(out).mean()
            and not (softmax and out.max() > 0.99)):
        raise RuntimeError(f"{name}: degenerate output (std {out.std():.3g}, max {out.max():.3g})")
    return f"ort ok: max {out.max():.3g}, std {out.std():.3g}"


# -------------------------------------------------------------------- transformers


def export_transformer(name, path):
    """Export a randomly initialised HF model to ``path``, check it against torch in
    onnxruntime; return (parameter count, summary)."""
    import torch
    import transformers

    model_cls, config_cls, overrides = TRANSFORMERS[name]
    torch.manual_seed(seed_of(name))
    config = getattr(transformers, config_cls)(use_cache=False, attn_implementation="eager",
                                               **overrides)
    model = getattr(transformers, model_cls)(config).eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask):
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              return_dict=False)[0]

    wrapper = LastHiddenState().eval()
    gen = torch.Generator().manual_seed(seed_of(name))
    padded = torch.ones(1, SEQ_LEN, dtype=torch.int64)
    padded[:, SEQ_LEN * 7 // 8:] = 0
    # Traced with padding so no "mask is all ones" shortcut is baked into the graph.
    samples = [(torch.randint(0, config.vocab_size, (1, SEQ_LEN), generator=gen), mask)
               for mask in (padded, torch.ones_like(padded))]
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TorchScript-exporter deprecation, tracer warnings
        torch.onnx.export(wrapper, samples[0], str(path), dynamo=False,
                          opset_version=TRANSFORMER_OPSET,
                          input_names=["input_ids", "attention_mask"],
                          output_names=["last_hidden_state"])
        expected = [wrapper(*s).numpy() for s in samples]
    session = _session(str(path))
    err = max(float(np.abs(want - session.run(None, {"input_ids": ids.numpy(),
                                                     "attention_mask": mask.numpy()})[0]).max())
              for (ids, mask), want in zip(samples, expected))
    if not err <= TRANSFORMER_ATOL:
        raise RuntimeError(f"{name}: onnxruntime differs from torch by {err:.3g}")
    return sum(p.numel() for p in model.parameters()), f"ort ok: max |ort - torch| {err:.2g}"


# ------------------------------------------------------------------------- driver


def _session(model):
    return onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])


def _describe(specs):
    return " ".join(f"{n}:{np.dtype(t).name}{list(s)}" for n, s, t in specs)


def generate(name, path):
    """Create and check model ``name``, then atomically write it to ``path``;
    return (parameter count, input_specs, check summary)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".onnx.tmp", dir=path.parent)
    os.close(fd)
    try:
        if name in CNN_SOURCES:
            model = derive_cnn(name)
            onnx.save(model, tmp)
            onnx.checker.check_model(tmp, full_check=True)
            summary = check_cnn(name, model, tmp)
            params = sum(int(np.prod(t.dims)) for t in model.graph.initializer
                         if t.data_type == onnx.TensorProto.FLOAT)
            inputs = input_specs(model)
        else:
            params, summary = export_transformer(name, tmp)
            onnx.checker.check_model(tmp, full_check=True)
            inputs = input_specs(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return params, inputs, summary


def ensure_models(out_dir, names=None):
    """Generate the missing models among ``names`` (default: all); {name: path}."""
    names = MODEL_NAMES if names is None else tuple(names)
    unknown = set(names) - set(MODEL_NAMES)
    if unknown:
        raise ValueError(f"unknown models {sorted(unknown)}; known: {', '.join(MODEL_NAMES)}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name in names:
        paths[name] = path = out_dir / f"{name}.onnx"
        if path.exists():
            print(f"{name:<13} exists: {path}", flush=True)
            continue
        start = time.perf_counter()
        params, inputs, summary = generate(name, path)
        print(f"{name:<13} {params:>12,} params {time.perf_counter() - start:6.1f} s  "
              f"{_describe(inputs)}  ({summary})", flush=True)
    return paths


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_DIR,
                        help="output directory (default: $DNNF_MODELS or ~/.cache/dnnf-mlir/models-KEY)")
    parser.add_argument("--only", nargs="+", choices=MODEL_NAMES, metavar="NAME",
                        help="models to generate (default: all)")
    parser.add_argument("--list", action="store_true",
                        help="list model names (with the inputs of those present in --out)")
    args = parser.parse_args(argv)
    names = args.only or MODEL_NAMES
    if args.list:
        for name in names:
            path = args.out / f"{name}.onnx"
            print(f"{name:<13} {_describe(input_specs(path)) if path.exists() else ''}".rstrip())
    else:
        start = time.perf_counter()
        ensure_models(args.out, names)
        print(f"total {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
