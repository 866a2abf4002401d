"""One time step of LSTM, GRU and RNN written once, in ECG ops, over any ``emitter``.

The same step is the recurrence ops' reference semantics (on numpy arrays), the body
of their loop when lowered to linalg (ECG ops built inside the loop, then lowered) and
what the GPU targets unroll the loop into, so the three cannot drift apart. An emitter
has ``emit(mnemonic, operands, attrs) -> [results]`` and ``spec(value) -> TensorSpec``;
operands are its values or numpy arrays (constants; an op of constants only is folded).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._mlir import ir
from .attributes import Elements
from .base import OPS
from .tensor_spec import TensorSpec, from_mlir


@dataclass(frozen=True)
class Cell:
    """What distinguishes LSTM, GRU and RNN: gate count, default activations, state count."""

    name: str
    gates: int
    activations: tuple
    states: int  # hidden state (and cell state for LSTM)


LSTM = Cell(name="lstm", gates=4, activations=("Sigmoid", "Tanh", "Tanh"), states=2)
GRU = Cell(name="gru", gates=3, activations=("Sigmoid", "Tanh"), states=1)
RNN = Cell(name="rnn", gates=1, activations=("Tanh",), states=1)
CELLS = {cell.name: cell for cell in (LSTM, GRU, RNN)}

# Activation name (lower case) -> (takes alpha, takes beta, default alpha, default beta), as
# onnxruntime reads them: alphas and betas are consumed in order by the activations that take one.
ACTIVATION_ARGUMENTS = {
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


def known_zero(value) -> bool:
    """Whether ``value`` is known (a constant) to be all zeros."""
    return isinstance(value, np.ndarray) and not value.any()


def zeros_if_constant(value):
    """``value`` as a numpy array when an ``ecg.constant`` or ``arith.constant`` makes it all zeros
    (no peepholes, a zero initial state: a step then skips their arithmetic), else ``value``."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name not in ("ecg.constant", "arith.constant"):
        return value
    attr = owner.attributes["value"]
    if not isinstance(attr, ir.DenseElementsAttr):
        return value
    array = Elements.from_attr(attr)
    return value if array.any() else array


class ArrayEmitter:
    """Runs each op's reference semantics on numpy arrays: the interpreter's view of a step."""

    @staticmethod
    def emit(mnemonic: str, operands: list, attrs: dict | None = None) -> list:
        cls = OPS[mnemonic]
        specs = [TensorSpec.of(v) for v in operands]
        attrs = cls.complete_attrs(specs, attrs or {})
        results = cls.infer(specs, attrs)
        return [np.asarray(v, dtype=r.dtype).reshape(r.shape) for v, r in zip(cls.reference(operands, attrs, results), results)]

    @staticmethod
    def spec(value) -> TensorSpec:
        return TensorSpec.of(value)


class OpEmitter:
    """Builds ECG ops at the current insertion point (constants as ``ecg.constant``, one per
    distinct array and block, so that each dominates its uses; ops of constants only folded):
    a step in the IR, in a loop or unrolled."""

    def __init__(self):
        self.constants = {}

    def emit(self, mnemonic: str, operands: list, attrs: dict | None = None) -> list:
        if all(isinstance(v, np.ndarray) for v in operands):
            return ArrayEmitter.emit(mnemonic, operands, attrs)
        values = [self.constant(v) if isinstance(v, np.ndarray) else v for v in operands]
        return list(OPS[mnemonic].build(values, attrs).operation.results)

    def constant(self, array: np.ndarray):
        key = (id(array), ir.InsertionPoint.current.block)
        if key not in self.constants:
            self.constants[key] = (OPS["constant"].build([], {"value": array}).output, array)
        return self.constants[key][0]

    @staticmethod
    def spec(value) -> TensorSpec:
        return TensorSpec.of(value) if isinstance(value, np.ndarray) else from_mlir(value.type)


