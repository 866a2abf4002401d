"""ecg-unroll-recurrence: each recurrence op (``ecg.lstm_recurrence``, ``gru_recurrence``,
``rnn_recurrence``) replaced by its steps in ECG ops, one after the other.

For the targets whose code generator cannot run a loop around kernels (the GPU backends:
a step's matmul and epilogue become launches, and a launch sequence has no loop); the CPU
keeps the loop (convert-ecg-to-linalg makes it an scf.for). The steps are the ones the op
means (``recurrent_cells``); fusion then joins each step's matmul with its gate epilogue.
The graph, and the compile time, grow with the sequence length.
"""

from .._mlir import ir
from ..ecg.ops.recurrent import RECURRENCES
from ..ecg.recurrent_cells import OpEmitter, StepGraph, zeros_if_constant
from ..ir_walk import walk_ops
from .pass_base import ModulePass
from .registry import described_by_table


def unroll_recurrences(root) -> int:
    """Unroll every recurrence op under ``root``; returns how many there were."""
    operations = walk_ops(root, RECURRENCES)
    for operation in operations:
        view = operation.opview
        with ir.InsertionPoint(operation), operation.location:
            output = view.result_specs[0]
            graph = StepGraph(OpEmitter(), output.dtype)
            roles = view.operand_roles([zeros_if_constant(v) for v in operation.operands])
            results = view.unrolled(graph, roles, view.attrs, output.shape[2])
        for old, new in zip(operation.results, results):
            old.replace_all_uses_with(new)
        operation.erase()
    return len(operations)


@described_by_table
class UnrollRecurrencePass(ModulePass):
    """Replaces each recurrence op by its time steps in ECG ops."""

    NAME = "ecg-unroll-recurrence"

    def run(self, module):
        unroll_recurrences(module)
