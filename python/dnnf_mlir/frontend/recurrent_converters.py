"""ONNX's recurrent layers (LSTM, GRU, RNN) as ECG ops, unrolled over the time steps at import.

The input projections of every time step and direction are one ``gemm``
(X[seq*batch, in] x W^T, both directions' weights stacked, biases added); each step is
then a small ``mat_mul`` of the previous hidden state with R^T (transposed once, at
import, so that the code generator packs it as a constant), plus the step's slice of
the projection, followed by the gate epilogue (slices, activations, the cell update),
all of which fusion joins into the step's matmul kernel. The reverse direction runs the steps backwards;
``sequence_lens`` masks a step with ``where``: past a sequence's length its state
holds and its output is zero. Because the result is plain ECG, the interpreter,
rewriting, fusion and both code generators (CPU and GPU, through ecg_to_linalg) cover
it without an op of its own; the price is a graph that grows with the (static)
sequence length.
"""

from dataclasses import dataclass, field
from functools import partial

import numpy as np

from .node_builder import NodeBuilder, UnsupportedOutput
from .onnx_types import OnnxImportError

# Activation name (lower case) -> (takes alpha, takes beta, default alpha, default beta), as
# onnxruntime reads them: alphas and betas are consumed in order by the activations that take one.
_ACTIVATION_ARGUMENTS = {
    "relu": (False, False, 0.0, 0.0),
    "tanh": (False, False, 0.0, 0.0),
    "sigmoid": (False, False, 0.0, 0.0),
    "softsign": (False, False, 0.0, 0.0),
    "softplus": (False, False, 0.0, 0.0),
    "affine": (True, True, 0.0, 0.0),
    "leakyrelu": (True, False, 0.01, 0.0),
    "thresholdedrelu": (True, False, 0.0, 0.0),
    "scaledtanh": (True, True, 0.0, 0.0),
    "hardsigmoid": (True, True, 0.2, 0.5),
    "elu": (True, False, 1.0, 0.0),
}


@dataclass(frozen=True)
class Cell:
    """What distinguishes LSTM, GRU and RNN: gate count, default activations, state inputs."""

    gates: int
    activations: tuple
    states: int  # hidden state (and cell state for LSTM)


LSTM = Cell(gates=4, activations=("Sigmoid", "Tanh", "Tanh"), states=2)
GRU = Cell(gates=3, activations=("Sigmoid", "Tanh"), states=1)
RNN = Cell(gates=1, activations=("Tanh",), states=1)


def _known_zero(value) -> bool:
    """Whether ``value`` is known at import time to be all zeros."""
    return isinstance(value, np.ndarray) and not value.any()


class _Graph:
    """Element-wise and data-movement helpers over one node's ``NodeBuilder``, in its element type."""

    def __init__(self, node: NodeBuilder, dtype):
        self.node = node
        self.dtype = dtype
        self.folded = {}

    def op(self, mnemonic, operands, attrs=None):
        (result,) = self.node.emit(mnemonic, operands, attrs)
        return self.unique(result) if isinstance(result, np.ndarray) else result

    def unique(self, array: np.ndarray) -> np.ndarray:
        """One array per distinct constant (the importer materializes each array once): equal masks and
        zero states of many steps are one constant, not one per step."""
        return self.folded.setdefault((array.dtype.str, array.shape, array.tobytes()), array)

    def scalar(self, value):
        """A 0-d constant of the node's element type."""
        return self.unique(np.asarray(value, self.dtype))

    def shape(self, value):
        return self.node.spec(value).shape

    def add(self, a, b):
        """a + b, or a itself when b is a known zero that does not widen a."""
        if _known_zero(b) and np.broadcast_shapes(self.shape(a), b.shape) == self.shape(a):
            return a
        return self.op("add", [a, b])

    def columns(self, value, start, stop):
        """``value[..., start:stop]``."""
        if (start, stop) == (0, self.shape(value)[-1]):
            return value
        return self.op("slice", [value], {"starts": [start], "ends": [stop], "axes": [len(self.shape(value)) - 1]})

    def rows(self, value, start, stop):
        """``value[start:stop]``."""
        return self.op("slice", [value], {"starts": [start], "ends": [stop], "axes": [0]})

    def index(self, value, axis, position):
        """``value[position]`` along ``axis``, that axis dropped."""
        shape = list(self.shape(value))
        sliced = self.op("slice", [value], {"starts": [position], "ends": [position + 1], "axes": [axis]})
        return self.op("reshape", [sliced], {"shape": shape[:axis] + shape[axis + 1 :]})

    def transposed(self, matrix):
        """``matrix``^T, folded at import for a constant (weights are multiplied as [K, N], so that
        the code generator packs them once, not each step)."""
        return self.op("transpose", [matrix], {"perm": [1, 0]})

    def matmul_plus(self, a, b, addend):
        """a @ b + addend (b: [K, N]); a known all-zero ``a`` (a zero initial state) costs nothing. The
        addend (a step's slice of the input projection, a bias) is added in the matmul's epilogue."""
        if _known_zero(a):
            return addend
        return self.add(self.op("mat_mul", [a, b]), addend)

    def concat(self, values, axis):
        """``values`` joined along ``axis`` by a balanced tree of (binary) ``ecg.concat``s."""
        if len(values) == 1:
            return values[0]
        half = len(values) // 2
        return self.op("concat", [self.concat(values[:half], axis), self.concat(values[half:], axis)], {"axis": axis})


