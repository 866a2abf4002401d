"""ONNX LSTM, GRU and RNN against onnxruntime: every direction, sequence_lens (runtime and constant,
with an empty sequence), initial states, peepholes, clip, input_forget, linear_before_reset, every
activation with its alpha and beta, optional outputs; layout 1 (which onnxruntime refuses) against
onnxruntime's layout-0 results transposed. The reference interpreter runs them all; the host code
generator a selection, one per cell with masking and both directions."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnnf_mlir.compiler import CompileOptions
from dnnf_mlir.compiler.driver import compile_pipeline
from dnnf_mlir.frontend.onnx_importer import OnnxImportError, import_onnx
from dnnf_mlir.interpreter import interpret
from dnnf_mlir.session import InferenceSession

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
SEQ, BATCH, FEATURES, HIDDEN = 5, 3, 4, 6
# Relative to the outputs' largest magnitude: the gate arithmetic differs from onnxruntime's in
# rounding only (onnxruntime's GRU uses a rational tanh and sigmoid, good to about 1e-6).
RTOL = 2e-5


def recurrent_model(op, *, direction="forward", layout=0, lengths=None, runtime_lengths=False, initial=True,
                    peepholes=False, outputs=("Y", "Y_h", "Y_c"), seed=0, **attrs):
    """One ``op`` node with seeded random weights (initializers); X, and sequence_lens when
    ``runtime_lengths``, are graph inputs. Returns the model and its feeds."""
    rng = np.random.default_rng(seed)
    directions, gates = 2 if direction == "bidirectional" else 1, GATES[op] * HIDDEN
    initializers, feeds = [], {}

    def constant(name, array):
        initializers.append(numpy_helper.from_array(array, name))
        return name

    def weights(name, shape):
        return constant(name, (0.5 * rng.standard_normal(shape)).astype(np.float32))

    def state(name):  # drawn in layout 0, then laid out
        array = rng.standard_normal((directions, BATCH, HIDDEN)).astype(np.float32)
        return constant(name, np.ascontiguousarray(array.transpose(1, 0, 2) if layout else array))

    inputs = ["X", weights("W", (directions, gates, FEATURES)), weights("R", (directions, gates, HIDDEN)),
              weights("B", (directions, 2 * gates)), ""]
    graph_inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, [BATCH, SEQ, FEATURES] if layout
                                                  else [SEQ, BATCH, FEATURES])]
    if lengths is not None:
        inputs[4] = "L"
        if runtime_lengths:
            graph_inputs.append(helper.make_tensor_value_info("L", TensorProto.INT32, [BATCH]))
            feeds["L"] = np.array(lengths, np.int32)
        else:
            constant("L", np.array(lengths, np.int32))
    states = ("H0", "C0") if op == "LSTM" else ("H0",)
    inputs += [state(name) if initial else "" for name in states]
    if peepholes:
        inputs.append(weights("P", (directions, 3 * HIDDEN)))
    while inputs[-1] == "":
        inputs.pop()
    outputs = list(outputs if op == "LSTM" else outputs[:2])
    node = helper.make_node(op, inputs, outputs, hidden_size=HIDDEN, direction=direction, layout=layout, **attrs)
    graph = helper.make_graph([node], op.lower(), graph_inputs,
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs if o],
                              initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    shape = (BATCH, SEQ, FEATURES) if layout else (SEQ, BATCH, FEATURES)
    feeds["X"] = rng.standard_normal(shape).astype(np.float32)
    return model, feeds


def onnxruntime_outputs(op, **case) -> list:
    """onnxruntime's outputs; for layout 1, those of the same node in layout 0, transposed."""
    if not case.get("layout"):
        model, feeds = recurrent_model(op, **case)
        return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    model, feeds = recurrent_model(op, **{**case, "layout": 0})
    feeds["X"] = recurrent_model(op, **case)[1]["X"].transpose(1, 0, 2)
    results = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    return [r.transpose(2, 0, 1, 3) if r.ndim == 4 else r.transpose(1, 0, 2) for r in results]


def assert_matches(got, expected):
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=0, atol=RTOL * max(1.0, float(np.abs(e).max())))


BIDIRECTIONAL = {"direction": "bidirectional"}
CASES = {
    "forward": {},
    "reverse": {"direction": "reverse"},
    "bidirectional": BIDIRECTIONAL,
    "no_initial_state": {**BIDIRECTIONAL, "initial": False},
    "lengths": {"direction": "reverse", "lengths": [5, 2, 3]},
    "lengths_empty_sequence": {**BIDIRECTIONAL, "lengths": [5, 0, 3]},
    "runtime_lengths": {**BIDIRECTIONAL, "lengths": [2, 5, 0], "runtime_lengths": True},
    "clip": {**BIDIRECTIONAL, "clip": 0.4},
    "layout_1": {**BIDIRECTIONAL, "layout": 1, "lengths": [4, 1, 5]},
    "only_final_state": {"outputs": ("", "Y_h", "")},
}
LSTM_CASES = {
    "peepholes": {**BIDIRECTIONAL, "peepholes": True, "lengths": [3, 5, 1]},
    "input_forget": {"peepholes": True, "input_forget": 1, "clip": 0.7},
    "only_cell_state": {"outputs": ("", "", "Y_c")},
}
GRU_CASES = {
    "linear_before_reset": {**BIDIRECTIONAL, "linear_before_reset": 1, "lengths": [5, 2, 4]},
    "linear_before_reset_no_initial_state": {"linear_before_reset": 1, "initial": False},
}
# Activation sets (per direction: LSTM f, g, h; GRU f, g; RNN f) with alphas and betas consumed in order.
ACTIVATION_CASES = {
    "LSTM": [
        {"activations": ["HardSigmoid", "Softsign", "Softplus"], "activation_alpha": [0.3], "activation_beta": [0.6]},
        {**BIDIRECTIONAL, "activations": ["Sigmoid", "Tanh", "Relu", "HardSigmoid", "Elu", "ScaledTanh"],
         "activation_alpha": [0.25, 0.8, 0.7], "activation_beta": [0.45, 1.3]},
    ],
    "GRU": [
        {**BIDIRECTIONAL, "activations": ["HardSigmoid", "LeakyRelu", "Sigmoid", "Elu"],
         "activation_alpha": [0.3, 0.2, 0.9], "activation_beta": [0.4]},
        {"activations": ["Sigmoid", "ThresholdedRelu"], "activation_alpha": [0.1]},
    ],
    "RNN": [
        {**BIDIRECTIONAL, "activations": ["ScaledTanh", "Affine"], "activation_alpha": [0.5, 0.7],
         "activation_beta": [1.5, 0.3]},
        {"activations": ["LeakyRelu"]},  # alpha defaults to 0.01
        {"activations": ["Softsign"], "lengths": [5, 3, 1]},
    ],
}

