"""The CPU backend: the five steps of ``codegen.backend`` for x86-64 and AArch64 through LLVM.

Its six stages (``stages``), each a file of ``lowering/cpu/`` where it is a pass
pipeline (``*.pipeline``) or a fixed transform script (``*.mlir``), and Python where
it depends on shapes:

1. step ``prepare``, stage ``prepare``: the public functions get MLIR's C interface,
   kernel functions stay apart (``lowered.py``); ``canonicalize, cse,
   linalg-fuse-elementwise-ops, canonicalize, cse`` (``prepare.pipeline``); then the
   rewrites into the shapes the CPU kernels take (``prepare.py``).
2. step ``schedule``, stage ``schedule``: the transform-dialect script of the kernel plan
   (tiling, packing, vectorization of every linalg op; ``planner.py``), which calls the
   micro-kernel sequences of ``lowering/cpu/matmul.mlir`` and ``conv.mlir``, then
   ``canonicalize, cse``.
3. step ``bufferize``, stage ``bufferize``: ``one-shot-bufferize{bufferize-function-boundaries
   function-boundary-type-conversion=identity-layout-map allow-return-allocs-from-loops}``,
   ``buffer-results-to-out-params{modify-public-functions}`` (``bufferize.pipeline``);
   results are written in place into the out-parameters; a fresh buffer copied whole
   into a slice is written in the slice instead (``slice_copies.py``); remaining
   ``memref.copy`` become tagged ``linalg.copy`` (``codegen/bufferization.py``).
4. step ``map_to_hardware``, stage ``lower-vectors``: the script vectorizing those copies
   (split among the threads when big), ``hoist_redundant_vector_transfers``, masked
   transfers lowered (``buffers.py``); ``buffer-loop-hoisting`` +
   ``buffer-deallocation-pipeline`` (``deallocate.pipeline``); the kernels' scratch buffers
   allocated by their callers (``kernel_scratch.py``), and the public functions'
   intermediate buffers placed in one arena, cache-hot first (``buffer_arena.py``); stride-2 rows read
   contiguously (``strided_reads.py``), reads of one element broadcast over their lanes
   loaded once (``scalar_broadcasts.py``), streamed filter panels prefetched
   (``panel_prefetch.py``), so are the rows a register tile's epilogue reads and writes
   (``epilogue_prefetch.py``) and the next rows of a row group in chunks (``row_prefetch.py``);
   then the vector lowering
   patterns: contiguous n-D transfers flattened to 1-D in the functions ``flat_transfers.py``
   marks, ``lower_contraction`` (outer products), ``lower_outerproduct`` (FMAs),
   transfer permutations, multi-reductions, ``lower_transfer`` (rank 1), broadcasts,
   transposes, shape casts (``vector-lowering.mlir``). Stage ``parallel``: ``scf.forall``
   loops become OpenMP (threads > 1, ``openmp.py``) or plain loops; then a big function
   is split into private noinline pieces called in order (``split.py``): LLVM's
   optimizer and code generator are superlinear in the size of a function.
5. step ``emit``, stage ``llvm``: ``convert-linalg-to-loops, convert-vector-to-scf{full-unroll},
   lower-affine, expand-strided-metadata, lower-affine, finalize-memref-to-llvm,
   convert-scf-to-cf, convert-vector-to-llvm, convert-math-to-funcs,
   convert-math-to-llvm, convert-math-to-libm, convert-openmp-to-llvm, convert-to-llvm,
   reconcile-unrealized-casts, canonicalize, cse`` (``to-llvm.pipeline``); the module
   gets the target triple, every ``llvm.func`` the ``target_cpu`` / ``target_features``
   of its CPU (all but the host's native CPU, which the JIT and ``llc -mcpu=native``
   find by themselves).

Its output formats are LLVM IR and, through ``opt-22`` + ``llc-22``, assembly and
object files (``objects.py``); ``jit.py`` runs a lowered module in this process.
"""

from __future__ import annotations

import os