@dataclass
class Activation:
    name: str
    alpha: float
    beta: float

    def __call__(self, graph: _Graph, x):
        """The activation of ``x`` in ECG ops."""
        simple = {"relu": "relu", "tanh": "tanh", "sigmoid": "sigmoid", "softsign": "softsign", "softplus": "softplus"}
        if self.name in simple:
            return graph.op(simple[self.name], [x])
        if self.name == "affine":
            return graph.op("add", [graph.op("mul", [x, graph.scalar(self.alpha)]), graph.scalar(self.beta)])
        if self.name == "scaledtanh":
            inner = graph.op("tanh", [graph.op("mul", [x, graph.scalar(self.beta)])])
            return graph.op("mul", [inner, graph.scalar(self.alpha)])
        if self.name == "thresholdedrelu":
            above = graph.op("greater", [x, graph.scalar(self.alpha)])
            return graph.op("where", [above, x, graph.scalar(0)])
        if self.name == "hardsigmoid":
            return graph.op("hard_sigmoid", [x], {"alpha": self.alpha, "beta": self.beta})
        if self.name == "leakyrelu":
            return graph.op("leaky_relu", [x], {"alpha": self.alpha})
        return graph.op("elu", [x], {"alpha": self.alpha})


def _activations(node: NodeBuilder, cell: Cell, directions: int) -> list:
    """Per direction, the cell's activations (f, g, h as the cell uses them) with their alpha and beta."""
    given = [name.decode() if isinstance(name, bytes) else name for name in node.attr("activations", [])]
    names = given or list(cell.activations * directions)
    per_direction = len(cell.activations)
    if len(names) == per_direction and directions == 2:
        names = names * 2  # one set given for both directions, as onnxruntime accepts
    if len(names) != per_direction * directions:
        raise OnnxImportError(
            f"{node.info}: 'activations' has {len(names)} entries, expected {per_direction} per direction "
            f"({per_direction * directions})"
        )
    alphas, betas = iter(node.attr("activation_alpha", [])), iter(node.attr("activation_beta", []))
    parsed = []
    for name in names:
        key = name.lower()
        if key not in _ACTIVATION_ARGUMENTS:
            raise OnnxImportError(
                f"{node.info}: activation '{name}' is not one of Affine, Relu, LeakyRelu, ThresholdedRelu, Tanh, "
                "ScaledTanh, Sigmoid, HardSigmoid, Elu, Softsign, Softplus"
            )
        takes_alpha, takes_beta, alpha, beta = _ACTIVATION_ARGUMENTS[key]
        alpha = next(alphas, alpha) if takes_alpha else alpha
        beta = next(betas, beta) if takes_beta else beta
        parsed.append(Activation(key, float(alpha), float(beta)))
    return [parsed[d * per_direction : (d + 1) * per_direction] for d in range(directions)]