class StepGraph:
    """Element-wise and data-movement helpers over an emitter, in one element type."""

    def __init__(self, emitter, dtype):
        self.emitter = emitter
        self.dtype = dtype
        self.folded = {}

    def op(self, mnemonic, operands, attrs=None):
        (result,) = self.emitter.emit(mnemonic, operands, attrs)
        return self.unique(result) if isinstance(result, np.ndarray) else result

    def unique(self, array: np.ndarray) -> np.ndarray:
        """One array per distinct constant (each array becomes one constant): equal masks and
        zero states of many steps are one constant, not one per step."""
        return self.folded.setdefault((array.dtype.str, array.shape, array.tobytes()), array)

    def scalar(self, value):
        """A 0-d constant of the graph's element type."""
        return self.unique(np.asarray(value, self.dtype))

    def shape(self, value):
        return self.emitter.spec(value).shape

    def add(self, a, b):
        """a + b, or a itself when b is a known zero that does not widen a."""
        if known_zero(b) and np.broadcast_shapes(self.shape(a), b.shape) == self.shape(a):
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
        """``matrix``^T, folded for a constant (weights are multiplied as [K, N], so that the code
        generator packs them once)."""
        return self.op("transpose", [matrix], {"perm": [1, 0]})

    def matmul_plus(self, a, b, addend):
        """a @ b + addend (b: [K, N]); a known all-zero ``a`` (a zero initial state) costs nothing. The
        addend (a step's slice of the input projection, a bias) is added in the matmul's epilogue."""
        if known_zero(a):
            return addend
        return self.add(self.op("mat_mul", [a, b]), addend)

    def concat(self, values, axis):
        """``values`` joined along ``axis`` by a balanced tree of (binary) ``ecg.concat``s."""
        if len(values) == 1:
            return values[0]
        half = len(values) // 2
        return self.op("concat", [self.concat(values[:half], axis), self.concat(values[half:], axis)], {"axis": axis})


@dataclass(frozen=True)
class Activation:
    name: str  # lower case, a key of ACTIVATION_ARGUMENTS
    alpha: float
    beta: float

    def __call__(self, graph: StepGraph, x):
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


@dataclass
class Direction:
    """One direction's weights and settings, as one step of the recurrence needs them."""

    cell: Cell
    recurrence: object  # R for this direction, [gates*hidden, hidden]
    recurrence_bias: object  # GRU's Rb, [gates*hidden], or None
    peepholes: object  # LSTM's P, [3*hidden], or None
    activations: list
    clip: float | None
    hidden: int
    input_forget: bool = False
    linear_before_reset: bool = False
    derived: dict = field(default_factory=dict)

    def once(self, key: str, make):
        """A value derived from the weights, built for the first step and reused by the others (in a
        loop: built before it)."""
        if key not in self.derived:
            self.derived[key] = make()
        return self.derived[key]

    def weights(self, graph: StepGraph):
        """R^T, [hidden, gates*hidden]."""
        return self.once("weights", lambda: graph.transposed(self.recurrence))

    def gate_input(self, graph: StepGraph, x):
        """``x`` clipped to [-clip, clip] when the node clips (before every gate activation)."""
        return x if self.clip is None else graph.op("clip", [x], {"min": -self.clip, "max": self.clip})

    def prepare(self, graph: StepGraph):
        """Build what every step shares (R^T, its row blocks, the peephole columns) now."""
        size = self.hidden
        if self.cell is LSTM:
            self.weights(graph)
            if self.peepholes is not None:
                self.once("peepholes", lambda: [graph.columns(self.peepholes, k * size, (k + 1) * size)
                                                for k in range(3)])
        elif self.cell is GRU:
            self.once("zr_weights", lambda: graph.transposed(graph.rows(self.recurrence, 0, 2 * size)))
            self.once("h_weights", lambda: graph.transposed(graph.rows(self.recurrence, 2 * size, 3 * size)))
            if self.linear_before_reset:
                self.once("h_bias", lambda: graph.columns(self.recurrence_bias, 2 * size, 3 * size))
        else:
            self.weights(graph)

    def step(self, graph: StepGraph, projected, states) -> list:
        """One step from this step's input projection ([batch, gates*hidden]): the new states."""
        return {LSTM: _lstm_step, GRU: _gru_step, RNN: _rnn_step}[self.cell](graph, self, projected, states)

    def masked_step(self, graph: StepGraph, projected, states, valid):
        """``step``, its new states kept only where ``valid`` ([batch] booleans, None: everywhere):
        past a sequence's length its state holds and its output is zero. Returns (states, output)."""
        new_states = self.step(graph, projected, states)
        if valid is None or (isinstance(valid, np.ndarray) and valid.all()):
            return new_states, new_states[0]
        valid = graph.op("reshape", [valid], {"shape": [graph.shape(valid)[0], 1]})
        states = [graph.op("where", [valid, new, graph.scalar(0) if known_zero(old) else old])
                  for new, old in zip(new_states, states)]
        return states, graph.op("where", [valid, new_states[0], graph.scalar(0)])