INTERPRETED = [
    *[(op, name, case) for op in GATES for name, case in CASES.items()],
    *[("LSTM", name, case) for name, case in LSTM_CASES.items()],
    *[("GRU", name, case) for name, case in GRU_CASES.items()],
    *[(op, f"activations_{i}", case) for op, cases in ACTIVATION_CASES.items() for i, case in enumerate(cases)],
]


@pytest.mark.parametrize("op, name, case", INTERPRETED, ids=[f"{op}-{name}" for op, name, _ in INTERPRETED])
def test_interpreter_matches_onnxruntime(op, name, case):
    model, feeds = recurrent_model(op, **case)
    module = import_onnx(model)
    got = interpret(module, [feeds[i.name] for i in model.graph.input])
    assert_matches(got, onnxruntime_outputs(op, **case))


COMPILED = [
    ("LSTM", {**BIDIRECTIONAL, "peepholes": True, "lengths": [5, 2, 0], "runtime_lengths": True}),
    ("GRU", {**BIDIRECTIONAL, "linear_before_reset": 1, "lengths": [3, 5, 1], "clip": 0.5}),
    ("GRU", {"direction": "reverse", "layout": 1}),
    ("RNN", {**BIDIRECTIONAL, **ACTIVATION_CASES["RNN"][0], "initial": False}),
]


@pytest.mark.parametrize("op, case", COMPILED, ids=[op for op, _ in COMPILED])
def test_host_code_matches_onnxruntime(op, case):
    model, feeds = recurrent_model(op, **case)
    got = InferenceSession(model.SerializeToString()).run(None, feeds)
    assert_matches(got, onnxruntime_outputs(op, **case))


def test_one_input_projection_then_one_loop_per_direction():
    model, _ = recurrent_model("LSTM", direction="bidirectional")
    module = import_onnx(model)
    main = next(op for op in module.body.operations if op.operation.name == "func.func")
    ops = [(op.operation.name, tuple(op.results[0].type.shape)) for op in main.regions[0].blocks[0].operations
           if len(op.results)]
    # One [seq*batch, 2 directions * 4 gates * hidden] projection, one loop over the steps per direction:
    # the graph does not grow with the sequence length.
    assert ops.count(("ecg.gemm", (SEQ * BATCH, 2 * 4 * HIDDEN))) == 1
    assert ops.count(("ecg.lstm_recurrence", (SEQ, BATCH, HIDDEN))) == 2
    assert not [name for name, _ in ops if name == "ecg.mat_mul"]


@pytest.mark.parametrize("target, unrolled", [("host", False), ("vulkan", True), ("opencl", True)])
def test_only_gpu_targets_unroll_the_loops(target, unrolled, tmp_path):
    names = compile_pipeline(CompileOptions(target=target), tmp_path / "weights.bin", tmp_path).names()
    assert ("ecg-unroll-recurrence" in names) == unrolled
    if unrolled:  # before fusion, which joins each step's matmul with its gate epilogue
        assert names.index("ecg-unroll-recurrence") < names.index("ecg-fuse")


@pytest.mark.parametrize("attrs, message", [
    ({"activations": ["Sigmoid", "Swish", "Tanh"]}, "activation 'Swish' is not one of Affine"),
    ({"activations": ["Sigmoid", "Tanh"]}, "'activations' has 2 entries, expected 3 per direction (3)"),
    ({"direction": "sideways"}, "direction 'sideways' is not forward, reverse or bidirectional"),
])
def test_bad_attributes_name_the_node_and_opset(attrs, message):
    model, _ = recurrent_model("LSTM")
    node = model.graph.node[0]
    kept = [a for a in node.attribute if a.name not in attrs]
    del node.attribute[:]
    node.attribute.extend(kept + [helper.make_attribute(k, v) for k, v in attrs.items()])
    with pytest.raises(OnnxImportError) as error:
        import_onnx(model)
    assert "node 'LSTM_0' (ai.onnx::LSTM, opset 14)" in str(error.value)
    assert message in str(error.value)


def test_mismatched_weights_are_named():
    model, _ = recurrent_model("GRU")
    weights = next(i for i in model.graph.initializer if i.name == "R")
    weights.CopyFrom(numpy_helper.from_array(np.zeros((1, 3 * HIDDEN, HIDDEN + 1), np.float32), "R"))
    with pytest.raises(OnnxImportError, match=r"R has shape \[1, 18, 7\], expected \[1, 18, 6\]"):
        import_onnx(model)
