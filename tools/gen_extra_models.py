#!/usr/bin/env python3
"""Generate models outside the judged 14, to check the compiler on structures it was
not tuned on: a Llama decoder (RMSNorm, SwiGLU, rotary embeddings, grouped-query
attention, causal and padding mask; logits), a T5 encoder (relative position
buckets, RMS norm without bias, ReLU FFN), a BERT encoder on a 512-token sequence, a Swin vision transformer (shifted
windows, patch merging), MobileNetV2 (depthwise convolutions, ReLU6 as Clip,
TF-style padding), EfficientNet-B0 (SiLU, squeeze-and-excitation) and ConvNeXt
(7x7 depthwise convolutions, LayerNorm over channels, GELU); two recurrent nets
built from torch.nn (``Recurrent``): a bidirectional LSTM tagger and a two-layer GRU;
three that up-sample, torch.nn modules in gen_upsampling_models: a UNet
(ConvTranspose), a DeepLab-style segmenter (bilinear Resize to a non-integer scale)
and a YOLOv8-style detector (nearest Resize in its FPN/PAN neck); and two convolution
families, torch.nn modules in gen_conv_models: a speech encoder of 1-D convolutions
and a ResNeXt (grouped 3x3 convolutions, 32 groups).

Each is a Hugging Face ``transformers`` model built from a small config (so that
generating and compiling stay fast; the layer structure is the real one) with
seeded random init and eager attention, in eval mode, exported as
tools/gen_models.py exports its transformers (TorchScript exporter, opset 17,
static shapes, weights in the file). Text models take ``input_ids`` and
``attention_mask`` (int64 [1, seq], seq 50 and 77: not multiples of a vector
width; 512 for the long BERT), traced with a padded mask; image models take ``pixel_values`` (float32
[1, 3, side, side]; the up-sampling models and the ResNeXt [1, 3, height, width]); the speech
encoder takes ``input_features`` (float32 [1, 80 mels, 500 frames]); the output is the model's first (logits, last hidden state).

Two more are quantized by onnxruntime's own tool (gen_quantized_models.py): a
ResNet-like CNN in QDQ format (quantize_static) and a BERT-like encoder quantized
dynamically (quantize_dynamic: DynamicQuantizeLinear + MatMulInteger).

The classifiers (MobileNetV2, EfficientNet) output softmax(logits). Their default
init (normal, std 0.02, BatchNorm scales included) makes activations vanish and
the softmax uniform, so their convolutions get He init, their BatchNorms random
scale and shift as in gen_models, and statistics measured on random images, which
keeps every layer near unit variance and the softmax informative; the torch.nn
models (up-sampling, convolution families) are initialised the same way.

A model is only published after onnx.checker (full check) and onnxruntime equal to
torch within gen_models.TRANSFORMER_ATOL times the output's largest magnitude (at
least 1) on a padded and an unpadded mask (text), two sequences or two images;
image models also pass gen_models.check_cnn (finite, not constant, softmax not
saturated). Models land in ``~/.cache/dnnf-mlir/extra-models-<key>``
(or ``$DNNF_EXTRA_MODELS``), beside the judged models' cache, which they leave alone.

Usage: python tools/gen_extra_models.py [--out DIR] [--only NAME ...]
"""

import argparse
import os
import tempfile
import time
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
import onnxruntime

from gen_conv_models import CONV_FAMILIES
from gen_models import TRANSFORMER_ATOL, TRANSFORMER_OPSET, check_cnn, seed_of
from gen_quantized_models import QUANTIZED
from gen_upsampling_models import UPSAMPLING


@dataclass(frozen=True)
class Extra:
    """A transformers model class, its config class and config, and its input."""

    model_cls: str
    config_cls: str
    config: dict = field(default_factory=dict)
    image: bool = False  # pixel_values [1, 3, size, size], else input_ids/attention_mask [1, size]
    size: int = 64
    classifier: bool = False  # BatchNorms calibrated, output softmax(logits)


EXTRA = {
    "llama": Extra("LlamaForCausalLM", "LlamaConfig", dict(
        vocab_size=1000, hidden_size=256, intermediate_size=688, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128), size=50),
    "t5_encoder": Extra("T5EncoderModel", "T5Config", dict(
        vocab_size=1000, d_model=256, d_kv=64, d_ff=1024, num_layers=4, num_heads=4), size=77),
    # BERT-base layers on a long sequence: the scores of a layer's 12 heads (12 MiB) outgrow the L2 caches.
    "bert_long": Extra("BertModel", "BertConfig", dict(
        vocab_size=1000, num_hidden_layers=2, max_position_embeddings=512), size=512),
    "swin": Extra("SwinModel", "SwinConfig", dict(
        image_size=64, patch_size=4, embed_dim=48, depths=[2, 2], num_heads=[3, 6], window_size=4),
        image=True),
    "mobilenet_v2": Extra("MobileNetV2ForImageClassification", "MobileNetV2Config", dict(
        image_size=96, num_labels=100), image=True, size=96, classifier=True),
    "efficientnet": Extra("EfficientNetForImageClassification", "EfficientNetConfig", dict(
        image_size=96, width_coefficient=1.0, depth_coefficient=1.0, hidden_dim=1280,
        num_labels=100), image=True, size=96, classifier=True),
    "convnext": Extra("ConvNextModel", "ConvNextConfig", dict(
        image_size=64, depths=[1, 1, 2, 1], hidden_sizes=[32, 64, 128, 256],
        layer_scale_init_value=1.0), image=True),  # the default 1e-6 mutes every residual branch
}