def _lstm_step(graph: StepGraph, d: Direction, projected, states):
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
    if d.input_forget:
        f_gate = graph.op("sub", [graph.scalar(1), i_gate])
    else:
        f_gate = f(graph, d.gate_input(graph, f_in))
    candidate = g(graph, d.gate_input(graph, c_in))
    c_new = graph.add(graph.op("mul", [i_gate, candidate]), graph.op("mul", [f_gate, c_prev]))
    if d.peepholes is not None:
        o_in = graph.op("add", [o_in, graph.op("mul", [p_o, c_new])])
    o_gate = f(graph, d.gate_input(graph, o_in))
    return [graph.op("mul", [o_gate, h(graph, c_new)]), c_new]


def _gru_step(graph: StepGraph, d: Direction, projected, states):
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
    if d.linear_before_reset:
        h_bias = d.once("h_bias", lambda: graph.columns(d.recurrence_bias, 2 * size, 3 * size))
        recurrent_h = graph.matmul_plus(h_prev, h_weights, h_bias)
        h_in = graph.add(projected_h, graph.op("mul", [r_gate, recurrent_h]))
    else:
        reset = h_prev if known_zero(h_prev) else graph.op("mul", [r_gate, h_prev])
        h_in = graph.matmul_plus(reset, h_weights, projected_h)
    candidate = g(graph, d.gate_input(graph, h_in))
    keep = graph.op("sub", [graph.scalar(1), z_gate])
    return [graph.add(graph.op("mul", [keep, candidate]), graph.op("mul", [z_gate, h_prev]))]


def _rnn_step(graph: StepGraph, d: Direction, projected, states):
    """One RNN step: the new hidden state."""
    (h_prev,) = states
    (f,) = d.activations
    return [f(graph, d.gate_input(graph, graph.matmul_plus(h_prev, d.weights(graph), projected)))]


def zero_empty_sequences(graph: StepGraph, lengths, states) -> list:
    """The final states of sequences of length 0 are zero (not the initial state), as in onnxruntime."""
    started = graph.op("greater", [lengths, np.zeros((), graph.emitter.spec(lengths).dtype)])
    if isinstance(started, np.ndarray) and started.all():
        return states
    started = graph.op("reshape", [started], {"shape": [graph.shape(lengths)[0], 1]})
    return [graph.op("where", [started, state, graph.scalar(0)]) for state in states]


def unrolled(graph: StepGraph, direction: Direction, projected, states: list, lengths, reverse: bool) -> list:
    """The whole recurrence, step by step ([seq, batch, gates*hidden] projected inputs, [batch] lengths or
    None): [every step's hidden state, [seq, batch, hidden]; the final states]."""
    seq, batch, _ = graph.shape(projected)
    direction.prepare(graph)
    outputs = [None] * seq
    for t in reversed(range(seq)) if reverse else range(seq):
        valid = None if lengths is None else graph.op("less", [np.asarray(t, graph.emitter.spec(lengths).dtype), lengths])
        states, output = direction.masked_step(graph, graph.index(projected, 0, t), states, valid)
        outputs[t] = graph.op("reshape", [output], {"shape": [1, batch, direction.hidden]})
    if lengths is not None:
        states = zero_empty_sequences(graph, lengths, states)
    return [graph.concat(outputs, 0), *states]
