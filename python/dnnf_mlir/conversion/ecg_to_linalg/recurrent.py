"""The recurrence ops (``ecg.lstm_recurrence``, ``gru_recurrence``, ``rnn_recurrence``) as an scf.for
over the time steps.

The loop carries the output sequence and the states; its body is the cell's step
(``recurrent_cells``) built as ECG ops on the step's slice of the projected inputs, which
this conversion then lowers like any other (the step's small matmul and its gate epilogue,
which the CPU schedules pick up). What every step shares (R^T, its row blocks) is built
before the loop, once. The IR no longer grows with the sequence length.
"""

from ... import _mlir
from ..._mlir import arith, ir
from ...ecg.recurrent_cells import OpEmitter, StepGraph, zero_empty_sequences, zeros_if_constant
from ...kernel_functions import TIME_STEPS
from ...linalg_builders import element_of
from .builders import empty, index, shape_of
from .registry import lowers


def _step_index(iv, seq: int, reverse: bool):
    """The time step of iteration ``iv``: ``iv``, or ``seq - 1 - iv`` backwards."""
    return arith.subi(index(seq - 1), iv) if reverse else iv


def _slice_at(value, step, shape):
    """``value[step]`` ([seq, *shape] -> shape), ``step`` an index value."""
    tensor = _mlir.tensor
    rank = len(shape) + 1
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    result = ir.RankedTensorType.get(list(shape), element_of(value))
    return tensor.ExtractSliceOp(result, value, [step], [], [], [dynamic] + [0] * (rank - 1),
                                 [1] + list(shape), [1] * rank).result


def _insert_at(value, into, step):
    """``into[step] = value``, ``step`` an index value."""
    tensor = _mlir.tensor
    shape = shape_of(value)
    rank = len(shape) + 1
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    return tensor.InsertSliceOp(value, into, [step], [], [], [dynamic] + [0] * (rank - 1),
                                [1] + list(shape), [1] * rank).result


def _as_tensor(step, element):
    """The index ``step`` as a 0-d tensor of integer type ``element`` (to compare with the lengths)."""
    return _mlir.tensor.from_elements(ir.RankedTensorType.get([], element), [arith.index_cast(element, step)])


@lowers("lstm_recurrence", "gru_recurrence", "rnn_recurrence")
def lower_recurrence(op, args):
    """An scf.for whose body is one step; sequence_lens masks each step and zeroes empty sequences' states.

    The loop carries the output sequence (each step inserts its hidden state: updated in
    place) and the states (each step's are new buffers: the bufferization pipelines allow
    returning them from loops and free the old ones)."""
    scf = _mlir.scf
    attrs = op.attrs
    roles = op.operand_roles(list(args))
    if "peepholes" in roles:  # the states are the loop's: values, even when they start at zero
        roles["peepholes"] = zeros_if_constant(roles["peepholes"])
    output_spec = op.result_specs[0]
    seq, batch, hidden = output_spec.shape
    graph = StepGraph(OpEmitter(), output_spec.dtype)
    direction = op.direction(attrs, roles, hidden)
    direction.prepare(graph)
    projected, lengths = roles["projected"], roles.get("lengths")
    width = shape_of(projected)[2]
    states = [roles[name] for name in ("initial_h", "initial_c")[: op.CELL.states]]
    loop = scf.ForOp(index(0), index(seq), index(1), [empty((seq, batch, hidden), element_of(projected)), *states])
    loop.operation.attributes[TIME_STEPS] = ir.UnitAttr.get()
    with ir.InsertionPoint(loop.body):
        step = _step_index(loop.induction_variable, seq, bool(attrs["reverse"]))
        valid = None
        if lengths is not None:
            valid = graph.op("less", [_as_tensor(step, element_of(lengths)), lengths])
        outputs, *states = loop.inner_iter_args
        states, output = direction.masked_step(graph, _slice_at(projected, step, (batch, width)), states, valid)
        scf.YieldOp([_insert_at(output, outputs, step), *states])
    outputs, *states = loop.results
    if lengths is not None:
        states = zero_empty_sequences(graph, lengths, states)
    return [outputs, *states]
