"""Many-to-Many recurrences: one direction of ONNX's LSTM, GRU and RNN as a loop over the time steps.

The importer projects the inputs of every step (X W^T + biases, one gemm for all steps and
directions); each op here is the rest, one direction: a loop whose step is a small matmul of
the previous hidden state with R^T plus that step's projection, followed by the gate
epilogue (``recurrent_cells``: the step in ECG ops, which is also what the op means, lowers
to and unrolls into). ``reverse`` runs the steps backwards; ``lengths`` (sequence_lens,
optional) masks a step: past a sequence's length its state holds and its output is zero,
and the final states of an empty sequence are zero. Activations are named in lower case,
comma-separated, with one alpha and beta each; ``clip`` is infinite when the node does not
clip. Results: every step's hidden state [seq, batch, hidden], then the final states.
"""


import math
from typing import Optional

import numpy as np

from ..attributes import Elements, Float, Int, Str
from ..base import ECGOp, Tensor, TensorResult
from ..properties import MappingType
from ..recurrent_cells import ACTIVATION_ARGUMENTS, GRU, LSTM, RNN, Activation, ArrayEmitter, Direction, StepGraph, \
    known_zero, unrolled
from ..shapes import require
from ..tensor_spec import TensorSpec, element_kind


class _RecurrenceBase(ECGOp):
    """What the three cells' loops share: checks, FLOPs and the reference loop."""

    MAPPING = MappingType.MANY_TO_MANY
    DEFAULTS = {"clip": math.inf, "reverse": 0}
    CELL = None

    @classmethod
    def default_attrs(cls, operands):
        activations = ",".join(name.lower() for name in cls.CELL.activations)
        count = len(cls.CELL.activations)
        return {**cls.DEFAULTS, "activations": activations, "activation_alpha": np.zeros(count),
                "activation_beta": np.zeros(count)}

    @classmethod
    def operand_roles(cls, operands: list) -> dict:
        """Operands by field name (``lengths`` is the optional last one)."""
        names = cls.OPERANDS[: len(operands)]
        return dict(zip(names, operands))

    @classmethod
    def infer(cls, operands, attrs):
        require(len(operands) in (len(cls.OPERANDS) - 1, len(cls.OPERANDS)),
                f"expects {', '.join(cls.OPERANDS)} (the last optional), got {len(operands)} operands")
        roles = cls.operand_roles(list(operands))
        projected, recurrence = roles["projected"], roles["recurrence"]
        require(element_kind(projected.dtype) == "f", f"projected inputs must be floats, got {projected}")
        require(projected.rank == 3, f"projected inputs must be [seq, batch, gates*hidden], got {projected}")
        seq, batch, width = projected.shape
        require(recurrence.rank == 2 and recurrence.shape[0] == width == cls.CELL.gates * recurrence.shape[1],
                f"R must be [{cls.CELL.gates}*hidden, hidden] with {width} rows, got {recurrence}")
        hidden = recurrence.shape[1]
        expected = {"initial_h": (batch, hidden), "initial_c": (batch, hidden), "peepholes": (3 * hidden,),
                    "recurrence_bias": (width,), "lengths": (batch,)}
        for name, spec in roles.items():
            if name in expected:
                require(spec.shape == expected[name], f"{name} must have shape {list(expected[name])}, got {spec}")
            if name != "lengths":
                require(spec.dtype == projected.dtype, f"{name} must be {projected.dtype}, got {spec}")
        if "lengths" in roles:
            require(element_kind(roles["lengths"].dtype) == "i", f"lengths must be integers, got {roles['lengths']}")
        names = attrs["activations"].split(",")
        require(len(names) == len(cls.CELL.activations),
                f"needs {len(cls.CELL.activations)} activations, got '{attrs['activations']}'")
        unknown = [name for name in names if name not in ACTIVATION_ARGUMENTS]
        require(not unknown, f"activation '{', '.join(unknown)}' is not one of {', '.join(ACTIVATION_ARGUMENTS)}")
        for key in ("activation_alpha", "activation_beta"):
            require(np.shape(attrs[key]) == (len(names),), f"{key} needs one value per activation")
        require(attrs["clip"] > 0, f"clip must be positive, got {attrs['clip']}")
        states = [TensorSpec((batch, hidden), projected.dtype)] * cls.CELL.states
        return [TensorSpec((seq, batch, hidden), projected.dtype), *states]

    @classmethod
    def count_flops(cls, operands, results, attrs):
        seq, batch, width = operands[0].shape
        hidden = results[0].shape[2]
        return seq * batch * width * (2 * hidden + 6)

    @classmethod
    def direction(cls, attrs: dict, roles: dict, hidden: int) -> Direction:
        """The step's settings from the op's attributes and (array or IR) operands."""
        names = attrs["activations"].split(",")
        activations = [Activation(name, float(alpha), float(beta))
                       for name, alpha, beta in zip(names, attrs["activation_alpha"], attrs["activation_beta"])]
        return Direction(
            cell=cls.CELL, recurrence=roles["recurrence"], recurrence_bias=roles.get("recurrence_bias"),
            peepholes=None if known_zero(roles.get("peepholes")) else roles.get("peepholes"), activations=activations,
            clip=None if math.isinf(attrs["clip"]) else attrs["clip"], hidden=hidden,
            input_forget=bool(attrs.get("input_forget", 0)), linear_before_reset=bool(attrs.get("linear_before_reset", 0)),
        )

    @classmethod
    def reference(cls, inputs, attrs, results):
        graph = StepGraph(ArrayEmitter, results[0].dtype)
        return cls.unrolled(graph, cls.operand_roles(list(inputs)), attrs, results[0].shape[2])

    @classmethod
    def unrolled(cls, graph: StepGraph, roles: dict, attrs: dict, hidden: int) -> list:
        """The recurrence step by step in ``graph``'s emitter: its results."""
        states = [roles[name] for name in ("initial_h", "initial_c")[: cls.CELL.states]]
        return unrolled(graph, cls.direction(attrs, roles, hidden), roles["projected"], states, roles.get("lengths"),
                        bool(attrs["reverse"]))


