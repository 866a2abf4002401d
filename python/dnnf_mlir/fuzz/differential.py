"""Runs a batch of generated graphs through every path and compares all the results.

For each case: onnxruntime (graph optimizations off, one thread) and the reference
interpreter on the imported ECG module must agree; the module after ``ecg-rewrite``,
after ``ecg-fuse{mode=M}`` for every mode (whose fused ops must also keep the
planner's limits: ``invariants``), and after ``ecg-outline-kernels`` (interpreted)
must compute what the imported one does; and so must the compiled
host code of every mode on one thread, and of the dnnf mode on two threads for the
cases that ask for it. The compiled functions of the whole batch share one module
and one JIT compilation (kernels that print alike are compiled once); when that
module fails to build, each case is compiled alone to find the culprit.

Tolerance, element by element: ``|got - want| <= ATOL * max(1, scale) + RTOL * |want|``
where ``scale`` is the output's typical magnitude as the generator tracked it.
Every path computes in float32 in another order (tiled and vectorized sums, fused
epilogues, rewritten algebra, onnxruntime's own kernels, polynomial exp/tanh): each
rounding costs 2^-24 relative, and a sum of K terms of magnitude ``scale`` drifts by
about sqrt(K) of them, at most ~2e-5 * scale for the largest K drawn here (4096).
ATOL = 1e-4 leaves a factor of 5 over that for elements that cancel to near 0;
RTOL = 1e-4 covers the rest (transcendental approximations are good to a few ulp,
and guarded operands keep condition numbers small). A wrong index, a dropped
epilogue or a misplaced window is off by the operands' own magnitude, far above it.
Integer and boolean outputs must be equal. The test is ``checking.compare``'s, the one
dnnf-run --check and the tests use.
"""

from __future__ import annotations

import re
import traceback
from dataclasses import dataclass

import numpy as np
import onnxruntime as ort

from .._mlir import ir
from ..checking import compare
from ..codegen import UnsupportedTargetError
from ..compiler.weights import externalize_weights
from ..context import make_context
from ..fusion import MODES
from ..fusion.profiling import compile_for_host
from ..frontend.onnx_importer import import_onnx
from ..interpreter import interpret
from ..transforms.pipeline import build_pass_manager
from .graph import Case
from .invariants import fused_op_problems

RTOL = 1e-4
ATOL = 1e-4
ENTRY = "main"
# A clean refusal of the code generator (an op or a variant it has no lowering for),
# reported as kind ``unsupported``: a known limit, not a wrong result.
CASE_PREFIX = "case"
LOCATED = re.compile(rf'"{CASE_PREFIX}([0-9]+)/')
UNSUPPORTED = re.compile(r"failed to legalize operation '([^']+)': (no lowering to linalg|.*?(?= is not supported by))")


@dataclass(frozen=True)
class Failure:
    """What went wrong with case ``case`` of a batch: ``kind`` (an exception in a
    stage, or a ``mismatch``), ``stage`` (which path), and the details."""

    case: int
    kind: str
    stage: str
    detail: str

    @property
    def signature(self) -> str:
        return f"{self.kind} in {self.stage}"

    def __str__(self) -> str:
        return f"{self.signature}: {self.detail}"


