"""The entry function's buffers in one arena, hot first (``codegen/cpu/buffer_arena.py``).

``plan_offsets`` on seeded random lifetimes: no two buffers live at once share a byte,
offsets are 64-byte aligned, the arena never passes its limit. Then whole models whose
buffers share bytes in the plan, compiled and run against onnxruntime (1e-4 of the
output's largest magnitude: float32 sums of at most a few hundred terms in another
order): a residual block (the skip input read after kernels whose outputs may reuse
other bytes), a fire module's concat of two branches, and a GRU (a loop over time
steps carrying its state buffers), at 1 and 2 threads.
"""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnf_mlir
from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen import lower
from dnnf_mlir.codegen.cpu.buffer_arena import ARENA_ALIGNMENT, Buffer, plan_offsets
from dnnf_mlir.compiler import Artifact, compile_model
from dnnf_mlir.frontend.onnx_importer import import_onnx
from dnnf_mlir.kernel_functions import is_public
from dnnf_mlir.transforms.pipeline import build_pass_manager

TOLERANCE = 1e-4


def random_buffers(rng, count):
    starts = np.sort(rng.choice(4 * count, count, replace=False))
    return [Buffer(None, int(rng.integers(1, 40)) * ARENA_ALIGNMENT, int(s), int(s + rng.integers(1, 3 * count)))
            for s in starts]


@pytest.mark.parametrize("seed", range(20))
def test_live_buffers_never_share_bytes(seed):
    buffers = random_buffers(np.random.default_rng(seed), 60)
    limit = sum(b.size for b in buffers) // 3
    size = plan_offsets(buffers, limit)
    placed = [b for b in buffers if b.offset >= 0]
    assert size <= limit and len(placed) > len(buffers) // 2
    for b in placed:
        assert b.offset % ARENA_ALIGNMENT == 0 and b.offset + b.size <= size
    for i, a in enumerate(placed):
        for b in placed[i + 1:]:
            live_together = a.start <= b.end and b.start <= a.end
            share_bytes = a.offset < b.offset + b.size and b.offset < a.offset + a.size
            assert not (live_together and share_bytes), (a, b)


def test_the_most_recently_freed_block_is_taken():
    # a (offset 0) dies before c is allocated, b (offset 1024) before d: d takes b's
    # block though a's, lower, fits too.
    a, b = Buffer(None, 1024, 0, 2), Buffer(None, 1024, 1, 4)
    c, d = Buffer(None, 64, 3, 6), Buffer(None, 512, 5, 6)
    assert plan_offsets([a, b, c, d]) == 2048
    assert (a.offset, b.offset, c.offset, d.offset) == (0, 1024, 0, 1024)