@dataclass
class Direction:
    """One direction's weights and settings, as one step of the recurrence needs them."""

    recurrence: object  # R for this direction, [gates*hidden, hidden]
    recurrence_bias: object  # Rb, [gates*hidden]
    peepholes: object  # P, [3*hidden] or None
    activations: list
    clip: float | None
    hidden: int
    derived: dict = field(default_factory=dict)

    def once(self, key: str, make):
        """A value derived from the weights, built for the first step and reused by the others (a
        constant folded anew each step would be one more weight array each time)."""
        if key not in self.derived:
            self.derived[key] = make()
        return self.derived[key]

    def weights(self, graph: _Graph):
        """R^T, [hidden, gates*hidden]."""
        return self.once("weights", lambda: graph.transposed(self.recurrence))

    def gate_input(self, graph: _Graph, x):
        """``x`` clipped to [-clip, clip] when the node clips (before every gate activation)."""
        return x if self.clip is None else graph.op("clip", [x], {"min": -self.clip, "max": self.clip})


def _lstm_step(graph: _Graph, node: NodeBuilder, d: Direction, projected, states):
    """One LSTM step (gates i, o, f, c): the new hidden and cell states."""
    h_prev, c_prev = states
    f, g, h = d.activations
    size = d.hidden
    gates = graph.matmul_plus(h_prev, d.weights(graph), projected)
    i_in, o_in, f_in, c_in = (graph.columns(gates, k * size, (k + 1) * size) for k in range(4))
    if d.peepholes is not None:
        p_i, p_o, p_f = d.once("peepholes", lambda: [graph.columns(d.peepholes, k * size, (k + 1) * size)
                                                     for k in range(3)])
        i_in = graph.add(i_in, graph.op("mul", [p_i, c_prev]))
        f_in = graph.add(f_in, graph.op("mul", [p_f, c_prev]))
    i_gate = f(graph, d.gate_input(graph, i_in))
    if node.attr("input_forget", 0):
        f_gate = graph.op("sub", [graph.scalar(1), i_gate])
    else:
        f_gate = f(graph, d.gate_input(graph, f_in))
    candidate = g(graph, d.gate_input(graph, c_in))
    c_new = graph.add(graph.op("mul", [i_gate, candidate]), graph.op("mul", [f_gate, c_prev]))
    if d.peepholes is not None:
        o_in = graph.op("add", [o_in, graph.op("mul", [p_o, c_new])])
    o_gate = f(graph, d.gate_input(graph, o_in))
    return [graph.op("mul", [o_gate, h(graph, c_new)]), c_new]


def _gru_step(graph: _Graph, node: NodeBuilder, d: Direction, projected, states):
    """One GRU step (gates z, r, h): the new hidden state. ``projected`` holds Rb of z and r, and Rb of h
    unless linear_before_reset (then Rb_h is added to H R_h^T before the reset gate scales it)."""
    (h_prev,) = states
    f, g = d.activations
    size = d.hidden
    zr_weights = d.once("zr_weights", lambda: graph.transposed(graph.rows(d.recurrence, 0, 2 * size)))
    h_weights = d.once("h_weights", lambda: graph.transposed(graph.rows(d.recurrence, 2 * size, 3 * size)))
    zr = graph.matmul_plus(h_prev, zr_weights, graph.columns(projected, 0, 2 * size))
    z_gate = f(graph, d.gate_input(graph, graph.columns(zr, 0, size)))
    r_gate = f(graph, d.gate_input(graph, graph.columns(zr, size, 2 * size)))
    projected_h = graph.columns(projected, 2 * size, 3 * size)
    if node.attr("linear_before_reset", 0):
        h_bias = d.once("h_bias", lambda: graph.columns(d.recurrence_bias, 2 * size, 3 * size))
        recurrent_h = graph.matmul_plus(h_prev, h_weights, h_bias)
        h_in = graph.add(projected_h, graph.op("mul", [r_gate, recurrent_h]))
    else:
        reset = h_prev if _known_zero(h_prev) else graph.op("mul", [r_gate, h_prev])
        h_in = graph.matmul_plus(reset, h_weights, projected_h)
    candidate = g(graph, d.gate_input(graph, h_in))
    keep = graph.op("sub", [graph.scalar(1), z_gate])
    return [graph.add(graph.op("mul", [keep, candidate]), graph.op("mul", [z_gate, h_prev]))]


def _rnn_step(graph: _Graph, node: NodeBuilder, d: Direction, projected, states):
    """One RNN step: the new hidden state."""
    (h_prev,) = states
    (f,) = d.activations
    return [f(graph, d.gate_input(graph, graph.matmul_plus(h_prev, d.weights(graph), projected)))]


