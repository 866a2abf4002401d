"""The CPU targets' threads: parallel loops become OpenMP (LLVM's libomp).

``parallelize(module, threads)`` turns the ``scf.forall`` loops of the schedules into
OpenMP parallel loops (several threads) or plain loops (one). No ``num_threads``
clause: the thread count stays a run-time choice (``omp_set_num_threads`` /
``OMP_NUM_THREADS``), e.g. one thread for a benchmark.

``sleep_when_idle``: every public function of a module that uses OpenMP first calls
``kmp_set_blocktime(0)``. By default libomp's workers spin for 200 ms after each
parallel region waiting for the next one. On a machine with more runnable threads
than cores (or in a VM, where a spinning vCPU is descheduled by pause-loop exiting)
the spinning workers take the cores from the threads doing the work and every
fork / join costs 20-40 us instead of ~3 us: a 2-thread SqueezeNet ran 2x slower
than on one thread. Sleeping at once costs a futex wake per region (~2 us) on an
idle machine. The call only sets the calling thread's ICV, hence once per call of
the entry point (from whichever thread makes it), also when the parallel regions are
in the kernel functions it calls.
"""

from __future__ import annotations

from ... import _mlir
from ..._mlir import ir
from ...kernel_functions import is_public
from ..lowered_module import functions, walk_ops
from ..passes import has_pass, run_passes

SET_BLOCKTIME = "kmp_set_blocktime"


def _parallel_functions(module: ir.Module) -> list:
    """The public functions with a body when the module has an ``omp.parallel``
    (in them or in the kernel functions they call), else none."""
    if not walk_ops(module.operation, {"omp.parallel"}):
        return []
    return [f for f in functions(module) if is_public(f) and len(f.regions[0].blocks) > 0]


def sleep_when_idle(module: ir.Module) -> int:
    """Make the OpenMP workers sleep right after each parallel region (see the module
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
            zero = arith.constant(i32, 0)
            func.call([], ir.FlatSymbolRefAttr.get(SET_BLOCKTIME), [zero])
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


__all__ = ["SET_BLOCKTIME", "parallelize", "sleep_when_idle"]