class LstmRecurrenceOp(_RecurrenceBase, name="lstm_recurrence"):
    """One direction of an LSTM (gates i, o, f, c; peepholes P [3*hidden], zero when absent) over
    projected inputs [seq, batch, 4*hidden]."""

    projected: Tensor
    recurrence: Tensor
    peepholes: Tensor
    initial_h: Tensor
    initial_c: Tensor
    lengths: Optional[Tensor]
    output: TensorResult
    final_h: TensorResult
    final_c: TensorResult
    activations: Str
    activation_alpha: Elements
    activation_beta: Elements
    clip: Float
    reverse: Int
    input_forget: Int
    CELL = LSTM
    ONNX = ("LSTM",)  # with the gemm of the input projections
    OPERANDS = ("projected", "recurrence", "peepholes", "initial_h", "initial_c", "lengths")
    DEFAULTS = {**_RecurrenceBase.DEFAULTS, "input_forget": 0}


class GruRecurrenceOp(_RecurrenceBase, name="gru_recurrence"):
    """One direction of a GRU (gates z, r, h) over projected inputs [seq, batch, 3*hidden] (which hold
    Rb but Rb_h under linear_before_reset: that one is ``recurrence_bias``'s last third)."""

    projected: Tensor
    recurrence: Tensor
    recurrence_bias: Tensor
    initial_h: Tensor
    lengths: Optional[Tensor]
    output: TensorResult
    final_h: TensorResult
    activations: Str
    activation_alpha: Elements
    activation_beta: Elements
    clip: Float
    reverse: Int
    linear_before_reset: Int
    CELL = GRU
    ONNX = ("GRU",)
    OPERANDS = ("projected", "recurrence", "recurrence_bias", "initial_h", "lengths")
    DEFAULTS = {**_RecurrenceBase.DEFAULTS, "linear_before_reset": 0}


class RnnRecurrenceOp(_RecurrenceBase, name="rnn_recurrence"):
    """One direction of a simple RNN over projected inputs [seq, batch, hidden]."""

    projected: Tensor
    recurrence: Tensor
    initial_h: Tensor
    lengths: Optional[Tensor]
    output: TensorResult
    final_h: TensorResult
    activations: Str
    activation_alpha: Elements
    activation_beta: Elements
    clip: Float
    reverse: Int
    CELL = RNN
    ONNX = ("RNN",)
    OPERANDS = ("projected", "recurrence", "initial_h", "lengths")


# The recurrence ops by full name.
RECURRENCES = {cls.OPERATION_NAME: cls for cls in (LstmRecurrenceOp, GruRecurrenceOp, RnnRecurrenceOp)}
