"""The CPU targets' threads: parallel loops become OpenMP (LLVM's libomp).

``parallelize(module, threads)`` turns the ``scf.forall`` loops of the schedules into
OpenMP parallel loops (several threads) or plain loops (one). No ``num_threads``
clause: the thread count stays a run-time choice (``omp_set_num_threads`` /
``OMP_NUM_THREADS``), e.g. one thread for a benchmark.

``configure_runtime``: every public function of a module that uses OpenMP first
calls ``kmp_set_blocktime(BLOCKTIME_MS)``. How many threads a call's regions take is
its caller's choice: a compiled library's glue sizes each run's team by the machine's
load (``compiler/team_sizing.py``); the JIT lets libomp do it (``omp_set_dynamic(1)``
before each call, ``jit.py``).

Blocktime: after a parallel region libomp's workers spin that long for the next one,
then sleep. The parallel regions of one inference are microseconds apart, so the
workers stay awake through it and sleep soon after it. Both libomp extremes are slow.
Its default, 200 ms of spinning, keeps the cores busy long after an inference, taking
them from whatever runs next (another model, onnxruntime's threads in dnnf-bench).
Sleeping at once (0) makes every region wake a sleeping worker, which in a VM costs an
inter-processor interrupt and a vCPU reschedule: measured on a 2-vCPU Zen 5 VM,
SqueezeNet and DistilBERT on 2 threads took 9.8 ms and 48.9 ms with 0 and 3.3 ms and
31.9 ms with 1 ms (one thread: 5.5 ms and 60.8 ms).

Teams smaller than the threads asked for: every parallel loop is cut in one chunk per
thread, and a region ends when its last thread does: a worker whose core another
process holds delays every region by a time slice (milliseconds), where onnxruntime's
calling thread runs the chunks its late worker has not started. So with a core taken
the regions run on the calling thread alone, and the code is as correct on any team
size. Measured with libomp's dynamic teams (its load-balance mode: a count of the
running threads in /proc, taken at most once a second, 1-2 ms of reads) on a 2-vCPU
Zen 4 VM (load average 6-12 from other work), 2 threads, a busy loop pinned to the
second vCPU, medians with onnxruntime's in the same process: ResNet-50 2209 and 2450 ms
without (onnxruntime 572, 649), 635 and 760 with (598, 683); BERT-base 2036 (1444)
without, 1305 (1360) with; ShuffleNet 148 (6) without, 36 (35) with.

The call only sets the calling thread's ICVs, hence once per call of the entry point
(from whichever thread makes it), also when the parallel regions are in the kernel
functions it calls.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ...kernel_functions import is_public
from ..lowered_module import functions
from ..passes import has_pass, run_passes

SET_BLOCKTIME = "kmp_set_blocktime"
BLOCKTIME_MS = 1  # how long an idle worker spins before it sleeps (see above)
# The calls every public function of a module with OpenMP starts with, in this order.
RUNTIME_SETTINGS = ((SET_BLOCKTIME, BLOCKTIME_MS),)


def _parallel_functions(module: ir.Module) -> list:
    """The public functions with a body when the module has an ``omp.parallel``
    (in them or in the kernel functions they call), else none."""
    if not walk_ops(module.operation, {"omp.parallel"}):
        return []
    return [f for f in functions(module) if is_public(f) and len(f.regions[0].blocks) > 0]


def configure_runtime(module: ir.Module) -> int:
    """Start every public function with the calls of ``RUNTIME_SETTINGS`` (see the
    module docstring), declaring the callees. Returns how many functions got them."""
    func, arith = _mlir.func, _mlir.arith
    functions = _parallel_functions(module)
    if not functions:
        return 0
    i32 = ir.IntegerType.get_signless(32)
    declared = {ir.StringAttr(op.attributes["sym_name"]).value
                for op in module.body.operations if op.operation.name == "func.func"}
    with ir.InsertionPoint.at_block_begin(module.body):
        for callee, _ in RUNTIME_SETTINGS:
            if callee not in declared:
                decl = func.FuncOp(callee, ([i32], []))
                decl.attributes["sym_visibility"] = ir.StringAttr.get("private")
    for f in functions:
        block = f.regions[0].blocks[0]
        with ir.InsertionPoint.at_block_begin(block):
            for callee, value in RUNTIME_SETTINGS:
                func.call([], ir.FlatSymbolRefAttr.get(callee), [arith.constant(i32, value)])
    return len(functions)


def parallelize(module: ir.Module, threads: int) -> bool:
    """OpenMP for the ``scf.forall`` loops when ``threads`` > 1, else plain loops;
    returns whether the module now runs OpenMP."""
    if not walk_ops(module.operation, {"scf.forall"}):
        return False
    if threads == 1:
        run_passes("scf-forall-to-for" if has_pass("scf-forall-to-for") else "scf-forall-to-parallel", module)
        return False
    run_passes("scf-forall-to-parallel,convert-scf-to-openmp", module)
    if not walk_ops(module.operation, {"omp.parallel"}):
        return False
    configure_runtime(module)
    return True


__all__ = ["BLOCKTIME_MS", "RUNTIME_SETTINGS", "SET_BLOCKTIME", "configure_runtime", "parallelize"]