@dataclass(frozen=True)
class Recurrent:
    """A torch.nn recurrent net over a float sequence ``sequence`` [seq, batch, features] (no
    embedding), a Linear on every step's output: ``cell`` is "LSTM" or "GRU"."""

    cell: str
    bidirectional: bool = False
    layers: int = 1
    seq: int = 16
    batch: int = 2
    features: int = 32
    hidden: int = 64
    classes: int = 10


EXTRA |= {
    "bilstm_tagger": Recurrent("LSTM", bidirectional=True),
    "gru_2layer": Recurrent("GRU", layers=2),
}
# The torch.nn models of gen_upsampling_models and gen_conv_models: name -> (builder, input shape).
TORCH_MODULES = UPSAMPLING | CONV_FAMILIES
EXTRA_NAMES = tuple(EXTRA) + tuple(TORCH_MODULES) + tuple(QUANTIZED)

# Keyed by this script and gen_models (whose checks and seeds it uses), as gen_models'
# cache is, so that a changed derivation never reuses stale models.
_KEY = zlib.crc32(b"".join(Path(__file__).with_name(f).read_bytes()
                           for f in ("gen_extra_models.py", "gen_models.py", "gen_quantized_models.py",
                                     "gen_upsampling_models.py", "gen_conv_models.py"))) & 0xFFFFFFFF
EXTRA_DIR = Path(os.environ.get(
    "DNNF_EXTRA_MODELS", Path.home() / ".cache" / "dnnf-mlir" / f"extra-models-{_KEY:08x}"))


def _calibrate_batchnorm(model, sample, rng):
    """He-initialise convolutions and give each BatchNorm random scale and shift and
    the statistics of its input on ``sample`` (see the module docstring)."""
    import torch

    def calibrate(norm, inputs):
        per_channel = (0, *range(2, inputs[0].dim()))
        norm.running_mean.copy_(inputs[0].mean(per_channel))
        norm.running_var.copy_(inputs[0].var(per_channel))

    hooks = []
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.ConvTranspose2d)):
                torch.nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            elif isinstance(m, (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d)):
                m.weight.copy_(torch.from_numpy(rng.uniform(0.9, 1.1, m.num_features).astype(np.float32)))
                m.bias.copy_(torch.from_numpy(rng.uniform(-0.1, 0.1, m.num_features).astype(np.float32)))
                hooks.append(m.register_forward_pre_hook(calibrate))
        model(sample)  # in eval mode, in order: each BatchNorm sees calibrated predecessors
    for hook in hooks:
        hook.remove()


def _recurrent_module(spec: Recurrent):
    """The torch module of ``spec`` (its recurrent layer's default init: uniform in +-1/sqrt(hidden))."""
    import torch

    class Tagger(torch.nn.Module):
        def __init__(self):
            super().__init__()
            layer = getattr(torch.nn, spec.cell)
            self.rnn = layer(spec.features, spec.hidden, num_layers=spec.layers, bidirectional=spec.bidirectional)
            self.head = torch.nn.Linear(spec.hidden * (2 if spec.bidirectional else 1), spec.classes)

        def forward(self, sequence):
            return self.head(self.rnn(sequence)[0])

    return Tagger().eval()


def _export_checked(name, model, input_names, samples, path):
    """Export ``model`` (in eval mode) traced on ``samples[0]`` to ``path`` and check
    onnxruntime against torch on every sample (tuples of tensors named ``input_names``);
    return a summary."""
    import torch

    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TorchScript-exporter deprecation, tracer warnings
        torch.onnx.export(model, samples[0], str(path), dynamo=False, opset_version=TRANSFORMER_OPSET,
                          input_names=input_names, output_names=["output"])
        expected = [model(*s).numpy() for s in samples]
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    err = max(float(np.abs(want - session.run(None, {n: x.numpy() for n, x in zip(input_names, s)})[0]).max())
              for s, want in zip(samples, expected))
    # fp32 rounding grows with the values: a detector's raw box logits reach 20.
    scale = max(1.0, max(float(np.abs(want).max()) for want in expected))
    if not err <= TRANSFORMER_ATOL * scale:
        raise RuntimeError(f"{name}: onnxruntime differs from torch by {err:.3g} on values up to {scale:.3g}")
    return f"ort ok: max |ort - torch| {err:.2g} on values up to {scale:.3g}"