_STEPS = {LSTM: _lstm_step, GRU: _gru_step, RNN: _rnn_step}
_DIRECTIONS = {"forward": (False,), "reverse": (True,), "bidirectional": (False, True)}


def _input_bias(graph: _Graph, cell: Cell, node: NodeBuilder, bias, size: int):
    """The bias the input projection carries, per direction [gates*hidden]: Wb + Rb, except GRU's Rb_h
    under linear_before_reset (it is added inside the reset gate's product)."""
    gates = cell.gates * size
    input_bias, recurrence_bias = graph.columns(bias, 0, gates), graph.columns(bias, gates, 2 * gates)
    if cell is GRU and node.attr("linear_before_reset", 0):
        recurrence_bias = graph.columns(recurrence_bias, 0, 2 * size)
        zeros = np.zeros((graph.shape(bias)[0], size), graph.dtype)
        recurrence_bias = graph.concat([recurrence_bias, zeros], 1)
    return graph.add(input_bias, recurrence_bias)


def _check_shape(node: NodeBuilder, graph: _Graph, value, what: str, expected: tuple):
    if tuple(graph.shape(value)) != expected:
        raise OnnxImportError(f"{node.info}: {what} has shape {list(graph.shape(value))}, expected {list(expected)}")


def _zero_empty_sequences(graph: _Graph, lengths, states) -> list:
    """The final states of sequences of length 0 are zero (not the initial state), as in onnxruntime."""
    started = graph.op("greater", [lengths, np.zeros((), graph.node.spec(lengths).dtype)])
    if isinstance(started, np.ndarray) and started.all():
        return states
    started = graph.op("reshape", [started], {"shape": [graph.shape(lengths)[0], 1]})
    return [graph.op("where", [started, state, graph.scalar(0)]) for state in states]


@dataclass
class _Operands:
    """A recurrent node's operands in layout 0, checked against each other."""

    x: object  # [seq, batch, features]
    weights: object  # W [directions, gates*hidden, features]
    recurrence: object  # R [directions, gates*hidden, hidden]
    bias: object  # B [directions, 2*gates*hidden]
    lengths: object  # sequence_lens [batch] or None
    initial: list  # initial_h (and initial_c), [directions, batch, hidden] each
    peepholes: object  # P [directions, 3*hidden] or None
    hidden: int


def _operands(node: NodeBuilder, graph: _Graph, cell: Cell, directions: int) -> _Operands:
    layout = node.attr("layout", 0)
    x = node.operand(0)
    if len(graph.shape(x)) != 3:
        raise OnnxImportError(f"{node.info}: X must have rank 3, got shape {list(graph.shape(x))}")
    if layout:
        x = graph.op("transpose", [x], {"perm": [1, 0, 2]})
    _, batch, features = graph.shape(x)
    weights, recurrence = node.operand(1), node.operand(2)
    size = node.attr("hidden_size", graph.shape(recurrence)[-1])
    gates = cell.gates * size
    _check_shape(node, graph, weights, "W", (directions, gates, features))
    _check_shape(node, graph, recurrence, "R", (directions, gates, size))
    bias = node.operand(3) if node.has_input(3) else np.zeros((directions, 2 * gates), graph.dtype)
    _check_shape(node, graph, bias, "B", (directions, 2 * gates))
    lengths = node.operand(4) if node.has_input(4) else None
    if lengths is not None:
        _check_shape(node, graph, lengths, "sequence_lens", (batch,))
    initial = []
    for index in range(5, 5 + cell.states):
        state = node.operand(index) if node.has_input(index) else np.zeros((directions, batch, size), graph.dtype)
        if layout and node.has_input(index):
            state = graph.op("transpose", [state], {"perm": [1, 0, 2]})
        _check_shape(node, graph, state, f"input {index} (initial state)", (directions, batch, size))
        initial.append(state)
    peepholes = node.operand(7) if cell is LSTM and node.has_input(7) else None
    if peepholes is not None:
        _check_shape(node, graph, peepholes, "P", (directions, 3 * size))
    return _Operands(x, weights, recurrence, bias, lengths, initial, peepholes, size)


