"""The GPU targets' rewrites of linalg before scheduling: every op of a kernel in a form
that tiles and fuses into the tiles of the kernel's roots.

``prepare_module(module)`` changes kernel functions' signatures and callers: returned
values no kernel computes get kernels of their own (``returned_values``), constants
become arguments (a kernel has no constant arrays), reshaped results the callers'
views. ``prepare_kernel(module)`` rewrites a module of one kernel function: erf / tanh /
pow as arithmetic (``approximations``: SPIR-V's GLSL set has no erf), pads and reversed
reads as gathers (``gathers``), concatenated phases of a tensor as its transpose (``strided_concats``), every named op a ``linalg.generic`` (``lowering/gpu/generalize.mlir``),
ops of a 0-d result computed as one element (``scalar_results``),
cyclic shifts computed from the kernel's arguments (``rotations``),
arguments too big for one binding read in chunks (``oversized``),
ops read in slices split (``slices``), readers of a collapse expanded into its
source's shape (``collapsed_reads``), reshapes folded into the maps that read them
(``reshapes``), concatenations as pieces computed in place (``concats``), each op its
own init, a fill where it was a splat constant, and results passed on copied
(``returned_copies``).
"""

from __future__ import annotations

from ..._mlir import ir
from ...ir_walk import walk_ops
from ...lowering import read_pipeline, read_transform_library
from ..approximations import approximate_math
from ..errors import CodegenError
from ..linalg_queries import TENSOR_RESHAPES, linalg_input_count
from ... import _mlir
from ...kernel_functions import is_kernel
from ..lowered_module import functions, symbol_name
from ..passes import apply_script, run_passes, run_pipeline
from .collapsed_reads import split_collapsed_reads
from .concats import (concats_to_pieces, expand_concat_pieces, flatten_nested_concats, padded_results,
                      padded_results_to_pieces, split_concat_consumers, split_concat_pads)
from .gathers import gathers_from_pads, gathers_from_reversed_reads
from .offset_reads import fuse_offset_producers
from .oversized import read_oversized_arguments_in_chunks
from .precision import fold_widenings
from .permuted_products import fold_permuting_copies
from .reshaped_fills import fills_of_own_shape
from .reshapes import reshapes_into_consumers
from .rotations import rotations_from_arguments
from .partial_reductions import split_partial_reductions
from .scalar_results import widen_scalar_results
from .returned_copies import copy_passed_on_results
from .returned_values import returned_values_to_kernels
from .slices import split_sliced_ops
from .strided_concats import concats_of_phases


# Element types the kernels compute with: SPIR-V's Shader capability, Int64 and Float16
# (what spirv.to_spirv_binary requests; f16 from fp16 storage, ``precision.py``), Int16 /
# Int8 left for the OpenCL work.
SUPPORTED_ELEMENTS = ("f32", "f16", "i64", "i32", "i1")


def check_supported(module: ir.Module):
    """A ``CodegenError`` naming the first op of a kernel function that the GPU targets
    cannot compile yet, the kernel and why: a dynamic shape (a dispatch's grid is fixed
    when the model is compiled), an element type outside ``SUPPORTED_ELEMENTS``."""
    for function in [f for f in functions(module) if is_kernel(f.operation)]:
        ops = [op.operation for op in function.regions[0].blocks[0].operations]
        for op in sorted(ops, key=lambda op: not op.name.startswith("linalg.")):  # the computing op first
            for value in list(op.results) + list(op.operands):
                if not isinstance(value.type, ir.RankedTensorType):
                    continue
                tensor = ir.RankedTensorType(value.type)
                why = None
                if not tensor.has_static_shape:
                    why = f"has a dynamic shape ({tensor}): GPU kernels are compiled for static shapes"
                elif str(tensor.element_type) not in SUPPORTED_ELEMENTS:
                    why = (f"computes in {tensor.element_type}, which the GPU targets do not support yet "
                           f"(they take {', '.join(SUPPORTED_ELEMENTS)})")
                if why:
                    raise CodegenError(f"kernel {symbol_name(function)}: {op.name} {why}")


def prepare_module(module: ir.Module) -> int:
    """What changes kernel functions' signatures and their callers (after
    ``check_supported``): returned values no kernel computes passed through kernels of
    their own (``returned_values``), constants passed in
    (``constants_to_arguments``; before the pipeline's element-wise fusion, which would
    fold a bias broadcast into a constant of the whole result: 1.2 MB for GPT-2's merged
    projection), reshaped results reshaped by the callers (``reshapes_to_callers``).
    Returns how many ops changed."""
    check_supported(module)
    rewritten = returned_values_to_kernels(module) + constants_to_arguments(module)
    run_pipeline(read_pipeline("gpu/prepare.pipeline"), module)
    return rewritten + reshapes_to_callers(module)


