"""From linalg on tensors to the LLVM dialect: ``lower_to_llvm``, the stage driver.

``lower_to_llvm(module, target, threads)`` runs, in order (``PIPELINE_STAGES`` names
the stages; each is logged as it starts, see ``dnnf_mlir.progress``; ``dump(stage,
module)`` sees the module after each):

The pass pipelines of the stages are files of ``lowering/cpu/`` (``*.pipeline``),
the fixed transform scripts its libraries (``*.mlir``); Python computes what depends
on shapes (the kernel plan).

1. ``prepare``: ``canonicalize, cse, linalg-fuse-elementwise-ops, canonicalize, cse``
   (``prepare.pipeline``); then the target's rewrites into the shapes its kernels take (``cpu/prepare.py``).
2. ``schedule``: the transform-dialect script of the target's kernel plan (tiling,
   packing, vectorization of every linalg op; ``cpu/planner.py``), which calls the
   micro-kernel sequences of ``lowering/cpu/matmul.mlir`` and ``conv.mlir``, then
   ``canonicalize, cse``.
3. ``bufferize``: ``one-shot-bufferize{bufferize-function-boundaries
   function-boundary-type-conversion=identity-layout-map}``,
   ``buffer-results-to-out-params{modify-public-functions}`` (``bufferize.pipeline``); results are written in
   place into the out-parameters; remaining ``memref.copy`` become ``linalg.copy``
   (``bufferization.py``).
4. ``lower-vectors``: the target's script vectorizing those copies (split among the
   threads when big), ``hoist_redundant_vector_transfers``, masked transfers lowered;
   ``buffer-loop-hoisting`` + ``buffer-deallocation-pipeline`` (``deallocate.pipeline``); then the vector
   lowering patterns: ``lower_contraction`` (outer products), ``lower_outerproduct``
   (FMAs), transfer permutations, multi-reductions, ``lower_transfer`` (rank 1),
   broadcasts, transposes, shape casts (``vector-lowering.mlir``).
5. ``parallel``: ``scf.forall`` loops become OpenMP (threads > 1, ``cpu/openmp.py``)
   or plain loops; then a big function is split into private noinline pieces called
   in order (``split.py``): LLVM's optimizer and code generator are superlinear in
   the size of a function.
6. ``llvm``: ``convert-linalg-to-loops, convert-vector-to-scf{full-unroll}, lower-affine,
   expand-strided-metadata, lower-affine, finalize-memref-to-llvm, convert-scf-to-cf,
   convert-vector-to-llvm, convert-math-to-funcs, convert-math-to-llvm,
   convert-math-to-libm, convert-openmp-to-llvm, convert-to-llvm,
   reconcile-unrealized-casts, canonicalize, cse`` (``to-llvm.pipeline``); the module gets the target triple,
   every ``llvm.func`` the ``target_cpu`` / ``target_features`` of its CPU (all but the
   host's native CPU, which the JIT and ``llc -mcpu=native`` find by themselves), and
   the attributes of ``lowered_module.py``.

A module whose kernels are functions (``ecg-outline-kernels``) is lowered function
by function: every stage works within a function, so no two kernels merge, and
each kernel function stays a noinline LLVM function (one copy of its code however
many times it is called). ``KERNELS_ATTR`` counts the kernels launched per call of
the public functions (the kernel calls; without kernel functions, the kernels the
plan made), ``UNIQUE_KERNELS_ATTR`` the distinct ones.

``jit.py`` runs the result in this process; ``cpu/objects.py`` compiles it with llc.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Optional

from .._mlir import ir
from ..lowering import read_pipeline
from ..progress import ProgressEvent, report
from .bufferization import copies_to_linalg, results_in_place
from .cpu.attention import confirm_head_loops
from .cpu.buffers import post_bufferization_script, vector_lowering_script
from .cpu.openmp import parallelize
from .cpu.planner import plan
from .cpu.prepare import prepare as cpu_prepare
from ..kernel_functions import is_kernel, kernel_counts
from .lowered_module import (
    CPU_ATTR, KERNELS_ATTR, TARGET_ATTR, UNIQUE_KERNELS_ATTR, USES_OPENMP, functions, record_signatures, walk_ops,
)
from .passes import apply_script, run_passes, run_pipeline
from .cpu.split import split_functions
from .target import Target, get_target

PIPELINE_STAGES = ("prepare", "schedule", "bufferize", "lower-vectors", "parallel", "llvm")
logger = logging.getLogger("dnnf_mlir.codegen")


def _starting(stage: str):
    """Log the start of one of ``PIPELINE_STAGES``, a step of the compiler's ``lower`` stage
    (DEBUG: the profiling oracle lowers its candidates through here too)."""
    event = ProgressEvent("lower", "step", f"code generation: {stage}", PIPELINE_STAGES.index(stage), len(PIPELINE_STAGES))
    report(logger, event, logging.DEBUG)

@dataclass
class LoweringReport:
    """What ``lower_to_llvm`` did: the schedules it planned (an ``OpSchedule`` per scheduled op),
    the kernels launched per call and the distinct ones, the transform scripts."""

    target: Target
    threads: int
    schedules: list
    schedule_script: str
    vector_script: str
    launched: int
    unique: int


def lower_to_llvm(
    module: ir.Module,
    target: "str | Target" = "host",
    threads: int = 1,
    dump: Optional[Callable[[str, ir.Module], None]] = None,
) -> LoweringReport:
    """Lower a linalg-on-tensors ``module`` in place to the LLVM dialect.

    ``threads`` > 1 distributes the contractions (and large element-wise ops) over
    that many OpenMP threads. ``dump(stage, module)`` is called after each stage of
    ``PIPELINE_STAGES``. Returns a ``LoweringReport``.
    """
    target = get_target(target)
    threads = max(1, int(threads))
    with module.context, ir.Location.unknown(module.context):
        record_signatures(module)
        launched, unique = kernel_counts(module.operation)
        _starting("prepare")
        _keep_kernels_apart(module)
        run_pipeline(read_pipeline("cpu/prepare.pipeline"), module)
        if dump:
            dump("prepare", module)

        _starting("schedule")
        if cpu_prepare(module, target):
            run_passes("canonicalize,cse", module)
        script, schedules = plan(module, target, threads)
        script_text = script.text()
        apply_script(module, script_text, "__dnnf_codegen", "transform schedule")
        confirm_head_loops(module, schedules)
        run_passes("canonicalize,cse", module)
        if dump:
            dump("schedule", module)

        _starting("bufferize")
        run_pipeline(read_pipeline("cpu/bufferize.pipeline"), module)
        results_in_place(module)
        copies = copies_to_linalg(module)
        run_passes("canonicalize,cse", module)
        if dump:
            dump("bufferize", module)

        _starting("lower-vectors")
        vector_script = post_bufferization_script(target, copies, threads)
        apply_script(module, vector_script, "__dnnf_vectorize_buffers", "vectorizing copies")
        run_passes("canonicalize,cse", module)
        run_pipeline(read_pipeline("cpu/deallocate.pipeline"), module)
        lowering = vector_lowering_script()
        apply_script(module, lowering, "__dnnf_lower_vectors", "vector lowering")
        run_passes("cse", module)
        if dump:
            dump("lower-vectors", module)

        _starting("parallel")
        uses_openmp = parallelize(module, threads)
        split_functions(module)
        if dump:
            dump("parallel", module)

        _starting("llvm")
        run_pipeline(read_pipeline("cpu/to-llvm.pipeline"), module)
        _set_llvm_target(module, target)
        if uses_openmp:
            module.operation.attributes[USES_OPENMP] = ir.UnitAttr.get()
        module.operation.attributes[TARGET_ATTR] = ir.StringAttr.get(target.name)
        module.operation.attributes[CPU_ATTR] = ir.StringAttr.get(target.cpu)
        if not unique:
            launched = unique = len(schedules)
        i64 = ir.IntegerType.get_signless(64)
        module.operation.attributes[KERNELS_ATTR] = ir.IntegerAttr.get(i64, launched)
        module.operation.attributes[UNIQUE_KERNELS_ATTR] = ir.IntegerAttr.get(i64, unique)
        if dump:
            dump("llvm", module)
    return LoweringReport(target, threads, schedules, script_text, vector_script + lowering, launched, unique)


def _keep_kernels_apart(module: ir.Module):
    """Each kernel function becomes a noinline LLVM function with internal linkage
    (not exported from the library, called directly rather than through the PLT).
    func-to-llvm turns an "llvm."-prefixed attribute into the llvm.func one."""
    internal = ir.Attribute.parse("#llvm.linkage<internal>")
    for function in functions(module):
        if is_kernel(function.operation):
            function.attributes["llvm.no_inline"] = ir.UnitAttr.get()
            function.attributes["llvm.linkage"] = internal


def _set_llvm_target(module: ir.Module, target: Target):
    module.operation.attributes["llvm.target_triple"] = ir.StringAttr.get(target.triple)
    if not target.pinned:
        return  # the JIT and `llc -mcpu=native` pick the host CPU and its features
    # Explicit features: the JIT's own machine has the host's, which a function's
    # target_features replaces (the CPU's defaults still apply).
    features = ir.Attribute.parse("#llvm.target_features<[" + ", ".join(f'"+{f}"' for f in target.features) + "]>")
    for op in walk_ops(module.operation, {"llvm.func"}):
        if len(op.regions[0].blocks) == 0:
            continue
        op.attributes["target_cpu"] = ir.StringAttr.get(target.cpu)
        if target.features:
            op.attributes["target_features"] = features


__all__ = ["LoweringReport", "PIPELINE_STAGES", "lower_to_llvm"]
