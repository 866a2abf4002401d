"""The quantized extra models, as onnxruntime's own quantization tool writes them (called
by gen_extra_models, which caches and publishes them):

- ``resnet_qdq``: a small ResNet-like CNN (a 3x3 stem, three residual blocks of which two
  down-sample through a strided 3x3 and a 1x1 shortcut, global average pooling, a fully
  connected layer; BatchNorms folded by the exporter), random seeded weights, exported
  with torch at opset 17 and quantized by ``quantize_static`` in QDQ format (uint8
  activations, int8 weights per output channel, int32 biases) with a seeded calibration
  set of 8 images;
- ``bert_dynamic_quant``: a BERT-like encoder (2 layers, hidden 128, 2 heads,
  intermediate 512, sequence 64), random seeded weights, exported as gen_extra_models
  exports its transformers and quantized by ``quantize_dynamic`` (int8 weights): each
  MatMul becomes DynamicQuantizeLinear + MatMulInteger + the float rescaling.

Both are checked in onnxruntime against the float model they came from (their
quantization error must be that of 8 bits, not of a broken graph).
"""

import warnings

import numpy as np
import onnx
import onnxruntime

from gen_models import TRANSFORMER_OPSET, seed_of

CNN_SIDE = 32
BERT_CONFIG = dict(vocab_size=1000, hidden_size=128, num_hidden_layers=2, num_attention_heads=2,
                   intermediate_size=512, max_position_embeddings=128)
BERT_SEQUENCE = 64
# Quantization error allowed against the float model, relative to the output's largest
# magnitude: 8-bit activations through seven convolutions or two encoder layers.
QUANTIZATION_ERROR = 0.1


def _resnet_like():
    import torch
    from torch import nn

    def conv_bn(c, m, k, stride):
        return nn.Sequential(nn.Conv2d(c, m, k, stride, k // 2, bias=False), nn.BatchNorm2d(m))

    class Block(nn.Module):
        def __init__(self, c, m, stride):
            super().__init__()
            self.body = nn.Sequential(conv_bn(c, m, 3, stride), nn.ReLU(), conv_bn(m, m, 3, 1))
            self.shortcut = conv_bn(c, m, 1, stride) if stride != 1 or c != m else nn.Identity()

        def forward(self, x):
            return torch.relu(self.body(x) + self.shortcut(x))

    model = nn.Sequential(
        conv_bn(3, 16, 3, 1), nn.ReLU(), Block(16, 16, 1), Block(16, 32, 2), Block(32, 64, 2),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))
    rng = np.random.default_rng(seed_of("resnet_qdq"))
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.BatchNorm2d):
                n = module.num_features
                module.weight.copy_(torch.from_numpy(rng.uniform(0.5, 1.5, n).astype(np.float32)))
                module.bias.copy_(torch.from_numpy(rng.uniform(-0.2, 0.2, n).astype(np.float32)))
                module.running_mean.copy_(torch.from_numpy(rng.uniform(-0.1, 0.1, n).astype(np.float32)))
                module.running_var.copy_(torch.from_numpy(rng.uniform(0.5, 1.5, n).astype(np.float32)))
    return model.eval()


def _first_output(model):
    """``model`` (a transformers model, held as a submodule: its weights stay initializers,
    which quantize_dynamic quantizes) returning its first output only, for the exporter."""
    import torch

    class FirstOutput(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, *inputs):
            return self.model(*inputs, return_dict=False)[0]

    return FirstOutput().eval()


class _Calibration:
    """onnxruntime's CalibrationDataReader protocol over seeded random inputs."""

    def __init__(self, batches):
        self.batches = iter(batches)

    def get_next(self):
        return next(self.batches, None)


def _float_vs_quantized(float_path, quantized_path, feeds) -> float:
    """max |quantized - float| / max |float| over ``feeds``, both in onnxruntime."""
    def run(path, feed):
        session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        return session.run(None, feed)[0]

    worst = 0.0
    for feed in feeds:
        want = run(float_path, feed)
        worst = max(worst, float(np.abs(run(quantized_path, feed) - want).max() / np.abs(want).max()))
    return worst


def _checked(name, float_path, path, feeds) -> str:
    error = _float_vs_quantized(float_path, path, feeds)
    if not error <= QUANTIZATION_ERROR:
        raise RuntimeError(f"{name}: the quantized model is off the float one by {error:.3g} of its range")
    return f"quantized vs float in ort: {error:.2g} of the range"


def export_resnet_qdq(name, path):
    """The QDQ ResNet-like CNN at ``path``; (parameter count, summary)."""
    import torch
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType, quantize_static

    torch.manual_seed(seed_of(name))
    model = _resnet_like()
    float_path = path.with_suffix(".float.onnx")
    sample = torch.randn(1, 3, CNN_SIDE, CNN_SIDE, generator=torch.Generator().manual_seed(seed_of(name)))
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (sample,), str(float_path), dynamo=False, opset_version=17,
                          input_names=["pixel_values"], output_names=["output"])
    rng = np.random.default_rng(seed_of(name))
    images = [{"pixel_values": rng.standard_normal((1, 3, CNN_SIDE, CNN_SIDE)).astype(np.float32)}
              for _ in range(10)]
    quantize_static(str(float_path), str(path), _Calibration(images[:8]), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, per_channel=True,
                    calibrate_method=CalibrationMethod.MinMax)
    summary = _checked(name, float_path, path, images[8:])
    float_path.unlink()
    return sum(p.numel() for p in model.parameters()), summary


def export_bert_dynamic_quant(name, path):
    """The dynamically quantized BERT-like encoder at ``path``; (parameter count, summary)."""
    import torch
    import transformers
    from onnxruntime.quantization import QuantType, quantize_dynamic

    torch.manual_seed(seed_of(name))
    config = transformers.BertConfig(use_cache=False, attn_implementation="eager", **BERT_CONFIG)
    model = transformers.BertModel(config).eval()

    gen = torch.Generator().manual_seed(seed_of(name))
    ids = torch.randint(0, config.vocab_size, (1, BERT_SEQUENCE), generator=gen)
    mask = torch.ones(1, BERT_SEQUENCE, dtype=torch.int64)
    mask[:, BERT_SEQUENCE * 7 // 8:] = 0  # traced with padding: no all-ones shortcut baked in
    float_path = path.with_suffix(".float.onnx")
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(_first_output(model), (ids, mask), str(float_path), dynamo=False,
                          opset_version=TRANSFORMER_OPSET, input_names=["input_ids", "attention_mask"],
                          output_names=["output"])
    quantize_dynamic(str(float_path), str(path), weight_type=QuantType.QInt8)
    feeds = [{"input_ids": ids.numpy(), "attention_mask": m} for m in (mask.numpy(), np.ones_like(mask.numpy()))]
    summary = _checked(name, float_path, path, feeds)
    float_path.unlink()
    return sum(p.numel() for p in model.parameters()), summary


# name -> export(name, path): the models gen_extra_models builds with these functions.
QUANTIZED = {"resnet_qdq": export_resnet_qdq, "bert_dynamic_quant": export_bert_dynamic_quant}
