"""ecg-fuse over the judged models (imported, then ecg-rewrite as compile.pipeline
orders them): layers after fusion against the peers, the planner's time, and the
fused graph still computing what onnxruntime computes (reference interpreter).

Peers, per model: onnxruntime's nodes with ORT_ENABLE_ALL and IREE's dispatches.
DNNFusion's planner must need at most as many layers as the best of them.
"""

import sys
from pathlib import Path

import numpy as np
import onnxruntime
import pytest

import dnnf_mlir
from dnnf_mlir.frontend.onnx_importer import import_onnx
from dnnf_mlir.fusion import fuse_module
from dnnf_mlir.interpreter import interpret
from dnnf_mlir.rewriting import rewrite_module

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tools"))
from gen_models import DEFAULT_DIR, ensure_models  # noqa: E402

# model -> (onnxruntime ORT_ENABLE_ALL nodes, IREE dispatches)
PEERS = {
    "alexnet": (20, 16), "densenet121": (557, 185), "inception_v1": (90, 87), "inception_v2": (96, 95),
    "resnet50": (59, 58), "shufflenet": (174, 79), "squeezenet": (40, 39), "vgg19": (27, 26),
    "zfnet512": (20, 14), "albert_base": (386, 196), "bert_base": (387, 195), "distilbert": (194, 99),
    "gpt2": (352, 207), "mobilebert": (1885, 509),
}
# The planner on MobileBERT (~900 ops after rewriting, the largest graph) takes ~0.2 s.
MAX_PLANNER_SECONDS = 2.0


@pytest.fixture(scope="module")
def models():
    return ensure_models(DEFAULT_DIR)


def rewritten(path):
    module = import_onnx(path, context=dnnf_mlir.make_context())
    rewrite_module(module)
    return module


@pytest.mark.parametrize("name", sorted(PEERS))
def test_layers_against_peers(name, models):
    module = rewritten(models[name])
    layers = {}
    for mode in ("tvm", "dnnf"):
        copy = module.operation.clone()
        report = fuse_module(copy, mode)
        assert copy.verify()
        assert report["seconds"] < MAX_PLANNER_SECONDS
        layers[mode] = report["total"]["ops_after"]
    assert layers["dnnf"] <= min(PEERS[name]), layers
    assert layers["dnnf"] <= layers["tvm"], layers


def random_inputs(session):
    rng = np.random.default_rng(0)
    inputs = {}
    for arg in session.get_inputs():
        if "int" in arg.type:
            inputs[arg.name] = rng.integers(0, 2 if "mask" in arg.name else 100, size=arg.shape).astype(np.int64)
        else:
            inputs[arg.name] = rng.standard_normal(arg.shape).astype(np.float32)
    return inputs


@pytest.mark.parametrize("name,mode", [("resnet50", "dnnf"), ("bert_base", "dnnf"), ("bert_base", "tvm")])
def test_fused_model_matches_onnxruntime(name, mode, models):
    """Relative error (max|got - want| / max|want|) at most 1e-4, as dnnf-run checks."""
    module = rewritten(models[name])
    fuse_module(module, mode)
    session = onnxruntime.InferenceSession(str(models[name]), providers=["CPUExecutionProvider"])
    feeds = random_inputs(session)
    want = session.run(None, feeds)
    got = interpret(module, [feeds[arg.name] for arg in session.get_inputs()])
    for g, w in zip(got, want):
        assert np.max(np.abs(g - w)) <= 1e-4 * max(np.max(np.abs(w)), 1e-30)
