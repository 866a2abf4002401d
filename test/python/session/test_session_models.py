"""InferenceSession on real models: three judged models (SqueezeNet, DistilBERT, GPT-2)
against onnxruntime, run from four threads at once, and a BERT exported with a
symbolic batch and sequence length, run at three lengths.

Fusion decides conservatively (the session's default, profile=False), so the kernels
do not depend on the machine's load. Every session compiles into a fresh cache.

Numerics: element by element against onnxruntime with graph optimizations off (the
reference semantics), with ``dnnf-run --check``'s tolerance (``dnnf_mlir.checking``:
the compiled code sums in another order). The inputs are seeded token ids with a
padded attention mask, and standard-normal images, whose outputs are spread out
(the comparison reports a degenerate reference).
"""

import sys
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import onnxruntime
import pytest

from dnnf_mlir import InferenceSession
from dnnf_mlir.ecg import TensorSpec
from dnnf_mlir.checking import compare, make_inputs
from dnnf_mlir.tools.common import onnxruntime_session

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tools"))
from gen_models import TRANSFORMER_OPSET  # noqa: E402

JUDGED = ("squeezenet", "distilbert", "gpt2")


@pytest.fixture(scope="module")
def sessions(models, tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    made = {}

    def get(name):
        if name not in made:
            made[name] = InferenceSession(models[name], cache_dir=cache)
        return made[name]

    return get


def feeds_for(args, seed=0, shapes=None):
    """Seeded inputs for ``args`` (``NodeArg``); a padded mask, so attention is not uniform."""
    shapes = shapes or {a.name: a.shape for a in args}
    arrays = make_inputs([a.name for a in args], [TensorSpec(shapes[a.name], a.dtype) for a in args], seed=seed)
    feeds = dict(zip([a.name for a in args], arrays))
    if "attention_mask" in feeds:
        feeds["attention_mask"][..., -max(1, feeds["attention_mask"].shape[-1] // 8):] = 0
    return feeds


def assert_close(got, want):
    """dnnf-run --check's element-wise tolerance (why: dnnf_mlir.checking)."""
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        result = compare(g, w)
        assert result.ok, str(result)


@pytest.mark.parametrize("name", JUDGED)
def test_judged_model_matches_onnxruntime(name, models, sessions):
    session = sessions(name)
    reference = onnxruntime_session(models[name])
    assert [(a.name, a.shape, a.type) for a in session.get_inputs()] == [
        (a.name, a.shape, a.type) for a in reference.get_inputs()]
    assert [(a.name, a.shape, a.type) for a in session.get_outputs()] == [
        (a.name, a.shape, a.type) for a in reference.get_outputs()]
    feeds = feeds_for(session.get_inputs())
    assert_close(session.run(None, feeds), reference.run(None, feeds))


@pytest.mark.parametrize("name", ["squeezenet", "distilbert"])
def test_four_threads_at_once(name, models, sessions):
    """16 runs on 4 threads, each with its own inputs, interleaved on one session: each
    result equals what the same session gives for those inputs alone (the code is
    deterministic: any difference is one call's buffers leaking into another's)."""
    session = sessions(name)
    reference = onnxruntime_session(models[name])
    all_feeds = [feeds_for(session.get_inputs(), seed=seed) for seed in range(16)]
    alone = [session.run(None, feeds) for feeds in all_feeds]
    assert_close(alone[1], reference.run(None, all_feeds[1]))
    start = threading.Barrier(4)

    def run(index):
        if index < 4:
            start.wait()  # the first four calls start together
        return session.run(None, all_feeds[index])

    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(run, range(16)))
    for got, want in zip(together, alone):
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


def export_dynamic_bert(path: Path):
    """A small BERT (2 layers, hidden 64) exported as tools/gen_models.py exports the
    judged transformers, but with the batch and sequence length symbolic."""
    import torch
    import transformers

    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=100, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                     intermediate_size=128, max_position_embeddings=64, attn_implementation="eager")
    model = transformers.BertModel(config).eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask):
            return self.model(input_ids=input_ids, attention_mask=attention_mask, return_dict=False)[0]

    ids = torch.randint(0, 100, (1, 16))
    mask = torch.ones(1, 16, dtype=torch.int64)
    mask[:, 12:] = 0
    axes = {0: "batch", 1: "sequence"}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(LastHiddenState().eval(), (ids, mask), str(path), dynamo=False, opset_version=TRANSFORMER_OPSET,
                          input_names=["input_ids", "attention_mask"], output_names=["last_hidden_state"],
                          dynamic_axes={"input_ids": axes, "attention_mask": axes, "last_hidden_state": axes})


def test_symbolic_sequence_length(tmp_path, monkeypatch):
    path = tmp_path / "bert_dynamic.onnx"
    # torch sets its compile cache's directory in the environment unless it is set.
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "torchinductor"))
    export_dynamic_bert(path)
    session = InferenceSession(path, cache_dir=tmp_path / "cache", max_specializations=2)
    reference = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert [a.shape for a in session.get_inputs()] == [["batch", "sequence"]] * 2
    assert [a.shape for a in session.get_inputs()] == [a.shape for a in reference.get_inputs()]
    assert session.compilations == 0  # nothing to compile before the shapes are known
    for batch, length in ((1, 7), (1, 32), (2, 19)):
        shapes = {"input_ids": [batch, length], "attention_mask": [batch, length]}
        feeds = feeds_for(session.get_inputs(), seed=length, shapes=shapes)
        (hidden,) = session.run(None, feeds)
        assert hidden.shape == (batch, length, 64)
        assert_close([hidden], reference.run(None, feeds))
    assert session.compilations == 3
    # Two kept loaded; the first length comes back from the cache, not the compiler.
    feeds = feeds_for(session.get_inputs(), seed=7, shapes={"input_ids": [1, 7], "attention_mask": [1, 7]})
    assert_close(session.run(None, feeds), reference.run(None, feeds))
    assert session.compilations == 3
