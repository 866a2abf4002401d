"""``dnnf-cpu-kernel-scratch``: the scratch buffers a kernel function allocates and frees
itself (Winograd's transformed inputs and products, padded inputs, packed panels) made by
its callers around each call instead, as arguments, so that ``dnnf-cpu-buffer-arena``
places them like the kernels' outputs: in the block of the arena read most recently.

A kernel's own malloc hands back, every call, the block glibc last freed for it: memory
touched a whole model run ago, whose writes miss the caches (write-allocate) once the
rest of the model has evicted it. In SqueezeNet (one thread, Zen 4), fire2's Winograd
16 -> 64 at 55x55 (4.3 MB of transforms, its batch matmul's products 1.8 MB of them)
took 1.6-1.7 times the time of fire3's, the same kernel right after it, whose buffers
fire2 had just written; with the products in the arena 1.2-1.3 times (0.65 -> 0.46 ms,
kernels 6.84 -> 6.40 ms in all, medians of 8 interleaved runs at a load average of 10).
On AVX2 (x86-64-v3), where the stem's 3.2 MB padded output is scratch too, fire2 took
0.46 -> 0.54 ms but the max pool after the stem 0.44 -> 0.37: the model even.

Runs on memrefs after the deallocation pipeline, before the arena, on the CPU backend
only. A kernel changes only where every use of it is a call in the entry block of a
public function (not one inside a loop of time steps); an alloc moves only with a static
shape and a ``memref.dealloc`` in the kernel's entry block, never returned. Each call
frees its buffers right after it: a buffer the arena leaves out is not held any longer.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ...kernel_functions import is_public
from ...transforms.pass_base import ModulePass
from ...transforms.registry import described_by_table
from ..lowered_module import symbol_name
from .buffer_arena import byte_size


# Smaller buffers stay the kernel's own: glibc hands the same chunks to every kernel's
# malloc, still in L2 (Winograd's 4 KiB tap copies at 13x13 took 1.2 times as long in
# the arena's scattered holes); a bigger one is out of L2 (1 MiB per core on Zen 4 and
# Zen 5) by the time its kernel runs again.
MIN_SCRATCH_BYTES = 1 << 20


def scratch_allocs(function) -> list:
    """The allocs of ``function``'s entry block its callers can make and the arena can
    hold: static, identity-layout buffers of at least ``MIN_SCRATCH_BYTES``, freed in
    that block only, never returned; each with its deallocs."""
    block = function.regions[0].blocks[0]
    found = []
    for op in block.operations:
        op = op.operation
        if op.name != "memref.alloc" or len(op.operands) or \
                byte_size(ir.MemRefType(op.results[0].type)) < MIN_SCRATCH_BYTES:
            continue
        users = [use.owner for use in op.results[0].uses]
        deallocs = [user for user in users if user.name == "memref.dealloc"]
        if deallocs and all(d.operation.parent == function for d in deallocs) and \
                not any(user.name in ("func.return", "bufferization.dealloc") for user in users):
            found.append((op, deallocs))
    return found


def _entry_calls(module: ir.Operation) -> dict:
    """Kernel name -> its calls, or None for a kernel called anywhere else than in the
    entry block of a public, single-block function."""
    calls = {}
    for call in walk_ops(module, {"func.call"}):
        name = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
        caller = call.parent
        in_entry = caller.name == "func.func" and is_public(caller) and len(caller.regions[0].blocks) == 1
        if calls.get(name, []) is not None:
            calls[name] = calls.get(name, []) + [call] if in_entry else None
    return calls


def _with_empty_entries(attributes, count: int):
    """Pad the per-argument array ``arg_attrs`` of ``attributes`` (if any) with ``count``
    empty dicts."""
    if "arg_attrs" in attributes:
        entries = list(ir.ArrayAttr(attributes["arg_attrs"])) + [ir.DictAttr.get({})] * count
        attributes["arg_attrs"] = ir.ArrayAttr.get(entries)


def _pass_buffers(call, allocs: list):
    """Replace ``call`` by one that also passes fresh copies of ``allocs``, freed after it."""
    with ir.InsertionPoint(call), call.location:
        buffers = [alloc.clone().results[0] for alloc in allocs]
        replacement = _mlir.func.CallOp(list(call.results.types), ir.FlatSymbolRefAttr(call.attributes["callee"]),
                                        list(call.operands) + buffers)
    for name in call.attributes:
        if name != "callee":
            replacement.operation.attributes[name] = call.attributes[name]
    _with_empty_entries(replacement.operation.attributes, len(buffers))
    with ir.InsertionPoint.after(replacement.operation), call.location:
        for buffer in buffers:
            _mlir.memref.dealloc(buffer)
    for old, new in zip(call.results, replacement.results):
        old.replace_all_uses_with(new)
    call.erase()


def hoist_kernel_scratch(module: ir.Operation) -> int:
    """Move every kernel's scratch allocs to its callers (module docstring) in ``module``,
    a ``builtin.module`` operation; returns how many allocs moved out of kernel functions."""
    calls = _entry_calls(module)
    moved = 0
    for function in [op.operation for op in module.regions[0].blocks[0].operations]:
        if function.name != "func.func":
            continue
        sites = calls.get(symbol_name(function))
        if is_public(function) or not sites or len(function.regions[0].blocks) != 1:
            continue
        scratch = scratch_allocs(function)
        if not scratch:
            continue
        for call in sites:
            _pass_buffers(call, [alloc for alloc, _ in scratch])
        block = function.regions[0].blocks[0]
        for alloc, deallocs in scratch:
            for dealloc in deallocs:
                dealloc.erase()
            alloc.results[0].replace_all_uses_with(block.add_argument(alloc.results[0].type, alloc.location))
            alloc.erase()
        declared = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
        function.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([a.type for a in block.arguments], declared.results))
        _with_empty_entries(function.attributes, len(scratch))
        moved += len(scratch)
    return moved


@described_by_table
class KernelScratchPass(ModulePass):
    NAME = "dnnf-cpu-kernel-scratch"

    def run(self, module):
        with module.context:
            hoist_kernel_scratch(module)


__all__ = ["KernelScratchPass", "hoist_kernel_scratch", "scratch_allocs"]
