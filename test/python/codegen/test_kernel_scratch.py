"""A kernel's big scratch buffers made by its callers, in the arena
(``codegen/cpu/kernel_scratch.py``).

A model of two Winograd convolutions 16 -> 64 at 55x55 (their batch matmul's products
36 x 64 x 196 floats, 1.8 MB, the kernel's only buffer of at least ``MIN_SCRATCH_BYTES``)
around a 1x1 convolution: lowered, no kernel function allocates that much and the
calls pass it; compiled and run at 1 and 2 threads against onnxruntime (1e-4 of the
output's largest magnitude: Winograd's float32 error is a few 1e-6 of it here).
"""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnf_mlir
from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen import lower
from dnnf_mlir.codegen.cpu.buffer_arena import byte_size
from dnnf_mlir.codegen.cpu.kernel_scratch import MIN_SCRATCH_BYTES
from dnnf_mlir.compiler import Artifact, compile_model
from dnnf_mlir.frontend.onnx_importer import import_onnx
from dnnf_mlir.kernel_functions import is_public
from dnnf_mlir.transforms.pipeline import build_pass_manager

TOLERANCE = 1e-4


def two_winograd_model():
    rng = np.random.default_rng(7)
    initializers, nodes = [], []
    for name, (cin, cout, k) in {"a": (16, 64, 3), "s": (64, 16, 1), "b": (16, 64, 3)}.items():
        w = rng.standard_normal((cout, cin, k, k)) / np.sqrt(cin * k * k)
        initializers += [numpy_helper.from_array(w.astype(np.float32), f"{name}_w"),
                         numpy_helper.from_array(rng.standard_normal(cout).astype(np.float32), f"{name}_b")]
        source = {"a": "x", "s": "a", "b": "s"}[name]
        nodes += [helper.make_node("Conv", [source, f"{name}_w", f"{name}_b"], [f"{name}_c"], kernel_shape=[k, k],
                                   pads=[k // 2] * 4),
                  helper.make_node("Relu", [f"{name}_c"], [name if name != "b" else "y"])]
    graph = helper.make_graph(nodes, "two_winograd", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                                    [1, 16, 55, 55])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, 55, 55])], initializers)
    x = rng.standard_normal((1, 16, 55, 55)).astype(np.float32)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), x


def big_buffers(module) -> tuple:
    """(the largest static buffer a kernel function allocates, how many call operands
    of at least ``MIN_SCRATCH_BYTES`` are views of a public function's arena)."""
    largest, passed = 0, 0
    for func in module.body.operations:
        if func.operation.name != "func.func" or not func.regions[0].blocks:
            continue
        for op in func.regions[0].blocks[0].operations:
            if op.operation.name == "memref.alloc" and not is_public(func):
                largest = max(largest, byte_size(ir.MemRefType(op.results[0].type)))
            if op.operation.name == "func.call" and is_public(func):
                passed += sum(1 for v in op.operands if isinstance(v, ir.OpResult) and v.owner.name == "memref.view"
                              and byte_size(ir.MemRefType(v.type)) >= MIN_SCRATCH_BYTES)
    return largest, passed


@pytest.mark.parametrize("threads", [1, 2])
def test_kernels_allocate_no_big_scratch(threads):
    model, _ = two_winograd_model()
    found = {}
    context = dnnf_mlir.make_context()
    with context:
        module = import_onnx(model, context=context)
        build_pass_manager("builtin.module(ecg-fuse,ecg-outline-kernels,convert-ecg-to-linalg,"
                           "dnnf-winograd{mode=always})", context).run(module.operation)
        lower(module, "host", threads, dump=lambda stage, m: found.update({stage: big_buffers(m)})
              if stage == "lower-vectors" else None)
    largest, passed = found["lower-vectors"]
    assert largest < MIN_SCRATCH_BYTES and passed == 2, found


@pytest.mark.parametrize("threads", [1, 2])
def test_hoisted_scratch_matches_onnxruntime(threads, tmp_path):
    model, x = two_winograd_model()
    path = tmp_path / "two_winograd.onnx"
    path.write_bytes(model.SerializeToString())
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    compile_model(path, tmp_path / "out", threads=threads, winograd="always")
    (got,), _ = Artifact(tmp_path / "out").run([x], threads=threads)
    np.testing.assert_allclose(got, want, rtol=0, atol=TOLERANCE * np.abs(want).max())
