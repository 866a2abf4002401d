"""The profiling oracle: a Table 3 Y cell decided by measuring it on this machine.

For a candidate (a block's ops and one more op) it builds a module of three public
functions over the same ops: ``@fused``, the block and the op as one ``ecg.fused``
(one kernel); ``@block``, the block alone; ``@op``, the op alone. The module's text is
the candidate's key in the profiling database (op kinds, shapes, attributes), with
the target and the CPU. On a miss the module goes through the compile pipeline's
lowering half (``lowering/compile.pipeline`` without rewriting, fusion and weight
externalization) and the JIT, and the paper's test decides: fuse when latency(fused)
<= latency(block) + latency(op). Only code this machine can run can be measured: for
a CPU it cannot run (another architecture, or features this one lacks) the database's
entries for that CPU decide, measured where it runs, and the conservative decision
the rest; the oracle says so once, as a warning. GPU targets are not measured. Each measurement is logged as it starts
(``dnnf_mlir.progress``): a first compilation may measure for minutes.
"""

from __future__ import annotations

import functools
import logging
import time
import warnings

import numpy as np

from .._mlir import func, ir
from ..codegen import CodegenError, get_target
from ..codegen.cpu import CpuTarget, jit
from ..lowering import read_pipeline
from ..progress import ProgressEvent, report
from ..transforms.pipeline import Pipeline, build_pass_manager
from .oracle import ConservativeOracle
from .outline import operation_of, outline_ops
from .profile_db import Measurement, ProfileDatabase, ProfileKey

# Passes of compile.pipeline that do not lower: the candidate is already rewritten and
# fused, and its constants are arguments.
NOT_LOWERING = ("ecg-rewrite", "ecg-flatten-concats", "ecg-fuse", "dnnf-externalize-weights")
# Each function is timed as the best of this many batches of back-to-back calls, each
# batch lasting at least BATCH_SECONDS (the best, not the mean: the machine is shared).
BATCHES = 5
BATCH_SECONDS = 0.01
# Timed cold (``latency_us(cold=True)``): each call alone, after writing a buffer larger
# than the last-level cache (Zen 5: 32 MiB per CCD), the best of COLD_CALLS.
EVICTION_BYTES = 128 << 20
COLD_CALLS = 5
logger = logging.getLogger("dnnf_mlir.fusion")


def _outputs(ops: list) -> list:
    """The results of ``ops`` that something else reads, or nothing does (a result)."""
    members = set(ops)
    return [r for op in ops for r in op.results
            if not list(r.uses) or any(operation_of(use.owner) not in members for use in r.uses)]


def extract_function(ops: list, name: str, mapping, module: ir.Module) -> None:
    """Add a public function computing ``ops`` (in program order) from arguments (what
    they read from other ops) into results (``_outputs``); with ``mapping``, the ops
    form one ``ecg.fused``."""
    members = set(ops)
    inputs = list(dict.fromkeys(
        v for op in ops for v in op.operands if operation_of(v.owner) not in members
    ))
    outputs = _outputs(ops)
    function = func.FuncOp(name, ([v.type for v in inputs], [v.type for v in outputs]), ip=ir.InsertionPoint(module.body))
    entry = function.add_entry_block()
    remap = dict(zip(inputs, entry.arguments))
    clones = []
    for op in ops:
        clone = op.clone(ip=ir.InsertionPoint(entry))
        for index, value in enumerate(clone.operands):
            if value in remap:
                clone.operands[index] = remap[value]
        remap.update(zip(op.results, clone.results))
        clones.append(clone)
    terminator = func.ReturnOp([remap[v] for v in outputs], ip=ir.InsertionPoint(entry)).operation
    if mapping is not None and len(clones) > 1:
        outline_ops(clones, mapping, terminator)


def candidate_module(block_ops: list, op, mapping) -> ir.Module:
    """The functions ``@fused`` (block and op as one ``ecg.fused`` of type
    ``mapping``), ``@block`` and ``@op`` of a candidate, in a new module."""
    op = op.operation
    block = [o.operation for o in block_ops]
    position = {o.operation: i for i, o in enumerate(op.block.operations)}
    ordered = sorted(block + [op], key=position.__getitem__)
    with op.context, ir.Location.unknown():
        module = ir.Module.create()
        extract_function(ordered, "fused", mapping, module)
        extract_function(sorted(block, key=position.__getitem__), "block", mapping, module)
        extract_function([op], "op", None, module)
    return module