def _project_inputs(node: NodeBuilder, graph: _Graph, cell: Cell, ops: _Operands, directions: int):
    """X W^T + biases for every step and direction in one matmul: [seq, batch, directions*gates*hidden]."""
    seq, batch, features = graph.shape(ops.x)
    gates = cell.gates * ops.hidden
    flat = graph.op("reshape", [ops.x], {"shape": [seq * batch, features]})
    stacked = graph.op("reshape", [ops.weights], {"shape": [directions * gates, features]})
    bias = graph.op("reshape", [_input_bias(graph, cell, node, ops.bias, ops.hidden)], {"shape": [directions * gates]})
    projected = graph.op("gemm", [flat, graph.transposed(stacked)] + ([] if _known_zero(bias) else [bias]))
    return graph.op("reshape", [projected], {"shape": [seq, batch, directions * gates]})


def _run_direction(node: NodeBuilder, graph: _Graph, cell: Cell, ops: _Operands, d: int, backwards: bool,
                   projected, activations: list):
    """The steps of direction ``d``: each step's hidden state (zero past a sequence's end) in time order, and
    the final states."""
    seq, batch, _ = graph.shape(ops.x)
    gates = cell.gates * ops.hidden
    clip = node.attr("clip")
    direction = Direction(
        recurrence=graph.index(ops.recurrence, 0, d),
        recurrence_bias=graph.columns(graph.index(ops.bias, 0, d), gates, 2 * gates),
        peepholes=None if ops.peepholes is None else graph.index(ops.peepholes, 0, d),
        activations=activations,
        clip=None if clip is None else float(clip),
        hidden=ops.hidden,
    )
    states = [graph.index(state, 0, d) for state in ops.initial]
    steps = [None] * seq
    for t in reversed(range(seq)) if backwards else range(seq):
        step_input = graph.columns(graph.index(projected, 0, t), d * gates, (d + 1) * gates)
        new_states = _STEPS[cell](graph, node, direction, step_input, states)
        valid = None
        if ops.lengths is not None:
            valid = graph.op("less", [np.asarray(t, node.spec(ops.lengths).dtype), ops.lengths])
        if valid is None or (isinstance(valid, np.ndarray) and valid.all()):
            states, steps[t] = new_states, new_states[0]
            continue
        valid = graph.op("reshape", [valid], {"shape": [batch, 1]})
        states = [graph.op("where", [valid, new, graph.scalar(0) if _known_zero(old) else old])
                  for new, old in zip(new_states, states)]
        steps[t] = graph.op("where", [valid, new_states[0], graph.scalar(0)])
    if ops.lengths is not None:
        states = _zero_empty_sequences(graph, ops.lengths, states)
    return steps, states


def _convert(node: NodeBuilder, cell: Cell) -> list:
    direction = node.attr("direction", "forward")
    if direction not in _DIRECTIONS:
        raise OnnxImportError(f"{node.info}: direction '{direction}' is not forward, reverse or bidirectional")
    directions = len(_DIRECTIONS[direction])
    graph = _Graph(node, node.spec(node.operand(0)).dtype)
    ops = _operands(node, graph, cell, directions)
    activations = _activations(node, cell, directions)
    projected = _project_inputs(node, graph, cell, ops, directions)
    _, batch, _ = graph.shape(ops.x)
    sequences, finals = [], []
    for d, backwards in enumerate(_DIRECTIONS[direction]):
        steps, states = _run_direction(node, graph, cell, ops, d, backwards, projected, activations[d])
        sequences.append([graph.op("reshape", [h], {"shape": [1, 1, batch, ops.hidden]}) for h in steps])
        finals.append([graph.op("reshape", [s], {"shape": [1, batch, ops.hidden]}) for s in states])

    layout = node.attr("layout", 0)
    outputs = []
    for index in range(1 + cell.states):
        if index >= len(node.node.output) or not node.node.output[index]:
            outputs.append(UnsupportedOutput(f"{node.info}: output {index} is not produced"))
        elif index == 0:  # Y [seq, directions, batch, hidden]
            y = graph.concat([graph.concat(steps, 0) for steps in sequences], 1)
            outputs.append(graph.op("transpose", [y], {"perm": [2, 0, 1, 3]}) if layout else y)
        else:  # Y_h, Y_c [directions, batch, hidden]
            state = graph.concat([per_direction[index - 1] for per_direction in finals], 0)
            outputs.append(graph.op("transpose", [state], {"perm": [1, 0, 2]}) if layout else state)
    return outputs


RECURRENT_CONVERTERS = {"LSTM": partial(_convert, cell=LSTM), "GRU": partial(_convert, cell=GRU),
                        "RNN": partial(_convert, cell=RNN)}
