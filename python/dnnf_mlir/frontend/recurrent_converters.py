"""ONNX's recurrent layers (LSTM, GRU, RNN) as ECG ops: one input projection, then a loop per direction.

The input projections of every time step and direction are one ``gemm``
(X[seq*batch, in] x W^T, both directions' weights stacked, biases added); each direction
is then one ``ecg.lstm_recurrence`` / ``gru_recurrence`` / ``rnn_recurrence`` (a loop whose
step is a small matmul with R^T plus the gate epilogue, see ``ecg/ops/recurrent.py``), so
the graph, and the compile time, do not grow with the sequence length. The directions'
outputs are joined into ONNX's Y, Y_h and Y_c, laid out as ``layout`` says.
"""

from dataclasses import dataclass
from functools import partial

import numpy as np

from ..ecg.recurrent_cells import ACTIVATION_ARGUMENTS, GRU, LSTM, RNN, Cell, StepGraph, known_zero
from .node_builder import NodeBuilder, UnsupportedOutput
from .onnx_types import OnnxImportError


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
        if key not in ACTIVATION_ARGUMENTS:
            raise OnnxImportError(
                f"{node.info}: activation '{name}' is not one of Affine, Relu, LeakyRelu, ThresholdedRelu, Tanh, "
                "ScaledTanh, Sigmoid, HardSigmoid, Elu, Softsign, Softplus"
            )
        takes_alpha, takes_beta, alpha, beta = ACTIVATION_ARGUMENTS[key]
        alpha = next(alphas, alpha) if takes_alpha else alpha
        beta = next(betas, beta) if takes_beta else beta
        parsed.append((key, float(alpha), float(beta)))
    return [_activation_attrs(parsed[d * per_direction : (d + 1) * per_direction]) for d in range(directions)]


def _activation_attrs(activations: list) -> dict:
    """A recurrence op's attributes naming its (name, alpha, beta) activations."""
    names, alphas, betas = zip(*activations)
    return {"activations": ",".join(names), "activation_alpha": np.array(alphas), "activation_beta": np.array(betas)}


_DIRECTIONS = {"forward": (False,), "reverse": (True,), "bidirectional": (False, True)}


def _input_bias(graph: StepGraph, cell: Cell, node: NodeBuilder, bias, size: int):
    """The bias the input projection carries, per direction [gates*hidden]: Wb + Rb, except GRU's Rb_h
    under linear_before_reset (it is added inside the reset gate's product)."""
    gates = cell.gates * size
    input_bias, recurrence_bias = graph.columns(bias, 0, gates), graph.columns(bias, gates, 2 * gates)
    if cell is GRU and node.attr("linear_before_reset", 0):
        recurrence_bias = graph.columns(recurrence_bias, 0, 2 * size)
        zeros = np.zeros((graph.shape(bias)[0], size), graph.dtype)
        recurrence_bias = graph.concat([recurrence_bias, zeros], 1)
    return graph.add(input_bias, recurrence_bias)


def _check_shape(node: NodeBuilder, graph: StepGraph, value, what: str, expected: tuple):
    if tuple(graph.shape(value)) != expected:
        raise OnnxImportError(f"{node.info}: {what} has shape {list(graph.shape(value))}, expected {list(expected)}")


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


def _operands(node: NodeBuilder, graph: StepGraph, cell: Cell, directions: int) -> _Operands:
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


def _project_inputs(node: NodeBuilder, graph: StepGraph, cell: Cell, ops: _Operands, directions: int):
    """X W^T + biases for every step and direction in one matmul: [seq, batch, directions*gates*hidden]."""
    seq, batch, features = graph.shape(ops.x)
    gates = cell.gates * ops.hidden
    flat = graph.op("reshape", [ops.x], {"shape": [seq * batch, features]})
    stacked = graph.op("reshape", [ops.weights], {"shape": [directions * gates, features]})
    bias = graph.op("reshape", [_input_bias(graph, cell, node, ops.bias, ops.hidden)], {"shape": [directions * gates]})
    projected = graph.op("gemm", [flat, graph.transposed(stacked)] + ([] if known_zero(bias) else [bias]))
    return graph.op("reshape", [projected], {"shape": [seq, batch, directions * gates]})


def _recurrence(node: NodeBuilder, graph: StepGraph, cell: Cell, ops: _Operands, d: int, projected, attrs: dict):
    """Direction ``d`` as one recurrence op: [every step's hidden state, the final states]."""
    gates = cell.gates * ops.hidden
    clip = node.attr("clip")
    if clip is not None:
        attrs["clip"] = float(clip)
    operands = [graph.columns(projected, d * gates, (d + 1) * gates), graph.index(ops.recurrence, 0, d)]
    if cell is LSTM:
        attrs["input_forget"] = node.attr("input_forget", 0)
        operands.append(np.zeros(3 * ops.hidden, graph.dtype) if ops.peepholes is None
                        else graph.index(ops.peepholes, 0, d))
    if cell is GRU:
        attrs["linear_before_reset"] = node.attr("linear_before_reset", 0)
        operands.append(graph.columns(graph.index(ops.bias, 0, d), gates, 2 * gates))
    operands += [graph.index(state, 0, d) for state in ops.initial]
    if ops.lengths is not None:
        operands.append(ops.lengths)
    return node.emit(f"{cell.name}_recurrence", operands, attrs)


def _convert(node: NodeBuilder, cell: Cell) -> list:
    direction = node.attr("direction", "forward")
    if direction not in _DIRECTIONS:
        raise OnnxImportError(f"{node.info}: direction '{direction}' is not forward, reverse or bidirectional")
    directions = len(_DIRECTIONS[direction])
    graph = StepGraph(node, node.spec(node.operand(0)).dtype)
    ops = _operands(node, graph, cell, directions)
    activations = _activations(node, cell, directions)
    projected = _project_inputs(node, graph, cell, ops, directions)
    seq, batch, _ = graph.shape(ops.x)
    sequences, finals = [], []
    for d, backwards in enumerate(_DIRECTIONS[direction]):
        attrs = {**activations[d], "reverse": int(backwards)}
        output, *states = _recurrence(node, graph, cell, ops, d, projected, attrs)
        sequences.append(graph.op("reshape", [output], {"shape": [seq, 1, batch, ops.hidden]}))
        finals.append([graph.op("reshape", [s], {"shape": [1, batch, ops.hidden]}) for s in states])

    layout = node.attr("layout", 0)
    outputs = []
    for index in range(1 + cell.states):
        if index >= len(node.node.output) or not node.node.output[index]:
            outputs.append(UnsupportedOutput(f"{node.info}: output {index} is not produced"))
        elif index == 0:  # Y [seq, directions, batch, hidden]
            y = graph.concat(sequences, 1)
            outputs.append(graph.op("transpose", [y], {"perm": [2, 0, 1, 3]}) if layout else y)
        else:  # Y_h, Y_c [directions, batch, hidden]
            state = graph.concat([per_direction[index - 1] for per_direction in finals], 0)
            outputs.append(graph.op("transpose", [state], {"perm": [1, 0, 2]}) if layout else state)
    return outputs


RECURRENT_CONVERTERS = {"LSTM": partial(_convert, cell=LSTM), "GRU": partial(_convert, cell=GRU),
                        "RNN": partial(_convert, cell=RNN)}
