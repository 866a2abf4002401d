"""The time-step loops of LSTM, GRU and RNN at batch 1, as deployed taggers and speech
models run them: the step's 1-row matmul over R^T in one wide register tile
(``tiles.matmul_register_tile``; before, a matrix-vector product with one horizontal sum
per output) and the states updated in place (``codegen/cpu/step_states.py``; before,
two buffers allocated and freed per step).

Compiled for the host and checked against onnxruntime: hidden sizes 20 (LSTM's 80 gate
columns are five AVX-512 vectors, GRU's 60 not a whole vector: padded) and 64, forward,
reverse and bidirectional, with initial states and sequence_lens, tolerance as in
``frontend/test_recurrent.py`` (2e-5 of the largest output: only the rounding of the
gate arithmetic differs). The lowered code is checked to allocate nothing inside a
time-step loop.
"""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnf_mlir
from dnnf_mlir.codegen.cpu import lower_to_llvm
from dnnf_mlir.frontend.onnx_importer import import_onnx
from dnnf_mlir.kernel_functions import is_time_step_loop
from dnnf_mlir.session import InferenceSession
from dnnf_mlir.transforms.pipeline import build_pass_manager

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
SEQ, FEATURES = 7, 12
RTOL = 2e-5


def step_model(op, hidden, direction="forward", lengths=False, seed=0):
    """One batch-1 ``op`` node with seeded weights and initial states."""
    rng = np.random.default_rng(seed)
    directions = 2 if direction == "bidirectional" else 1
    gates = GATES[op] * hidden

    def randn(*shape, scale=0.3):
        return (scale * rng.standard_normal(shape)).astype(np.float32)

    constants = {"W": randn(directions, gates, FEATURES), "R": randn(directions, gates, hidden),
                 "B": randn(directions, 2 * gates), "L": np.array([SEQ - 2 if lengths else SEQ], np.int32),
                 "H0": randn(directions, 1, hidden, scale=1.0)}
    names = ["X", "W", "R", "B", "L", "H0"]
    if op == "LSTM":
        constants["C0"] = randn(directions, 1, hidden, scale=1.0)
        names.append("C0")
    outputs = ["Y", "Y_h", "Y_c"][: 3 if op == "LSTM" else 2]
    node = helper.make_node(op, names, outputs, hidden_size=hidden, direction=direction)
    graph = helper.make_graph(
        [node], op.lower(), [helper.make_tensor_value_info("X", TensorProto.FLOAT, [SEQ, 1, FEATURES])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
        [numpy_helper.from_array(v, n) for n, v in constants.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    return model, {"X": rng.standard_normal((SEQ, 1, FEATURES)).astype(np.float32)}


CASES = [(op, hidden, direction, lengths) for op in GATES for hidden in (20, 64)
         for direction, lengths in (("forward", False), ("reverse", True), ("bidirectional", False))]


@pytest.mark.parametrize("op, hidden, direction, lengths", CASES)
def test_matches_onnxruntime(op, hidden, direction, lengths):
    model, feeds = step_model(op, hidden, direction, lengths)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    got = InferenceSession(model.SerializeToString(), use_cache=False).run(None, feeds)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=0, atol=RTOL * max(1.0, float(np.abs(w).max())))


def allocations_in_steps(module) -> int:
    """memref.alloc ops nested in a time-step loop of ``module`` (bufferized, its allocations
    hoisted out of loops where they can be: what stays is a buffer each step yields)."""
    count = 0

    def visit(op):
        nonlocal count
        if is_time_step_loop(op):
            def inner(nested):
                nonlocal count
                count += nested.name == "memref.alloc"
                return dnnf_mlir._mlir.ir.WalkResult.ADVANCE
            op.walk(inner)
        return dnnf_mlir._mlir.ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return count


@pytest.mark.parametrize("op", sorted(GATES))
def test_steps_allocate_nothing_and_skip_the_matvec(op):
    model, _ = step_model(op, 64, "bidirectional")
    context = dnnf_mlir.make_context()
    found = {}
    with context:
        module = import_onnx(model, context=context)
        build_pass_manager("builtin.module(convert-ecg-to-linalg)", context).run(module.operation)

        def dump(stage, lowered):
            if stage == "lower-vectors":
                found["allocations"] = allocations_in_steps(lowered)

        schedules = lower_to_llvm(module, "host", threads=1, dump=dump).schedules
    assert found["allocations"] == 0
    steps = [s for s in schedules if s.op == "linalg.matmul" and s.shape[0] == 1]
    # Per direction one step matmul (GRU: two, R_zr and R_h).
    assert len(steps) == (4 if op == "GRU" else 2), schedules
    assert all(s.details["register_tile"][0] == 1 and s.details["register_tile"][1] >= 64 for s in steps), schedules
    assert not [s for s in schedules if s.strategy == "matvec"]