from ..._mlir import ir
from ...lowering import read_pipeline
from ..backend import Backend, KernelPlan, Stages
from ..bufferization import copies_to_linalg, results_in_place, tagged_copies
from ..passes import apply_script, run_passes, run_pipeline
from .attention import confirm_head_loops
from .border_fills import fill_only_borders
from .byte_bools import bools_as_bytes
from .buffer_reads import to_buffer_per_reader
from .buffer_arena import place_buffers_in_arenas
from .kernel_scratch import hoist_kernel_scratch
from .buffers import post_bufferization_script, vector_lowering_script
from .scalar_broadcasts import scalar_broadcast_reads
from .strided_reads import contiguous_strided_reads
from .flat_transfers import mark_flat_transfer_functions
from .loop_inits import fresh_inits_in_loops, fresh_inits_of_slices
from .lowered import USES_OPENMP, keep_kernels_apart, mark_entry_points, set_llvm_target
from .objects import compile_object, emit_llvm_ir
from .openmp import parallelize
from .panel_prefetch import prefetch_streamed_panels
from .epilogue_prefetch import prefetch_epilogue_rows
from .row_prefetch import prefetch_next_rows
from .planner import plan
from .prepare import rewrite_for_kernels
from .slice_copies import write_copied_buffers_in_place
from .split import split_functions
from .target import CpuTarget
from .toolchain import find_clang, find_llc, find_llvm_split, find_opt


class CpuBackend(Backend):
    kind = "cpu"
    stages = ("prepare", "schedule", "bufferize", "lower-vectors", "parallel", "llvm")
    lowering_pass = "dnnf-lower-to-llvm"
    output_formats = {"llvm": "LLVM IR", "asm": "assembly (opt-22 + llc-22)", "obj": "an object file (opt-22 + llc-22)"}

    def tools(self) -> list:
        return [find_llc(), find_opt(), find_llvm_split(), find_clang()]

    def prepare(self, module: ir.Module, target: CpuTarget, threads: int, stages: Stages) -> None:
        with stages.stage("prepare", module):
            mark_entry_points(module)
            keep_kernels_apart(module)
            run_pipeline(read_pipeline("cpu/prepare.pipeline"), module)
            if rewrite_for_kernels(module, target):
                run_passes("canonicalize,cse", module)

    def schedule(self, module: ir.Module, target: CpuTarget, threads: int, stages: Stages) -> KernelPlan:
        with stages.stage("schedule", module):
            script, schedules = plan(module, target, threads)
            text = script.text()
            apply_script(module, text, "__dnnf_codegen", "transform schedule")
            confirm_head_loops(module, schedules)
            run_passes("canonicalize,cse", module)
        return KernelPlan(schedules, text)

    def bufferize(self, module: ir.Module, target: CpuTarget, threads: int, stages: Stages) -> None:
        with stages.stage("bufferize", module):
            fresh_inits_in_loops(module)
            fresh_inits_of_slices(module)
            to_buffer_per_reader(module)
            run_pipeline(read_pipeline("cpu/bufferize.pipeline"), module)
            results_in_place(module)
            write_copied_buffers_in_place(module)
            fill_only_borders(module)
            copies_to_linalg(module)
            run_passes("canonicalize,cse", module)

    def map_to_hardware(self, module: ir.Module, target: CpuTarget, threads: int, stages: Stages) -> str:
        with stages.stage("lower-vectors", module):
            vectorize = post_bufferization_script(target, tagged_copies(module), threads)
            apply_script(module, vectorize, "__dnnf_vectorize_buffers", "vectorizing copies")
            run_passes("canonicalize,cse", module)
            run_pipeline(read_pipeline("cpu/deallocate.pipeline"), module)
            hoist_kernel_scratch(module.operation)
            place_buffers_in_arenas(module.operation)
            contiguous_strided_reads(module)
            scalar_broadcast_reads(module)
            prefetch_streamed_panels(module)
            prefetch_epilogue_rows(module)
            prefetch_next_rows(module)
            mark_flat_transfer_functions(module)
            lowering = vector_lowering_script()
            apply_script(module, lowering, "__dnnf_lower_vectors", "vector lowering")
            run_passes("cse", module)
        with stages.stage("parallel", module):
            if parallelize(module, threads):
                module.operation.attributes[USES_OPENMP] = ir.UnitAttr.get()
            split_functions(module)
        return vectorize + lowering

    def emit(self, module: ir.Module, target: CpuTarget, threads: int, stages: Stages) -> None:
        with stages.stage("llvm", module):
            run_pipeline(read_pipeline("cpu/to-llvm.pipeline"), module)
            bools_as_bytes(module)
            set_llvm_target(module, target)

    def translate(self, module: ir.Module, target: CpuTarget, output_format: str) -> "str | bytes":
        llvm_ir = emit_llvm_ir(module)
        if output_format == "llvm":
            return llvm_ir
        path = compile_object(llvm_ir, target=target, assembly=output_format == "asm")
        try:
            with open(path, "r" if output_format == "asm" else "rb") as file:
                return file.read()
        finally:
            os.unlink(path)


CPU_BACKEND = CpuBackend()


__all__ = ["CPU_BACKEND", "CpuBackend"]
