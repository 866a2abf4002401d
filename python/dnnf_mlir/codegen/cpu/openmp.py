"""The CPU targets' threads: parallel loops become OpenMP (LLVM's libomp).

``parallelize(module, threads)`` turns the ``scf.forall`` loops of the schedules into
OpenMP parallel loops (several threads) or plain loops (one). No ``num_threads``
clause: the thread count stays a run-time choice (``omp_set_num_threads`` /
``OMP_NUM_THREADS``), e.g. one thread for a benchmark.

``sleep_when_idle``: every public function of a module that uses OpenMP first calls
``kmp_set_blocktime(BLOCKTIME_MS)``: after a parallel region libomp's workers spin
that long for the next one, then sleep. The parallel regions of one inference are
microseconds apart, so the workers stay awake through it and sleep soon after it.
Both libomp extremes are slow. Its default, 200 ms of spinning, keeps the cores busy
long after an inference, taking them from whatever runs next (another model,
onnxruntime's threads in dnnf-bench). Sleeping at once (0) makes every region wake a
sleeping worker, which in a VM costs an inter-processor interrupt and a vCPU
reschedule: measured on a 2-vCPU Zen 5 VM, SqueezeNet and DistilBERT on 2 threads took
9.8 ms and 48.9 ms with 0 and 3.3 ms and 31.9 ms with 1 ms (one thread: 5.5 ms and
60.8 ms). The call only sets the calling thread's ICV, hence once per call of the
entry point (from whichever thread makes it), also when the parallel regions are in
the kernel functions it calls.
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


def _parallel_functions(module: ir.Module) -> list:
    """The public functions with a body when the module has an ``omp.parallel``
    (in them or in the kernel functions they call), else none."""
    if not walk_ops(module.operation, {"omp.parallel"}):
        return []
    return [f for f in functions(module) if is_public(f) and len(f.regions[0].blocks) > 0]


def sleep_when_idle(module: ir.Module) -> int:
    """Make the OpenMP workers sleep when idle for ``BLOCKTIME_MS`` (see the module
    docstring). Returns how many functions got the call."""
    func, arith = _mlir.func, _mlir.arith
    functions = _parallel_functions(module)
    if not functions:
        return 0
    i32 = ir.IntegerType.get_signless(32)
    declared = any(
        op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == SET_BLOCKTIME
        for op in module.body.operations
    )
    if not declared:
        with ir.InsertionPoint.at_block_begin(module.body):
            decl = func.FuncOp(SET_BLOCKTIME, ([i32], []))
            decl.attributes["sym_visibility"] = ir.StringAttr.get("private")
    for f in functions:
        block = f.regions[0].blocks[0]
        with ir.InsertionPoint.at_block_begin(block):
            blocktime = arith.constant(i32, BLOCKTIME_MS)
            func.call([], ir.FlatSymbolRefAttr.get(SET_BLOCKTIME), [blocktime])
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
    sleep_when_idle(module)
    return True


__all__ = ["BLOCKTIME_MS", "SET_BLOCKTIME", "parallelize", "sleep_when_idle"]