def conv(name, source, channels_in, channels_out, kernel, rng, initializers):
    w = (rng.standard_normal((channels_out, channels_in, kernel, kernel)) / np.sqrt(channels_in * kernel**2))
    initializers += [numpy_helper.from_array(w.astype(np.float32), f"{name}_w"),
                     numpy_helper.from_array(rng.standard_normal(channels_out).astype(np.float32), f"{name}_b")]
    conv_node = helper.make_node("Conv", [source, f"{name}_w", f"{name}_b"], [f"{name}_c"], kernel_shape=[kernel] * 2,
                                 pads=[kernel // 2] * 4)
    return [conv_node, helper.make_node("Relu", [f"{name}_c"], [name])]


def residual_model(rng):
    """Three residual blocks, each input read again after two convolutions; the last one's
    a 1x1 projection to 24 channels."""
    initializers, nodes, source = [], [], "x"
    for i, channels in enumerate((16, 16, 24)):
        nodes += conv(f"a{i}", source, 16, 16, 3, rng, initializers) + conv(f"b{i}", f"a{i}", 16, channels, 3, rng,
                                                                              initializers)
        skip = source
        if channels != 16:
            nodes += conv(f"p{i}", source, 16, channels, 1, rng, initializers)
            skip = f"p{i}"
        nodes.append(helper.make_node("Add", [f"b{i}", skip], [f"s{i}"]))
        source = f"s{i}"
    nodes.append(helper.make_node("Relu", [source], ["y"]))
    return nodes, initializers, [1, 16, 20, 20], [1, 24, 20, 20]


def fire_model(rng):
    """SqueezeNet's fire module twice: a squeeze, two expands concatenated, a pool."""
    initializers, nodes, source, channels = [], [], "x", 8
    for i in range(2):
        nodes += conv(f"s{i}", source, channels, 4, 1, rng, initializers)
        nodes += conv(f"e{i}a", f"s{i}", 4, 8, 1, rng, initializers)
        nodes += conv(f"e{i}b", f"s{i}", 4, 8, 3, rng, initializers)
        nodes.append(helper.make_node("Concat", [f"e{i}a", f"e{i}b"], [f"cat{i}"], axis=1))
        source, channels = f"cat{i}", 16
    nodes.append(helper.make_node("MaxPool", ["cat1"], ["y"], kernel_shape=[2, 2], strides=[2, 2]))
    return nodes, initializers, [1, 8, 18, 18], [1, 16, 9, 9]


def gru_model(rng):
    """A GRU over 7 steps, its outputs through a MatMul: state buffers carried by a loop."""
    hidden, features, steps = 16, 8, 7
    shapes = {"w": [1, 3 * hidden, features], "r": [1, 3 * hidden, hidden], "b": [1, 6 * hidden], "m": [hidden, 5]}
    initializers = [numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)
                    for name, shape in shapes.items()]
    nodes = [helper.make_node("GRU", ["x", "w", "r", "b"], ["h", ""], hidden_size=hidden),
             helper.make_node("MatMul", ["h", "m"], ["y"])]
    return nodes, initializers, [steps, 1, features], [steps, 1, 1, 5]


MODELS = {"residual": residual_model, "fire": fire_model, "gru": gru_model}


def make_model(name):
    rng = np.random.default_rng(sorted(MODELS).index(name))
    nodes, initializers, in_shape, out_shape = MODELS[name](rng)
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, in_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)], initializers)
    x = rng.standard_normal(in_shape).astype(np.float32)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), x


def entry_buffer_bytes(model) -> tuple:
    """(bytes of the entry's static buffers after bufferization, bytes of those it still
    allocates after the arena's placement, bytes of its arena: its only i8 buffer in
    these models), lowered as dnnf-compile lowers it (fused, kernels outlined)."""
    found = {}

    def collect(stage, module):
        if stage in ("bufferize", "lower-vectors"):
            found[stage] = [ir.MemRefType(op.results[0].type) for func in module.body.operations
                            if func.operation.name == "func.func" and is_public(func)
                            for op in func.regions[0].blocks[0].operations if op.operation.name == "memref.alloc"]

    def total(types, arena):
        return sum(int(np.prod(t.shape)) * t.element_type.width // 8 for t in types
                   if t.has_static_shape and (t.element_type == ir.IntegerType.get_signless(8)) == arena)

    context = dnnf_mlir.make_context()
    with context:
        module = import_onnx(model, context=context)
        build_pass_manager("builtin.module(ecg-fuse,ecg-outline-kernels,convert-ecg-to-linalg)", context).run(
            module.operation)
        lower(module, "host", dump=collect)
        return (total(found["bufferize"], False), total(found["lower-vectors"], False),
                total(found["lower-vectors"], True))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_models_with_shared_buffers_match_onnxruntime(name, threads, tmp_path):
    model, x = make_model(name)
    path = tmp_path / f"{name}.onnx"
    path.write_bytes(model.SerializeToString())
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    compile_model(path, tmp_path / "out", threads=threads)
    (got,), _ = Artifact(tmp_path / "out").run([x], threads=threads)
    np.testing.assert_allclose(got, want, rtol=0, atol=TOLERANCE * np.abs(want).max())


@pytest.mark.parametrize("name", sorted(MODELS))
def test_models_share_bytes_in_the_plan(name):
    """What the test above runs is a plan that reuses bytes: the arena is smaller than
    the buffers it holds."""
    before, kept, arena = entry_buffer_bytes(make_model(name)[0])
    assert 0 < arena < before - kept, (before, kept, arena)
