"""Results a kernel passes on rather than computes, copied inside its one launch.

A kernel function may return a view of an argument (a recurrent step's slice of the
precomputed input gates, handed on to the next step), a slice of a value it computes
(an LSTM's merged gate projection and its first half), one value twice (a GRU's new
state, returned as the state and as the step's output) or a value that is also a piece
of another result. Bufferization writes each such
result with a copy outside the kernel's loops, which leaves work outside the launch and
drops the kernel to a dispatch per op (``lower.py``). Copied by an element-wise op of
the kernel instead (its slices read through its indexing map, ``reshapes``), each is
one more root group, computed in the same launch.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...linalg_builders import copy_into
from ..linalg_queries import static_tensor_type
from ..lowered_module import functions
from ...kernel_functions import is_kernel
from .kernels import VIEWS


def _passed_on(value, earlier: list) -> bool:
    """Whether a returned ``value`` is not written by the op computing it: a value
    returned before it, a piece of another result (computed in place there: a
    recurrent step's state, also the last row of the sequence), an argument or a view
    of one, or a slice of a computed value (the first half of a merged gate
    projection, returned beside the whole)."""
    if any(value == other for other in earlier) or \
            any(use.owner.name == "tensor.insert_slice" and use.operand_number == 0 for use in value.uses):
        return True
    sliced = False
    while isinstance(value, ir.OpResult) and value.owner.name in VIEWS:
        sliced = sliced or value.owner.name == "tensor.extract_slice"
        value = value.owner.operands[0]
    return sliced or isinstance(value, ir.BlockArgument)


def copy_passed_on_results(module: ir.Module) -> int:
    """Return an element-wise copy of every result of a kernel function of ``module``
    that it passes on (``_passed_on``); returns how many."""
    copied = 0
    for function in [f for f in functions(module) if is_kernel(f.operation)]:
        terminator = list(function.regions[0].blocks[0].operations)[-1]
        earlier = []
        for index, value in enumerate(list(terminator.operands)):
            tensor = static_tensor_type(value)
            if tensor is not None and _passed_on(value, earlier):
                with ir.InsertionPoint(terminator), terminator.location:
                    terminator.operands[index] = copy_into(value, _mlir.tensor.empty(tensor.shape, tensor.element_type))
                copied += 1
            earlier.append(value)
    return copied


__all__ = ["copy_passed_on_results"]