def prepare_kernel(module: ir.Module, device, phased: bool = False) -> int:
    """Rewrite the kernel functions of ``module`` for the GPU schedules (see the module
    docstring) within the limits of ``device`` (a ``target.GpuDevice``: no argument read
    through one binding past its ``max_storage_buffer_range``, ``oversized``; no thread
    looping past its ``max_loop_iterations``, ``partial_reductions``), for a ``phased``
    schedule (``reshapes_into_consumers``); returns how many ops the Python rewrites changed."""
    rewritten = approximate_math(module)
    rewritten += flatten_nested_concats(module) + split_concat_pads(module)
    rewritten += concats_of_phases(module)
    rewritten += gathers_from_pads(module, keep=padded_results(module))
    rewritten += splat_inits_to_fills(module)
    apply_script(module, read_transform_library("gpu/generalize.mlir"), "__dnnf_gpu_generalize", "generalizing linalg ops")
    rewritten += widen_scalar_results(module)  # a root of no dims has no loop to map
    rewritten += fold_widenings(module)  # fp16 storage's conversions into their readers
    # Cyclic shifts computed from the kernel's arguments, before the concatenations
    # become pieces (``split_concat_consumers``): the pipeline below shares their copies.
    rewritten += rotations_from_arguments(module)
    rewritten += read_oversized_arguments_in_chunks(module, device.max_storage_buffer_range)
    # Split before the pipeline, whose reshape propagation then moves a piece's reshape
    # (a grouped convolution's groups collapsed into the concatenated channels) past
    # its element-wise op to the concatenation, where the piece is computed in place.
    rewritten += split_concat_consumers(module)
    # Again now that every op is a generic: element-wise consumers of a reshaped result
    # (a grouped convolution's groups collapsed into its channels) iterate over the
    # producer's domain instead, reshapes moving to the edges of the kernel.
    run_pipeline(read_pipeline("gpu/prepare.pipeline"), module)
    # Readers of a merging collapse expanded into its source's shape (``collapsed_reads``).
    collapsed = split_collapsed_reads(module)
    split = split_sliced_ops(module)
    if split:
        # A slice's reshape (a merged projection's heads) now reads its own copy of the
        # op: expanded into it, the copy computes the heads' layout.
        run_pipeline(read_pipeline("gpu/prepare.pipeline"), module)
    # An expanded op's accumulator, a fill read through a reshape (``reshaped_fills``).
    if (split or collapsed) and fills_of_own_shape(module):
        apply_script(module, read_transform_library("gpu/generalize.mlir"), "__dnnf_gpu_generalize",
                     "generalizing linalg ops")
    rewritten += collapsed + split
    if reshapes_into_consumers(module, phased):
        # Element-wise consumers of a reshaped result iterate over the producer's domain
        # now that their other inputs' maps are projections (``reshapes.py``).
        run_pipeline(read_pipeline("gpu/prepare.pipeline"), module)
        rewritten += 1 + reshapes_into_consumers(module, phased)
    rewritten += fold_permuting_copies(module)
    rewritten += split_concat_consumers(module) + flatten_nested_concats(module)
    run_passes("canonicalize", module)  # what the splits left unread (a whole fill, a concatenation)
    rewritten += untie_inits(module)
    rewritten += expand_concat_pieces(module) + padded_results_to_pieces(module) + concats_to_pieces(module)
    rewritten += copy_passed_on_results(module)
    rewritten += reshapes_into_consumers(module, phased)  # the copies' views of values computed here (pieces, results)
    rewritten += gathers_from_reversed_reads(module)  # after the rewrites that compose maps
    rewritten += fuse_offset_producers(module)  # a piece's reads at an offset: no span computed per tile
    if split_partial_reductions(module, device.max_loop_iterations):  # after the map rewrites; its inputs' expansions moved to the arguments
        run_pipeline(read_pipeline("gpu/prepare.pipeline"), module)
        rewritten += 1
    return rewritten + gathers_from_pads(module)  # a padded result not computed in place


def constants_to_arguments(module: ir.Module) -> int:
    """Every non-splat tensor constant of a kernel function -> an argument of it, the
    constant passed by each caller instead. A GPU kernel has no constant arrays of its
    own: the dispatch plan holds them as buffers (``program.py``). Returns how many."""
    moved = 0
    kernels = {symbol_name(f): f for f in functions(module) if is_kernel(f.operation)}
    for name, function in kernels.items():
        block = function.regions[0].blocks[0]
        constants = [op.operation for op in block.operations if op.operation.name == "arith.constant"
                     and isinstance(op.operation.results[0].type, ir.RankedTensorType)
                     and not (isinstance(op.operation.attributes["value"], ir.DenseElementsAttr)
                              and ir.DenseElementsAttr(op.operation.attributes["value"]).is_splat)]
        if not constants:
            continue
        for constant in constants:
            argument = block.add_argument(constant.results[0].type, constant.location)
            constant.results[0].replace_all_uses_with(argument)
        function_type = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
        function.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([a.type for a in block.arguments], function_type.results))
        for call in walk_ops(module.operation, {"func.call"}):
            if ir.FlatSymbolRefAttr(call.attributes["callee"]).value != name:
                continue
            with ir.InsertionPoint(call), call.location:
                values = [c.clone().results[0] for c in constants]
                replacement = _mlir.func.CallOp(list(call.results.types), ir.FlatSymbolRefAttr(call.attributes["callee"]),
                                                list(call.operands) + values)
            for old, new in zip(call.results, replacement.results):
                old.replace_all_uses_with(new)
            call.erase()
        for constant in constants:
            constant.erase()
        moved += len(constants)
    return moved