def _export_recurrent(name, path):
    """``export_extra`` for a ``Recurrent`` spec."""
    import torch

    spec = EXTRA[name]
    torch.manual_seed(seed_of(name))
    gen = torch.Generator().manual_seed(seed_of(name))
    model = _recurrent_module(spec)
    samples = [(torch.randn(spec.seq, spec.batch, spec.features, generator=gen),) for _ in range(2)]
    return sum(p.numel() for p in model.parameters()), _export_checked(name, model, ["sequence"], samples, path)


def _export_torch_module(name, path):
    """``export_extra`` for a model of gen_upsampling_models or gen_conv_models:
    BatchNorms calibrated as the classifiers' are, then checked as the image models are."""
    import torch

    build, shape = TORCH_MODULES[name]
    torch.manual_seed(seed_of(name))
    gen = torch.Generator().manual_seed(seed_of(name))
    model = build().eval()
    _calibrate_batchnorm(model, torch.randn(8, *shape[1:], generator=gen), np.random.default_rng(seed_of(name)))
    samples = [(torch.randn(*shape, generator=gen),) for _ in range(2)]
    input_name = "pixel_values" if len(shape) == 4 else "input_features"
    summary = _export_checked(name, model, [input_name], samples, path)
    return (sum(p.numel() for p in model.parameters()),
            f"{summary}; {check_cnn(name, onnx.load(str(path)), str(path))}")


def export_extra(name, path):
    """Export model ``name`` to ``path`` and check it against torch in onnxruntime;
    return (parameter count, summary)."""
    if name in QUANTIZED:
        return QUANTIZED[name](name, path)
    if name in TORCH_MODULES:
        return _export_torch_module(name, path)
    import torch
    import transformers

    spec = EXTRA[name]
    if isinstance(spec, Recurrent):
        return _export_recurrent(name, path)
    torch.manual_seed(seed_of(name))
    gen = torch.Generator().manual_seed(seed_of(name))
    config = getattr(transformers, spec.config_cls)(use_cache=False, attn_implementation="eager",
                                                    **spec.config)
    model = getattr(transformers, spec.model_cls)(config).eval()
    if spec.image:
        input_names = ["pixel_values"]
        samples = [(torch.randn(1, 3, spec.size, spec.size, generator=gen),) for _ in range(2)]
        if spec.classifier:
            _calibrate_batchnorm(model, torch.randn(8, 3, spec.size, spec.size, generator=gen),
                                     np.random.default_rng(seed_of(name)))
    else:
        input_names = ["input_ids", "attention_mask"]
        padded = torch.ones(1, spec.size, dtype=torch.int64)
        padded[:, spec.size * 7 // 8:] = 0
        # Traced with padding so no "mask is all ones" shortcut is baked into the graph.
        samples = [(torch.randint(0, config.vocab_size, (1, spec.size), generator=gen), mask)
                   for mask in (padded, torch.ones_like(padded))]

    class FirstOutput(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, *inputs):
            out = self.model(**dict(zip(input_names, inputs)), return_dict=False)[0]
            return out.softmax(-1) if spec.classifier else out

    summary = _export_checked(name, FirstOutput().eval(), input_names, samples, path)
    if spec.image:
        summary += f"; {check_cnn(name, onnx.load(str(path)), str(path))}"
    return sum(p.numel() for p in model.parameters()), summary


def _publish(name, path):
    """Export, check and then move model ``name`` to ``path``, so that a model in the
    cache is always a checked one."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=path.parent) as staging:
        staged = Path(staging) / path.name
        params, summary = export_extra(name, staged)
        onnx.checker.check_model(staged, full_check=True)
        os.replace(staged, path)
    print(f"{name:<13} {params:>12,} params {time.perf_counter() - start:6.1f} s  ({summary})", flush=True)


def ensure_extra_models(out_dir=EXTRA_DIR, names=EXTRA_NAMES):
    """Generate the missing models among ``names`` into ``out_dir``; {name: path}."""
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    paths = {name: Path(out_dir) / f"{name}.onnx" for name in names}
    for name, path in paths.items():
        if not path.exists():
            _publish(name, path)
    return paths


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=EXTRA_DIR,
                        help="output directory (default: $DNNF_EXTRA_MODELS or "
                             "~/.cache/dnnf-mlir/extra-models-KEY)")
    parser.add_argument("--only", nargs="+", choices=EXTRA_NAMES, default=EXTRA_NAMES,
                        metavar="NAME", help=f"models to generate (default: all of {', '.join(EXTRA_NAMES)})")
    args = parser.parse_args(argv)
    for name, path in ensure_extra_models(args.out, args.only).items():
        print(f"{name:<13} {path}")


if __name__ == "__main__":
    main()