def difference(got, want, scale: float) -> str:
    """'' when ``got`` matches ``want`` within the tolerance (``checking.compare``'s
    element-wise test, ATOL scaled by the output's magnitude), else where and by how much."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype:
        return f"got {got.dtype} elements, expected {want.dtype}"
    verdict = compare(got, want, rtol=RTOL, atol=ATOL * max(1.0, scale))
    return "" if verdict.ok else str(verdict)


def onnxruntime_outputs(case: Case, inputs: list) -> list:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors are raised, not also logged
    session = ort.InferenceSession(case.to_bytes(), options, providers=["CPUExecutionProvider"])
    names = [i.name for i in case.model.graph.input]
    run = ort.RunOptions()
    run.log_severity_level = 3
    return session.run(None, dict(zip(names, inputs)), run)


def located(model, index: int):
    """``model`` with its nodes named ``case<index>/<op type>``: the name is each op's
    location, so a diagnostic about a module of many cases names the case."""
    named = type(model)()
    named.CopyFrom(model)
    for node in named.graph.node:
        node.name = f"{CASE_PREFIX}{index}/{node.op_type}"
    return named


def run_passes(module: ir.Module, pipeline: str) -> ir.Module:
    build_pass_manager(f"builtin.module({pipeline})", module.context).run(module.operation)
    return module


def copy_function(function, module: ir.Module, name: str):
    """A copy of ``function`` at the end of ``module``, named ``name``."""
    copy = function.operation.clone(ip=ir.InsertionPoint(module.body))
    copy.attributes["sym_name"] = ir.StringAttr.get(name)
    return copy


def entry_of(module: ir.Module):
    return next(op for op in module.body.operations if ir.StringAttr(op.attributes["sym_name"]).value == ENTRY)


def fresh_module(function, context) -> ir.Module:
    with context, ir.Location.unknown():
        module = ir.Module.create()
        copy_function(function, module, ENTRY)
    return module


class Batch:
    """One batch of cases and the failures found so far (``failures``)."""

    def __init__(self, cases: list, seed: int = 0):
        self.cases = cases
        self.inputs = [case.inputs(seed) for case in cases]
        self.failures = []
        self.context = make_context()
        self.expected = {}  # case -> the interpreter's outputs on the imported module
        self.fused = {}  # (case, mode) -> a module whose @main is the fused function

    def fail(self, case: int, kind: str, stage: str, detail: str) -> None:
        refusal = UNSUPPORTED.search(detail)
        if refusal:  # named by the op and the variant, without the sizes
            kind, stage = "unsupported", f"{refusal[1]}: {re.sub(r'[0-9]+', 'N', refusal[2])}"
        self.failures.append(Failure(case, kind, stage, " | ".join(detail.strip().splitlines())[:600]))

    def compare(self, case: int, stage: str, got: list) -> bool:
        scales = self.cases[case].output_scales
        if len(got) != len(self.expected[case]):
            self.fail(case, "mismatch", stage, f"{len(got)} outputs, expected {len(self.expected[case])}")
            return False
        for index, (value, want) in enumerate(zip(got, self.expected[case])):
            problem = difference(value, want, scales[index])
            if problem:
                self.fail(case, "mismatch", stage, f"output {index}: {problem}")
                return False
        return True

    def guarded(self, case: int, stage: str, action):
        """``action()``, or None with the exception recorded as a failure of ``stage``."""
        try:
            return action()
        except UnsupportedTargetError:  # code for another CPU (DNNF_CPU): not a finding
            raise
        except Exception as error:  # any other exception is a finding, named by its stage
            self.record(case, stage, error)
            return None

    def record(self, case: int, stage: str, error: Exception) -> None:
        where = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
        origin = f" ({where.filename}:{where.lineno})" if where else ""
        self.fail(case, type(error).__name__, stage, f"{error}{origin}")

    def run(self) -> list:
        for index in range(len(self.cases)):
            self.check_graph(index)
        self.check_compiled(1, MODES)
        self.check_compiled(2, ("dnnf",))
        return self.failures

    def check_graph(self, index: int) -> None:
        """onnxruntime, the interpreter, ecg-rewrite and every fusion mode on case ``index``."""
        case, inputs = self.cases[index], self.inputs[index]
        reference = self.guarded(index, "onnxruntime", lambda: onnxruntime_outputs(case, inputs))
        imported = self.guarded(index, "import", lambda: import_onnx(located(case.model, index), context=self.context))
        if reference is None or imported is None:
            return
        expected = self.guarded(index, "interpreter", lambda: interpret(imported, inputs))
        if expected is None:
            return
        self.expected[index] = expected
        if not self.compare(index, "interpreter vs onnxruntime", reference):
            return
        rewritten = fresh_module(entry_of(imported), self.context)
        if self.guarded(index, "ecg-rewrite", lambda: run_passes(rewritten, "ecg-rewrite")) is None:
            return
        if not self.interpreted(index, "ecg-rewrite", rewritten):
            return
        for mode in MODES:
            stage = f"ecg-fuse{{mode={mode}}}"
            fused = self.guarded(index, stage, lambda: run_passes(fresh_module(entry_of(rewritten), self.context), stage))
            if fused is None:
                continue
            problems = fused_op_problems(entry_of(fused))
            if problems:
                self.fail(index, "invariant", stage, "; ".join(problems))
            elif self.interpreted(index, stage, fused):
                self.fused[index, mode] = fused

    def interpreted(self, index: int, stage: str, module: ir.Module, entry: str = ENTRY) -> bool:
        got = self.guarded(index, f"interpreter after {stage}", lambda: interpret(module, self.inputs[index], entry))
        return got is not None and self.compare(index, f"interpreted after {stage}", got)

    def check_compiled(self, threads: int, modes: tuple) -> None:
        """Outline, convert, compile and run the fused functions of ``modes`` of the cases
        that run on ``threads``, all in one module. When a step fails for the module,
        the cases that cause it are found (bisecting, or one at a time), recorded and left out."""
        cases = [i for i in range(len(self.cases)) if threads in self.cases[i].threads
                 and any((i, mode) in self.fused for mode in modes)]
        suffix = f", {threads} thread{'s' if threads > 1 else ''}"
        if not cases:
            return
        try:
            module, names = self.outlined(cases, modes)
        except Exception:  # find the cases that cannot be outlined
            cases = self.survivors(cases, modes, "ecg-outline-kernels" + suffix, outline_only=True)
            module, names = self.outlined(cases, modes)
        if threads == 1:
            for (case, mode), name in names.items():
                self.interpreted(case, f"ecg-outline-kernels ({mode})", module, name)
        try:
            weights = converted(module, names)
        except Exception as error:  # leave out the cases the diagnostics name, else bisect
            stage = "convert-ecg-to-linalg" + suffix
            culprits = {int(i) for i in LOCATED.findall(str(error))}
            for case in culprits:
                lines = [line for line in str(error).splitlines() if f'"{CASE_PREFIX}{case}/' in line]
                self.fail(case, type(error).__name__, stage, "\n".join(lines))
            cases = [i for i in cases if i not in culprits]
            try:
                module, names = self.outlined(cases, modes)
                weights = converted(module, names)
            except Exception:
                cases = self.survivors(cases, modes, stage)
                module, names = self.outlined(cases, modes)
                weights = converted(module, names)
        if not names:
            return
        try:
            compiled = compile_for_host(module, threads=threads)
        except Exception:  # find the cases that cannot be compiled
            for case in cases:
                module, names = self.outlined([case], modes)
                weights = converted(module, names)
                compiled = self.guarded(case, "compilation" + suffix, lambda: compile_for_host(module, threads=threads))
                if compiled is not None:
                    self.run_compiled(compiled, names, weights, suffix)
            return
        self.run_compiled(compiled, names, weights, suffix)

    def outlined(self, cases: list, modes: tuple) -> tuple:
        """(module, (case, mode) -> function name): copies of the fused functions of
        ``cases`` and ``modes`` in one module, through ecg-outline-kernels."""
        with self.context, ir.Location.unknown():
            module = ir.Module.create()
            names = {}
            for case in cases:
                for mode in modes:
                    if (case, mode) in self.fused:
                        names[case, mode] = f"case{case}_{mode}"
                        copy_function(entry_of(self.fused[case, mode]), module, names[case, mode])
        return run_passes(module, "ecg-outline-kernels"), names

    def survivors(self, cases: list, modes: tuple, stage: str, outline_only: bool = False) -> list:
        """The ``cases`` whose functions outline (and convert to linalg), found by
        bisection; the others are recorded as failures of ``stage``."""
        try:
            module, names = self.outlined(cases, modes)
            if not outline_only:
                converted(module, names)
            return cases
        except Exception as error:
            if len(cases) == 1:
                self.record(cases[0], stage, error)
                return []
        half = len(cases) // 2
        return (self.survivors(cases[:half], modes, stage, outline_only)
                + self.survivors(cases[half:], modes, stage, outline_only))

    def run_compiled(self, compiled, names: dict, weights: dict, suffix: str) -> None:
        for (case, mode), name in names.items():
            stage = f"compiled {mode}{suffix}"
            got = self.guarded(case, stage, lambda: compiled[name](*self.inputs[case], *weights[case, mode]))
            if got is not None:
                self.compare(case, stage, got)


def converted(module: ir.Module, names: dict) -> dict:
    """Convert the outlined ``module`` to linalg and make each function's weights its
    trailing arguments, as dnnf-compile does; (case, mode) -> their values."""
    run_passes(module, "convert-ecg-to-linalg")
    return {entry: externalize_weights(module, name) for entry, name in names.items()}


def check_cases(cases: list, seed: int = 0) -> list:
    """The failures of ``cases`` (a list of ``Case``), compiled and compared as one batch."""
    return Batch(cases, seed).run()


__all__ = ["ATOL", "Batch", "Failure", "RTOL", "check_cases", "difference", "onnxruntime_outputs"]