def reshapes_to_callers(module: ir.Module) -> int:
    """A kernel function returning a reshape of what it computes returns that instead,
    and its callers reshape it: a GPU kernel writes its result in the shape it computes
    it in, and a reshape between kernels is a view of the same buffer in the dispatch
    plan. Returns how many results changed."""
    moved = 0
    kernels = {symbol_name(f): f for f in functions(module) if is_kernel(f.operation)}
    for name, function in kernels.items():
        block = function.regions[0].blocks[0]
        terminator = list(block.operations)[-1]
        chains = []
        for index, value in enumerate(terminator.operands):
            chain = []
            while isinstance(value, ir.OpResult) and value.owner.operation.name in TENSOR_RESHAPES:
                chain.append(value.owner.operation)
                value = value.owner.operation.operands[0]
            if chain:
                terminator.operands[index] = value
                chains.append((index, chain[::-1]))
        if not chains:
            continue
        function_type = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
        function.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(function_type.inputs, [v.type for v in terminator.operands]))
        for call in walk_ops(module.operation, {"func.call"}):
            if ir.FlatSymbolRefAttr(call.attributes["callee"]).value != name:
                continue
            for index, chain in chains:
                result = call.results[index]
                uses = list(result.uses)
                result.set_type(chain[0].operands[0].type)
                value = result
                with _after(call), call.location:
                    for reshape in chain:
                        clone = reshape.clone()
                        clone.operands[0] = value
                        value = clone.results[0]
                for use in uses:
                    use.owner.operands[use.operand_number] = value
        for _, chain in chains:
            for reshape in reversed(chain):
                if not list(reshape.results[0].uses):
                    reshape.erase()
        moved += len(chains)
    return moved


def _after(op) -> ir.InsertionPoint:
    """The insertion point right after ``op``."""
    ops = [o.operation for o in op.block.operations]
    return ir.InsertionPoint(ops[ops.index(op) + 1])


def splat_inits_to_fills(module: ir.Module) -> int:
    """An op's init that is a splat constant (a matmul accumulating into ``dense<0.0>``)
    -> a ``linalg.fill`` of an empty tensor, which fuses into the op's tiles; the
    constant would be a buffer of the function copied into the result before the
    kernel's launch. Returns how many."""
    replaced = 0
    structured = []

    def visit(op):
        if op.name.startswith("linalg.") and len(op.results) and len(op.regions):  # structured, on tensors
            structured.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for op in structured:
        for index in range(linalg_input_count(op), len(op.operands)):
            value = op.operands[index]
            constant = value.owner if isinstance(value, ir.OpResult) else None
            if constant is None or constant.name != "arith.constant" or \
                    not isinstance(constant.attributes["value"], ir.DenseElementsAttr) or \
                    not ir.DenseElementsAttr(constant.attributes["value"]).is_splat:
                continue
            tensor = ir.RankedTensorType(value.type)
            with ir.InsertionPoint(op), op.location:
                splat = ir.DenseElementsAttr(constant.attributes["value"]).get_splat_value()
                scalar = _mlir.arith.constant(tensor.element_type, splat)
                empty = _mlir.tensor.empty(tensor.shape, tensor.element_type)
                op.operands[index] = _mlir.linalg.fill(scalar, outs=[empty])
            replaced += 1
    return replaced


def untie_inits(module: ir.Module) -> int:
    """Give every op its own ``tensor.empty`` init. CSE merges identical empties, and a
    contraction whose accumulator shares its init with the kernel's result would be
    tiled into the result's buffer (fusion slices the loop's shared output), read and
    written there, and copied by bufferization."""
    untied = 0
    for empty in walk_ops(module.operation, {"tensor.empty"}):
        uses = [use for use in empty.results[0].uses if use.owner.name.startswith("linalg.")]
        for use in uses[1:]:
            with ir.InsertionPoint(use.owner), empty.location:
                use.owner.operands[use.operand_number] = empty.clone().results[0]
            untied += 1
    return untied


__all__ = ["SUPPORTED_ELEMENTS", "check_supported", "constants_to_arguments", "splat_inits_to_fills", "prepare_kernel", "prepare_module", "reshapes_to_callers", "untie_inits"]
