"""The recurrent family: LSTM, GRU and RNN over a [seq, batch, features] value, in
every direction, with or without biases, initial states, sequence_lens (constant, or a
run-time input that may hold empty sequences), peepholes, clip, input_forget,
linear_before_reset and activation sets with their alpha and beta.

onnxruntime decides what is drawn: layout 0 only (it refuses batch-major layouts).
The gate activations (f) are bounded ones, so that states stay in range over the steps.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .draws import constant, pick, weight
from .graph import GraphBuilder

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
# Activation -> (alpha, beta) drawn for it (None: takes none).
BOUNDED = {"Sigmoid": None, "Tanh": None, "HardSigmoid": (0.3, 0.4), "Softsign": None, "ScaledTanh": (0.8, 1.2)}
UNBOUNDED = {"Relu": None, "LeakyRelu": (0.1, None), "Elu": (0.7, None), "Softplus": None, "Affine": (0.5, 0.2),
             "ThresholdedRelu": (0.2, None)}
SEQ, FEATURES, HIDDEN = (1, 2, 3, 7), (1, 3, 8, 17), (1, 2, 4, 8, 16, 17)


def _activations(draw, op: str, directions: int) -> dict:
    """Attributes naming the activations of every direction (f bounded; g, h any), or none (defaults)."""
    if draw(st.booleans()):
        return {}
    names, alphas, betas = [], [], []
    for _ in range(directions):
        names.append(draw(st.sampled_from(sorted(BOUNDED))))
        names += [draw(st.sampled_from(sorted(BOUNDED | UNBOUNDED))) for _ in range({"LSTM": 2, "GRU": 1}.get(op, 0))]
    for name in names:
        alpha, beta = {**BOUNDED, **UNBOUNDED}[name] or (None, None)
        alphas += [] if alpha is None else [alpha]
        betas += [] if beta is None else [beta]
    attrs = {"activations": names}
    if alphas:
        attrs["activation_alpha"] = alphas
    if betas:
        attrs["activation_beta"] = betas
    return attrs


def _sequence(draw, g: GraphBuilder):
    """A new [seq, batch, features] input."""
    return g.input((draw(st.sampled_from(SEQ)), draw(st.sampled_from((1, 2, 3))), draw(st.sampled_from(FEATURES))))


def recurrent(draw, g: GraphBuilder) -> None:
    op = draw(st.sampled_from(sorted(GATES)))
    x = pick(draw, g, lambda v: v.rank == 3 and v.shape[0] in SEQ and v.shape[2] <= 65, _sequence)
    seq, batch, features = x.shape
    direction = draw(st.sampled_from(("forward", "reverse", "bidirectional")))
    directions = 2 if direction == "bidirectional" else 1
    hidden = draw(st.sampled_from(HIDDEN))
    gates = GATES[op] * hidden
    inputs = [x, weight(draw, g, (directions, gates, features), features),
              weight(draw, g, (directions, gates, hidden), hidden)]
    optional = [constant(draw, g, (directions, 2 * gates), 0.5) if draw(st.booleans()) else ""]
    lengths = draw(st.sampled_from(("none", "constant", "input")))
    if lengths == "constant":
        optional.append(g.constant(np.array([draw(st.integers(0, seq)) for _ in range(batch)], np.int32)))
    else:
        optional.append(g.input((batch,), np.int32, high=seq + 1) if lengths == "input" else "")
    states = 2 if op == "LSTM" else 1
    optional += [constant(draw, g, (directions, batch, hidden)) if draw(st.booleans()) else "" for _ in range(states)]
    attrs = {"hidden_size": hidden, "direction": direction, **_activations(draw, op, directions)}
    if op == "LSTM":
        optional.append(constant(draw, g, (directions, 3 * hidden), 0.5) if draw(st.booleans()) else "")
        attrs["input_forget"] = draw(st.integers(0, 1))
    if op == "GRU":
        attrs["linear_before_reset"] = draw(st.integers(0, 1))
    if draw(st.integers(0, 3)) == 0:
        attrs["clip"] = draw(st.sampled_from((0.5, 2.0)))
    while optional and optional[-1] == "":
        optional.pop()
    shapes = [(seq, directions, batch, hidden)] + [(directions, batch, hidden)] * states
    g.node(op, inputs + optional, shapes, scale=4.0, **attrs)


FAMILIES = {"recurrent": recurrent}

__all__ = ["FAMILIES", "recurrent"]