@functools.lru_cache(maxsize=1)
def _eviction_buffer() -> np.ndarray:
    return np.zeros(EVICTION_BYTES // 8)


def latency_us(function, rng, cold: bool = False) -> float:
    """Best time of one call of a JIT ``function`` on random inputs, in microseconds:
    back to back, its data in the caches, or ``cold``, as a layer runs in a model whose
    weights do not fit them (its constants read from memory)."""
    arrays = [rng.standard_normal(shape).astype(dtype) if np.dtype(dtype).kind == "f"
              else np.zeros(shape, dtype) for dtype, shape in function.inputs]
    call = function.bind(*arrays)
    call()
    if cold:
        eviction, best = _eviction_buffer(), float("inf")
        for _ in range(COLD_CALLS):
            eviction += 1.0
            start = time.perf_counter()
            call()
            best = min(best, time.perf_counter() - start)
        return best * 1e6
    start, calls = time.perf_counter(), 0
    while time.perf_counter() - start < BATCH_SECONDS:
        call()
        calls += 1
    best = float("inf")
    for _ in range(BATCHES):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e6


def lowering_pipeline(cpu: str = "", threads: int = 1) -> Pipeline:
    """The lowering half of ``compile.pipeline`` for the host ``cpu`` and ``threads``."""
    pipeline = Pipeline(read_pipeline("compile.pipeline"))
    for name in NOT_LOWERING:
        pipeline = pipeline.without(name)
    return pipeline.with_options("dnnf-lower-to-llvm", target="host", cpu=cpu, threads=threads)


def compile_for_host(module: ir.Module, cpu: str = "", threads: int = 1, pipeline: "Pipeline | None" = None):
    """JIT-compile a fused ECG ``module`` in place as dnnf-compile lowers it (its kernels
    as functions, through the code generator; ``pipeline``: ``lowering_pipeline`` or a
    part of it that ends with the LLVM dialect); the ``JitModule`` of its functions."""
    pipeline = pipeline or lowering_pipeline(cpu, threads)
    build_pass_manager(pipeline.text(), module.context).run(module.operation)
    return jit(module, threads=threads)


def measure(module: ir.Module, cpu: str, threads: int = 1) -> Measurement:
    """Compile a ``candidate_module`` for the host ``cpu`` and time its functions."""
    compiled = compile_for_host(module, cpu, threads)
    rng = np.random.default_rng(0)
    fused, block, op = (latency_us(compiled[name], rng) for name in ("fused", "block", "op"))
    return Measurement(fused_us=fused, separate_us=block + op)


class ProfilingOracle:
    """Decides Y cells from the profiling database, measuring what it lacks.

    ``decisions`` counts what it said (fused / not fused) and ``measured`` how many
    candidates it compiled and timed; the database counts hits and misses.
    """

    def __init__(self, database: ProfileDatabase, target: str = "host", cpu: str = "", threads: int = 1):
        self.database = database
        self.target = get_target(target, cpu or None)
        self.threads = threads
        self.fallback = ConservativeOracle()
        self.measured = 0
        self.decisions = {"fused": 0, "not fused": 0}
        # What the JIT cannot run here is looked up only; the first miss says so.
        self.missing = self.target.missing_features() if isinstance(self.target, CpuTarget) else ()
        self.said_unmeasured = False

    def _unmeasured(self, block_ops: list, op, cell) -> bool:
        """The conservative decision for a candidate this machine cannot measure."""
        if not self.said_unmeasured:
            self.said_unmeasured = True
            logger.warning("profiling: this machine cannot run code for %s, which needs %s: fusion uses the profiling "
                           "database's measurements for %s and the conservative decision where it has none",
                           self.target.describe(), ", ".join(self.missing), self.target.cpu_name)
        return self.fallback.decide(block_ops, op, cell)

    def candidate_key(self, block_ops: list, op, cell) -> tuple:
        """The ``candidate_module`` of a Y cell and its key in the database."""
        module = candidate_module(block_ops, op, cell.mapping)
        ops = " ".join(o.operation.name for o in block_ops) + " | " + op.operation.name
        # The resolved CPU name: "native" means another CPU on another machine.
        return module, ProfileKey(ops=ops, candidate=str(module), target=self.target.name, cpu=self.target.cpu_name)

    def decide(self, block_ops: list, op, cell) -> bool:
        if not isinstance(self.target, CpuTarget):
            return self.fallback.decide(block_ops, op, cell)  # nothing to measure it on: the JIT runs host CPU code
        module, key = self.candidate_key(block_ops, op, cell)
        ops = key.ops
        measurement = self.database.lookup(key)
        if measurement is None and self.missing:
            return self._unmeasured(block_ops, op, cell)
        if measurement is None:
            report(logger, ProgressEvent("fuse", "step", f"measuring candidate {self.measured + 1}: {ops}"))
            try:
                measured = measure(module, self.target.cpu, self.threads)
            except (ir.MLIRError, CodegenError) as error:
                # A candidate the code generator cannot build alone: decide without it,
                # and store nothing (a later compiler may build it).
                warnings.warn(f"fusion candidate {ops} not measured ({error}); deciding conservatively", stacklevel=2)
                return self.fallback.decide(block_ops, op, cell)
            measurement = self.database.store(key, measured)
            self.measured += 1
        self.decisions["fused" if measurement.fuse else "not fused"] += 1
        return measurement.fuse


def profile_report(oracle: ProfilingOracle) -> dict:
    """What a profiling oracle did, for the fusion statistics."""
    database = oracle.database
    return {"database": str(database.path), "hits": database.hits, "misses": database.misses,
            "measured": oracle.measured, "decisions": dict(oracle.decisions)}


__all__ = [
    "BATCHES", "BATCH_SECONDS", "COLD_CALLS", "EVICTION_BYTES", "NOT_LOWERING", "ProfilingOracle", "candidate_module", "compile_for_host",
    "extract_function", "latency_us", "lowering_pipeline", "measure", "profile_report",
]
