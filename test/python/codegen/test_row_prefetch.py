"""The next rows of a row group in chunks prefetched on AVX-512 (``codegen/cpu/row_prefetch.py``).

A residual add + layer normalization and an add + softmax over 37 rows (odd: the last
row's prefetch is clamped to the buffer; two threads split the rows unevenly) of a
row shorter than a chunk loop's threshold (96), of an odd length no chunk width
divides (777, whole), and of rows cut in chunks (768; 1000: 40-wide chunks on
AVX-512). The chunked ones get prefetches on AVX-512, the others and AVX2 code none
(``DNNF_CPU=x86-64-v3`` runs the AVX2 leg); every one matches onnxruntime (rtol 1e-4,
atol 1e-5: float32 sums over rows of up to 1000 elements in another order).
"""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnf_mlir
from dnnf_mlir.codegen import lower
from dnnf_mlir.codegen.cpu.row_chunks import chunk_width
from dnnf_mlir.codegen.cpu.row_prefetch import prefetches_rows
from dnnf_mlir.codegen.cpu.target import host_target
from dnnf_mlir.compiler import Artifact, compile_model
from dnnf_mlir.frontend.onnx_importer import import_onnx
from dnnf_mlir.ir_walk import walk_ops
from dnnf_mlir.transforms.pipeline import build_pass_manager

ROWS = 37
WIDTHS = [96, 777, 768, 1000]


def add_then(op: str, width: int):
    """(model, inputs) of x + y followed by ``op`` (LayerNormalization or Softmax) over
    rows of ``width``."""
    rng = np.random.default_rng(width)
    shape = [1, ROWS, width]
    initializers, extra = [], []
    if op == "LayerNormalization":
        initializers = [numpy_helper.from_array(rng.standard_normal(width).astype(np.float32), name)
                        for name in ("scale", "shift")]
        extra = ["scale", "shift"]
    nodes = [helper.make_node("Add", ["x", "y"], ["s"]), helper.make_node(op, ["s", *extra], ["out"], axis=-1)]
    graph = helper.make_graph(nodes, op, [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n in "xy"],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, shape)], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model, [rng.standard_normal(shape).astype(np.float32) for _ in "xy"]


def prefetches(model) -> int:
    """The ``memref.prefetch`` ops of ``model`` lowered as dnnf-compile lowers it (fused,
    kernels outlined), after the vector stage."""
    counts = []

    def count(stage, module):
        if stage == "lower-vectors":
            counts.append(len(list(walk_ops(module.operation, {"memref.prefetch"}))))

    with dnnf_mlir.make_context() as context:
        module = import_onnx(model, context=context)
        passes = "builtin.module(ecg-fuse,ecg-outline-kernels,convert-ecg-to-linalg)"
        build_pass_manager(passes, context).run(module.operation)
        lower(module, "host", dump=count)
    return counts[0]


@pytest.mark.parametrize("op", ["LayerNormalization", "Softmax"])
@pytest.mark.parametrize("width", WIDTHS)
def test_chunked_rows_get_prefetches(op, width):
    lanes = host_target().lanes(32)
    chunked = chunk_width(width, lanes) is not None
    assert chunked == (width in (768, 1000))
    model, _ = add_then(op, width)
    count = prefetches(model)
    # Two inputs, each chunk's lines (4 per 64-float chunk): at least one per input read.
    assert (count >= 2) if chunked and prefetches_rows(lanes) else (count == 0)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", ["LayerNormalization", "Softmax"])
@pytest.mark.parametrize("width", WIDTHS)
def test_rows_match_onnxruntime(op, width, threads, tmp_path):
    model, inputs = add_then(op, width)
    path = tmp_path / "model.onnx"
    path.write_bytes(model.SerializeToString())
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, dict(zip("xy", inputs)))[0]
    compile_model(path, tmp_path / "out", threads=threads)
    (got,), _ = Artifact(tmp_path / "out").run(inputs, threads=threads)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
