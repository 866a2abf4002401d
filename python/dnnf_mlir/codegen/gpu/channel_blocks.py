"""``dnnf-gpu-channel-blocks`` / ``block_channels``: GPU kernels computed in NC4HW4
(``blocked_kernels.py``), the values between them kept in that layout.

Run on linalg on tensors with kernel functions (after ``convert-ecg-to-linalg``). Every
call of a ``blockable`` kernel function (a convolution with constant filters, grouped
too, pooling, concatenation and slices along channels, element-wise ops, a LRN, a
flattening: the layout-tolerant ops) in a run with a windowed convolution
(``_runs_with_windows``) computes its activations blocked; a kernel reads an argument
blocked where the value passed is such a result, and as NCHW otherwise, so a run of
such kernels starts without a transform. Where a blocked value is read by anything
else (a reshape, a softmax, a concatenation that would split a block, the entry
function's result), one kernel of its own (``unblocking_kernel``) copies it back to
NCHW first: the transforms sit at the boundaries of the runs only. A kernel function
called with arguments in different layouts is cloned, one function per layout.

Measured on this machine's lavapipe and PoCL (one conv+bias+relu kernel, NCHW against
blocked, medians of interleaved runs): 3x3 convolutions took 0.1-0.5 of the NCHW
kernel's time, 1x1 convolutions over few channels about 0.6, 1x1 over 64-256
channels 0.98-1.1 (the NCHW schedule already steps those as matmuls).
"""

from __future__ import annotations

from ..._mlir import ir
from ...kernel_functions import is_kernel, is_public, record_kernel_counts
from ...transforms.pass_base import ModulePass
from ...transforms.registry import described_by_table
from ..constant_filters import calls_by_callee
from ..lower_pass import ModuleView
from ..lowered_module import symbol_name
from .blocked_kernels import block_kernel, blockable, has_window, unblocking_kernel
from .nc4hw4 import blocked_type, is_activation


def _callee(call) -> str:
    return ir.FlatSymbolRefAttr(call.attributes["callee"]).value


def _activation_results(call) -> list:
    """The results of ``call`` that are activations (a blocked kernel computes them blocked)."""
    return [result for result in call.results if is_activation(result.type)]


def _layouts(entry, candidates: set) -> dict:
    """call -> the arguments it passes blocked (a tuple of bools), for every call of a
    kernel in ``candidates`` made by ``entry``."""
    blocked_calls = [op.operation for op in entry.regions[0].blocks[0].operations
                     if op.operation.name == "func.call" and _callee(op.operation) in candidates]
    produced = {result for call in blocked_calls for result in _activation_results(call)}
    return {call: tuple(value in produced for value in call.operands) for call in blocked_calls}


def _runs_with_windows(layouts: dict, windowed: set) -> dict:
    """``layouts`` less the runs (calls joined by the blocked values passed between
    them) without a windowed convolution (a kernel function in ``windowed``): a 1x1
    convolution computes about as fast in either layout (0.98-1.1 of its NCHW time at
    64-256 channels), so such a run would only add its NCHW copies (DenseNet-121's
    bottlenecks, each read by a concatenation: 1.14 of its NCHW GPU time on PoCL)."""
    calls = list(layouts)
    run = list(range(len(calls)))

    def root(i):
        while run[i] != i:
            i = run[i]
        return i

    results = [_activation_results(call) for call in calls]
    for j, call in enumerate(calls):
        for operand in call.operands:
            for i, produced in enumerate(results):
                if any(operand == result for result in produced):
                    run[root(i)] = root(j)
    kept_runs = {root(i) for i, call in enumerate(calls) if _callee(call) in windowed}
    kept = [call for i, call in enumerate(calls) if root(i) in kept_runs]
    produced = [result for call in kept for result in _activation_results(call)]
    return {call: tuple(any(value == result for result in produced) for value in call.operands) for call in kept}


def _function_per_layout(module_body, layouts: dict, calls: dict) -> dict:
    """Retarget each call of ``layouts`` to a function of its own layout (a clone where
    the callee is called with another, or also by a call left in NCHW: ``calls``, all
    calls by callee); returns {function name: layout}."""
    chosen, functions = {}, {symbol_name(op.operation): op.operation for op in module_body.operations
                             if op.operation.name == "func.func"}
    blocked = list(layouts)
    for name, callers in calls.items():
        if any(not any(call == other for other in blocked) for call in callers):
            chosen[name] = None  # stays as it is, for the NCHW calls
    for call, layout in layouts.items():
        name = _callee(call)
        target = name if chosen.setdefault(name, layout) == layout else f"{name}_nc4hw4_" + "".join(
            "b" if b else "p" for b in layout)
        if target not in chosen:
            clone = functions[name].clone(ip=ir.InsertionPoint(module_body))
            clone.attributes["sym_name"] = ir.StringAttr.get(target)
            chosen[target] = layout
        call.attributes["callee"] = ir.FlatSymbolRefAttr.get(target)
    return chosen


def _unblock_readers(module_body, calls: list) -> None:
    """Each blocked result of ``calls`` read by anything but another of ``calls``: those
    readers take an NCHW copy made once, right after the call."""
    for call in calls:
        for result in _activation_results(call):
            nchw = ir.RankedTensorType(result.type)
            result.set_type(blocked_type(nchw))
            others = [use for use in result.uses
                      if not any(getattr(use.owner, "operation", use.owner) == reader for reader in calls)]
            if not others:
                continue
            function = unblocking_kernel(module_body, nchw)
            with ir.InsertionPoint(call), call.location:
                copy = ir.Operation.create("func.call", results=[nchw], operands=[result], attributes={
                    "callee": ir.FlatSymbolRefAttr.get(symbol_name(function.operation))})
            call.move_before(copy)
            for use in others:
                use.owner.operands[use.operand_number] = copy.results[0]


def block_channels(module: ir.Module) -> int:
    """Compute every blockable kernel call of ``module``'s public functions in NC4HW4
    (see the module docstring); returns how many calls changed."""
    body = module.body
    calls = calls_by_callee(module.operation)
    kernels = [op.operation for op in body.operations if is_kernel(op.operation)]
    candidates = {symbol_name(f) for f in kernels if blockable(f, calls)}
    windowed = {symbol_name(f) for f in kernels if symbol_name(f) in candidates and has_window(f)}
    layouts = {}
    for op in list(body.operations):
        if op.operation.name == "func.func" and is_public(op.operation) and op.operation.regions[0].blocks:
            layouts.update(_runs_with_windows(_layouts(op.operation, candidates), windowed))
    if not layouts:
        return 0
    chosen = _function_per_layout(body, layouts, calls_by_callee(module.operation))
    calls = calls_by_callee(module.operation)
    for op in list(body.operations):
        if op.operation.name == "func.func" and chosen.get(symbol_name(op.operation)) is not None:
            block_kernel(op.operation, list(chosen[symbol_name(op.operation)]), calls)
    _unblock_readers(body, list(layouts))
    record_kernel_counts(module.operation)
    return len(layouts)


@described_by_table
class ChannelBlocksPass(ModulePass):
    NAME = "dnnf-gpu-channel-blocks"

    def run(self, module: ir.Operation):
        with module.context, ir.Location.unknown():
            block_channels(ModuleView(module))


__all__ = ["ChannelBlocksPass", "block_channels"]
