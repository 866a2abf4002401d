"""From linalg on tensors to machine code: ``lower_to_llvm``, ``jit``, ``emit_llvm_ir``,
``compile_object``.

``lower_to_llvm(module, target, threads)`` runs, in order (``PIPELINE_STAGES`` names
the stages; ``dump(stage, module)`` sees the module after each):

1. ``prepare``: ``canonicalize, cse, linalg-fuse-elementwise-ops, canonicalize, cse``;
   then rewrites on linalg, in order: exp/erf/tanh/powf as vectorizable arithmetic
   (``approximations.py``); contractions written as ``linalg.generic`` rebuilt as
   ``linalg.matmul`` / ``batch_matmul``; batch-1 Gemms with a transposed weight
   marked as matrix-vector products (``matvec.py``); matmuls reading an operand
   transposed get a ``linalg.transpose`` + the plain op; grouped convolutions split
   per group (``convolutions.py``); pooling and depthwise convolutions become
   element-wise ops over the taps of their window (``windows.py``); single-image 1x1
   convolutions become ``linalg.matmul`` on collapsed shapes; other NCHW
   convolutions are widened to whole vectors along the output width, strided ones
   split by phase.
2. ``schedule``: the transform-dialect script of ``schedule.plan`` (tiling, packing,
   vectorization of every linalg op; see ``schedule.py``), then ``canonicalize, cse``.
3. ``bufferize``: ``one-shot-bufferize{bufferize-function-boundaries
   function-boundary-type-conversion=identity-layout-map}``,
   ``buffer-results-to-out-params{modify-public-functions}``; results are written in
   place into the out-parameters; remaining ``memref.copy`` become ``linalg.copy``.
4. ``lower-vectors``: transform script vectorizing those copies (split among the
   threads when big), ``hoist_redundant_vector_transfers``, masked transfers lowered;
   ``buffer-loop-hoisting`` + ``buffer-deallocation-pipeline``; then the vector
   lowering patterns: ``lower_contraction`` (outer products), ``lower_outerproduct``
   (FMAs), transfer permutations, multi-reductions, ``lower_transfer`` (rank 1),
   broadcasts, transposes, shape casts.
5. ``parallel`` (threads > 1): ``scf-forall-to-parallel``,
   ``convert-scf-to-openmp``: OpenMP, run by the LLVM OpenMP runtime
   (libomp), whose workers the entry points make sleep right after each region
   (``openmp.sleep_when_idle``). With one thread, ``scf.forall`` (from big copies)
   becomes ``scf.for``. Then a big function (more than ``2 * SPLIT_OPS`` nested
   ops) is split into private noinline pieces called in order (``split_functions``):
   LLVM's optimizer and code generator are superlinear in the size of a function.
6. ``llvm``: ``convert-linalg-to-loops, convert-vector-to-scf{full-unroll}, lower-affine,
   expand-strided-metadata, lower-affine, finalize-memref-to-llvm, convert-scf-to-cf,
   convert-vector-to-llvm, convert-math-to-funcs, convert-math-to-llvm,
   convert-math-to-libm, convert-openmp-to-llvm, convert-to-llvm,
   reconcile-unrealized-casts, canonicalize, cse``; the module gets the target triple,
   every ``llvm.func`` the ``target_cpu`` / ``target_features`` of its CPU (all but the
   host's native CPU, which the JIT and ``llc -mcpu=native`` find by themselves).

``jit(module)`` compiles the LLVM-dialect module with MLIR's ExecutionEngine at -O3
(for the host CPU and all its features, unless the functions name another; libomp is
loaded first when the module uses OpenMP) and returns callables over numpy arrays;
code for a CPU with features this machine lacks raises ``UnsupportedCpuError`` when
called. ``emit_llvm_ir`` translates to LLVM IR text; ``compile_object`` runs
``opt-22 -O3`` and ``llc-22`` on it for any triple, e.g. AArch64 with NEON (bitcode
between the two); a big host module (``SPLIT_IR_CHARS``) is split by ``llvm-split``
and its pieces compiled in parallel, joined by ``ld -r``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import re
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np

from .. import _mlir
from .._mlir import PassManager, ir
from . import approximations as _approximations
from . import convolutions as _convolutions
from . import matvec as _matvec
from . import openmp as _openmp
from . import schedule as _schedule
from . import windows as _windows
from .cpu import UnsupportedCpuError
from .target import Target, get_target
from .toolchain import find_llc, find_llvm_split, find_opt

SIGNATURES = "dnnf.codegen.signatures"
USES_OPENMP = "dnnf.codegen.openmp"
TARGET_ATTR = "dnnf.codegen.target"
CPU_ATTR = "dnnf.codegen.cpu"

PIPELINE_STAGES = ("prepare", "schedule", "bufferize", "lower-vectors", "parallel", "llvm")

PREPARE = "canonicalize,cse,linalg-fuse-elementwise-ops,canonicalize,cse"
BUFFERIZE = (
    "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},"
    "buffer-results-to-out-params{modify-public-functions},cse,canonicalize"
)
# Packing buffers allocated in a tile loop move out of it (not out of scf.forall: each
# thread keeps its own); every allocation gets its deallocation. Before OpenMP, whose
# loop wrappers must contain nothing but the loop.
DEALLOCATE = "func.func(buffer-loop-hoisting),buffer-deallocation-pipeline"
# memref (and OpenMP's memref.alloca_scope, single-block only) before scf -> cf.
TO_LLVM = (
    "func.func(convert-linalg-to-loops),convert-vector-to-scf{full-unroll},"
    "lower-affine,expand-strided-metadata,lower-affine,finalize-memref-to-llvm,convert-scf-to-cf,"
    "convert-vector-to-llvm{vector-contract-lowering=outerproduct vector-transpose-lowering=eltwise},"
    "convert-math-to-funcs{convert-ctlz=false},convert-math-to-llvm,convert-math-to-libm,"
    "finalize-memref-to-llvm,convert-openmp-to-llvm,convert-to-llvm,reconcile-unrealized-casts,"
    "canonicalize,cse"
)


class CodegenError(Exception):
    pass


def _run(pipeline: str, module: ir.Module):
    PassManager.parse(f"builtin.module({pipeline})", module.context).run(module.operation)


def _walk(module_op, names) -> list:
    found = []

    def visit(op):
        if op.name in names:
            found.append(op)
        return ir.WalkResult.ADVANCE

    module_op.walk(visit)
    return found


def _functions(module: ir.Module):
    return [op for op in module.body.operations if op.operation.name == "func.func"]


def _sym_name(func) -> str:
    return ir.StringAttr(func.attributes["sym_name"]).value


def _is_public(func) -> bool:
    return "sym_visibility" not in func.attributes or ir.StringAttr(func.attributes["sym_visibility"]).value == "public"


# ------------------------------------------------------------------------ signatures

_DTYPES = {
    "f32": np.float32,
    "f64": np.float64,
    "f16": np.float16,
    "i64": np.int64,
    "i32": np.int32,
    "i16": np.int16,
    "i8": np.int8,
    "i1": np.bool_,
    "ui64": np.uint64,
    "ui32": np.uint32,
    "ui16": np.uint16,
    "ui8": np.uint8,
}


def _type_spec(t: ir.Type) -> str:
    try:
        shaped = ir.ShapedType(t)
    except ValueError:
        return str(t)
    dims = ",".join("?" if d == ir.ShapedType.get_dynamic_size() else str(d) for d in shaped.shape)
    return f"{shaped.element_type}[{dims}]"


def _parse_spec(spec: str):
    m = re.fullmatch(r"(\w+)\[([^\]]*)\]", spec)
    if not m or m.group(1) not in _DTYPES:
        raise CodegenError(f"unsupported argument type {spec}")
    dims = tuple(int(d) if d != "?" else -1 for d in m.group(2).split(",") if d != "")
    return _DTYPES[m.group(1)], dims


def _record_signatures(module: ir.Module):
    entries = {}
    for func in _functions(module):
        if not _is_public(func) or len(func.regions[0].blocks) == 0:
            continue
        ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        text = ";".join(_type_spec(t) for t in ftype.inputs) + "->" + ";".join(_type_spec(t) for t in ftype.results)
        entries[_sym_name(func)] = ir.StringAttr.get(text)
        func.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
    module.operation.attributes[SIGNATURES] = ir.DictAttr.get(entries)


def signatures(module: ir.Module) -> dict:
    """{function: ([(dtype, shape)] inputs, [(dtype, shape)] outputs)} recorded by lower_to_llvm."""
    if SIGNATURES not in module.operation.attributes:
        raise CodegenError("the module was not lowered by dnnf_mlir.codegen.lower_to_llvm")
    result = {}
    for named in ir.DictAttr(module.operation.attributes[SIGNATURES]):
        text = ir.StringAttr(named.attr).value
        ins, outs = text.split("->")
        result[named.name] = (
            [_parse_spec(s) for s in ins.split(";") if s],
            [_parse_spec(s) for s in outs.split(";") if s],
        )
    return result


# ------------------------------------------------------------------------ bufferization fix-ups


def _erase_with_deallocs(value):
    for use in list(value.uses):
        if use.owner.name == "memref.dealloc":
            use.owner.erase()


def _results_in_place(module: ir.Module):
    """Write results straight into the out-parameters.

    ``buffer-results-to-out-params`` copies each returned buffer into its new
    out-parameter; when that buffer is a static allocation of the function, the
    allocation is replaced by the out-parameter and the copy disappears (what the
    pass's ``hoist-static-allocs`` option does, which needs an interface this build
    does not register for memref.alloc).
    """
    for func in _functions(module):
        if len(func.regions[0].blocks) == 0:
            continue
        block = func.regions[0].blocks[0]
        for op in list(block.operations):
            if op.name != "memref.copy":
                continue
            source, target = op.operands
            if not isinstance(target, ir.BlockArgument) or target.owner != block:
                continue
            alloc = source.owner if isinstance(source, ir.OpResult) else None
            if alloc is None or alloc.name != "memref.alloc" or alloc.parent != op.parent:
                continue
            if source.type != target.type or len(list(target.uses)) != 1 or len(alloc.operands) != 0:
                continue
            _erase_with_deallocs(source)
            op.erase()
            source.replace_all_uses_with(target)
            alloc.erase()


def _copies_to_linalg(module: ir.Module) -> list:
    """memref.copy -> linalg.copy (vectorized later; the wheel ships no ``memrefCopy``).

    A fill of a fresh buffer right before a copy that overwrites all of it (what a
    ``tensor.pad`` used for packing bufferizes to) is erased. Returns ``(tag, shape)``
    of the static copies for the vectorization script.
    """
    linalg = _mlir.linalg
    copies = []
    for op in _walk(module.operation, {"memref.copy"}):
        source, target = op.operands
        ops = list(op.operation.block.operations)
        position = ops.index(op.operation)
        previous = ops[position - 1] if position > 0 else None
        fresh = isinstance(target, ir.OpResult) and target.owner.name == "memref.alloc"
        if (
            fresh
            and previous is not None
            and previous.name in ("linalg.fill", "linalg.map")
            and len(previous.results) == 0
            and list(previous.operands)[-1] == target
        ):
            previous.erase()
        shape = ir.MemRefType(target.type).shape
        with ir.InsertionPoint(op), op.location:
            linalg.copy(source, outs=[target])
        ops = list(op.operation.block.operations)
        new_op = ops[ops.index(op.operation) - 1]
        # i1 copies stay scalar: vectors of i1 are loaded / stored as packed bits.
        if shape and all(d != ir.ShapedType.get_dynamic_size() for d in shape) and not _schedule._is_i1(target):
            tag = f"c{len(copies)}"
            new_op.attributes[_schedule.TAG] = ir.StringAttr.get(tag)
            copies.append((tag, tuple(shape)))
        op.erase()
    return copies


# ------------------------------------------------------------------------ splitting

# Ops (nested ones included) per piece of a big function: LLVM's optimizer and code
# generator are superlinear in the size of a function.
SPLIT_OPS = 6000
_CLONED = {"arith.constant", "ub.poison", "memref.get_global", "llvm.mlir.constant"}


def _top_level(op, function):
    while op is not None:
        parent = op.parent
        if parent is None:
            return None
        if parent == function:
            return op
        op = parent
    return None


def split_functions(module: ir.Module, max_ops: int = SPLIT_OPS) -> int:
    """Split the body of each big function (straight-line, on buffers) into private
    noinline functions of about ``max_ops`` nested ops, called in order.

    Constants (and ``memref.get_global``) used by a piece are cloned into it (as
    arguments they would hide loop bounds); other values crossing pieces become
    arguments / results. Returns the number of pieces made.
    """
    made = 0
    for func in _functions(module):
        if len(func.regions[0].blocks) == 0:
            continue
        function = func.operation
        block = func.regions[0].blocks[0]
        operations = list(block.operations)
        body, terminator = operations[:-1], operations[-1]
        sizes = []
        for op in body:
            count = [0]

            def visit(_op, count=count):
                count[0] += 1
                return ir.WalkResult.ADVANCE

            op.walk(visit)
            sizes.append(count[0])
        if sum(sizes) <= 2 * max_ops:
            continue
        if any(op.name == "memref.alloca" for op in body):
            continue  # a stack buffer must not outlive its piece
        chunks, current, total = [], [], 0
        for op, size in zip(body, sizes):
            if op.name in _CLONED and not op.regions:
                continue  # stays in the function; cloned where used
            current.append(op)
            total += size
            if total >= max_ops:
                chunks.append(current)
                current, total = [], 0
        if current:
            chunks.append(current)
        if len(chunks) < 2:
            continue
        name = _sym_name(func)
        for index, chunk in enumerate(chunks):
            members = set(chunk)
            live_in, cloned, seen = [], [], set()

            def visit(op, members=members, live_in=live_in, cloned=cloned, seen=seen):
                for value in op.operands:
                    if value in seen:
                        continue
                    if isinstance(value, ir.OpResult):
                        owner = value.owner
                        if owner.parent != function or owner in members:
                            continue
                        seen.add(value)
                        if owner.name in _CLONED and len(owner.operands) == 0 and not owner.regions:
                            cloned.append(value)
                        else:
                            live_in.append(value)
                    else:
                        if ir.BlockArgument(value).owner == block:
                            seen.add(value)
                            live_in.append(value)
                return ir.WalkResult.ADVANCE

            for op in chunk:
                op.walk(visit)
            live_out = [
                result
                for op in chunk
                for result in op.results
                if any(_top_level(use.owner, function) not in members for use in result.uses)
            ]
            with ir.InsertionPoint(function), function.location:
                part = _mlir.func.FuncOp(
                    f"{name}_part{index}", ([v.type for v in live_in], [v.type for v in live_out]), visibility="private"
                )
                # func-to-llvm turns an "llvm."-prefixed attribute into the llvm.func one
                part.attributes["llvm.no_inline"] = ir.UnitAttr.get()
                part_block = part.add_entry_block()
            with ir.InsertionPoint(part_block), function.location:
                ret = _mlir.func.ReturnOp(live_out)
            for op in chunk:
                op.move_before(ret)
            part_op = part.operation
            replacements = list(zip(live_in, part_block.arguments))
            with ir.InsertionPoint.at_block_begin(part_block):
                for value in cloned:
                    replacements.append((value, value.owner.clone().results[0]))
            for value, new in replacements:
                for use in list(value.uses):
                    if _top_level(use.owner, part_op) is not None:
                        use.owner.operands[use.operand_number] = new
            with ir.InsertionPoint(terminator), function.location:
                call = _mlir.func.CallOp(part, live_in)
            for value, result in zip(live_out, call.results):
                for use in list(value.uses):
                    if _top_level(use.owner, part_op) is None:
                        use.owner.operands[use.operand_number] = result
            made += 1
    return made


# ------------------------------------------------------------------------ the pipeline


def _apply_script(module: ir.Module, text: str, name: str, what: str):
    """Run the transform named sequence ``@name`` of ``text``; a failure is a
    CodegenError saying ``what`` failed."""
    interpreter = _mlir.transform_interpreter
    try:
        script = ir.Module.parse(text, module.context)
        entry = None
        for op in script.body.operations:
            if op.operation.name == "transform.named_sequence" and ir.StringAttr(op.attributes["sym_name"]).value == name:
                entry = op
        interpreter.apply_named_sequence(module.operation, entry, script)
    except (ValueError, ir.MLIRError) as e:
        raise CodegenError(f"{what} failed: {e}") from None


@dataclass
class LoweringReport:
    """What ``lower_to_llvm`` did: the kernels it planned and the transform scripts."""

    target: Target
    threads: int
    kernels: list
    schedule_script: str
    vector_script: str


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
        _record_signatures(module)
        _run(PREPARE, module)
        if dump:
            dump("prepare", module)

        rewritten = _approximations.approximate_math(module)
        rewritten += _schedule.generic_contractions_to_matmul(module)
        rewritten += _matvec.rewrite_matvecs(module, target.lanes(32))
        rewritten += _schedule.normalize_matmuls(module)
        rewritten += _convolutions.split_grouped_convolutions(module)
        rewritten += _windows.windows_to_taps(module, target.lanes(32))
        rewritten += _schedule.conv1x1_to_matmul(module)
        rewritten += _schedule.pad_convolutions(module, target)
        rewritten += _schedule.split_strided_convolutions(module)
        if rewritten:
            _run("canonicalize,cse", module)
        script, kernels = _schedule.plan(module, target, threads)
        _apply_script(module, script, "__dnnf_codegen", "transform schedule")
        _run("canonicalize,cse", module)
        if dump:
            dump("schedule", module)

        _run(BUFFERIZE, module)
        _results_in_place(module)
        copies = _copies_to_linalg(module)
        _run("canonicalize,cse", module)
        if dump:
            dump("bufferize", module)

        vector_script = _schedule.post_bufferization_script(target, copies, threads)
        _apply_script(module, vector_script, "__dnnf_vectorize_buffers", "vectorizing copies")
        _run("canonicalize,cse", module)
        _run(DEALLOCATE, module)
        lowering = _schedule.vector_lowering_script()
        _apply_script(module, lowering, "__dnnf_lower_vectors", "vector lowering")
        _run("cse", module)
        if dump:
            dump("lower-vectors", module)

        uses_openmp = False
        if _walk(module.operation, {"scf.forall"}):
            if threads > 1:
                # No num_threads clause: the thread count stays a run-time choice
                # (omp_set_num_threads / OMP_NUM_THREADS), e.g. one thread for a benchmark.
                _run("scf-forall-to-parallel,convert-scf-to-openmp", module)
                uses_openmp = bool(_walk(module.operation, {"omp.parallel"}))
                if uses_openmp:
                    _openmp.sleep_when_idle(module)
            else:
                _run("scf-forall-to-for" if _has_pass("scf-forall-to-for") else "scf-forall-to-parallel", module)
        split_functions(module)
        if dump:
            dump("parallel", module)

        _run(TO_LLVM, module)
        _set_llvm_target(module, target)
        if uses_openmp:
            module.operation.attributes[USES_OPENMP] = ir.UnitAttr.get()
        module.operation.attributes[TARGET_ATTR] = ir.StringAttr.get(target.name)
        module.operation.attributes[CPU_ATTR] = ir.StringAttr.get(target.cpu)
        if dump:
            dump("llvm", module)
    return LoweringReport(target, threads, kernels, script, vector_script + lowering)


_PASS_CACHE: dict = {}


def _has_pass(name: str) -> bool:
    if name not in _PASS_CACHE:
        try:
            PassManager.parse(f"builtin.module({name})")
            _PASS_CACHE[name] = True
        except Exception:  # noqa: BLE001 - any parse failure means "not registered"
            _PASS_CACHE[name] = False
    return _PASS_CACHE[name]


def _set_llvm_target(module: ir.Module, target: Target):
    module.operation.attributes["llvm.target_triple"] = ir.StringAttr.get(target.triple)
    if not target.pinned:
        return  # the JIT and `llc -mcpu=native` pick the host CPU and its features
    # Explicit features: the JIT's own machine has the host's, which a function's
    # target_features replaces (the CPU's defaults still apply).
    features = ir.Attribute.parse("#llvm.target_features<[" + ", ".join(f'"+{f}"' for f in target.features) + "]>")
    for op in _walk(module.operation, {"llvm.func"}):
        if len(op.regions[0].blocks) == 0:
            continue
        op.attributes["target_cpu"] = ir.StringAttr.get(target.cpu)
        if target.features:
            op.attributes["target_features"] = features


# ------------------------------------------------------------------------ JIT

_LIBOMP_CANDIDATES = (
    "/usr/lib/llvm-22/lib/libomp.so",
    "/usr/lib/x86_64-linux-gnu/libomp.so.5",
    "/usr/lib/aarch64-linux-gnu/libomp.so.5",
)
_libomp_lock = threading.Lock()
_libomp_loaded: Optional[str] = None


def find_libomp() -> Optional[str]:
    """Path of the LLVM OpenMP runtime (``$DNNF_LIBOMP``, Debian's libomp5-NN, ...)."""
    env = os.environ.get("DNNF_LIBOMP")
    if env:
        return env if os.path.exists(env) else None
    for path in _LIBOMP_CANDIDATES + tuple(sorted(glob.glob("/usr/lib/llvm-*/lib/libomp.so"), reverse=True)):
        if os.path.exists(path):
            return path
    found = ctypes.util.find_library("omp")
    return found


def _load_libomp() -> str:
    global _libomp_loaded
    with _libomp_lock:
        if _libomp_loaded:
            return _libomp_loaded
        path = find_libomp()
        if path is None:
            raise CodegenError(
                "the module runs on several threads with OpenMP but no LLVM OpenMP runtime was found "
                "(install libomp5-22 / libomp-22-dev, or set DNNF_LIBOMP=/path/to/libomp.so)"
            )
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        _libomp_loaded = path
        return path


class JitFunction:
    """One compiled function: call it with numpy arrays, get the results back."""

    def __init__(self, engine, name: str, inputs, outputs, owner=None, refusal: Optional[UnsupportedCpuError] = None):
        self._engine = engine
        self._owner = owner
        self._refusal = refusal  # compiled, but for a CPU this machine is not: never called
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
        self._fn = engine.lookup(name)

    def _check(self, arrays):
        if len(arrays) != len(self.inputs):
            raise CodegenError(f"@{self.name} takes {len(self.inputs)} inputs, got {len(arrays)}")
        checked = []
        for i, (a, (dtype, shape)) in enumerate(zip(arrays, self.inputs)):
            a = np.ascontiguousarray(a)
            if a.dtype != dtype or (shape and any(s != -1 and s != d for s, d in zip(shape, a.shape))) or a.ndim != len(shape):
                raise CodegenError(f"input {i} of @{self.name} must be {np.dtype(dtype)}{list(shape)}, got {a.dtype}{list(a.shape)}")
            checked.append(a)
        return checked

    def bind(self, *arrays, outputs: Optional[Sequence[np.ndarray]] = None) -> Callable[[], None]:
        """A zero-argument callable running the function on these arrays (for timing).

        The results are written to ``outputs`` (allocated when not given; the bound
        callable's ``outputs`` attribute holds them).
        """
        if self._refusal is not None:
            raise self._refusal
        runtime = _mlir.runtime
        arrays = self._check(arrays)
        if outputs is None:
            if any(-1 in shape for _, shape in self.outputs):
                raise CodegenError("dynamic result shapes are not supported")
            outputs = [np.empty(shape, dtype) for dtype, shape in self.outputs]
        descriptors = [runtime.get_ranked_memref_descriptor(a) for a in list(arrays) + list(outputs)]
        pointers = [ctypes.pointer(ctypes.pointer(d)) for d in descriptors]
        packed = (ctypes.c_void_p * len(pointers))(*[ctypes.cast(p, ctypes.c_void_p) for p in pointers])
        fn = self._fn

        def call():
            fn(packed)

        call.outputs = list(outputs)
        # The function must outlive its engine and the buffers its descriptors point to.
        call._keep = (self, arrays, descriptors, pointers, packed)
        return call

    def __call__(self, *arrays) -> list:
        call = self.bind(*arrays)
        call()
        return call.outputs


class JitModule:
    """The public functions of a lowered module, compiled by MLIR's ExecutionEngine."""

    def __init__(self, module: ir.Module, opt_level: int = 3, shared_libs: Sequence[str] = ()):
        libs = list(shared_libs)
        if USES_OPENMP in module.operation.attributes:
            _load_libomp()
        self.signatures = signatures(module)
        self.module = module  # keeps the module (and its context) alive with the engine
        self.target = _lowered_target(module)
        missing = self.target.missing_features()
        refusal = UnsupportedCpuError(self.target.describe(), missing) if missing else None
        engine_cls = _mlir.execution_engine.ExecutionEngine
        try:
            self.engine = engine_cls(module, opt_level=opt_level, shared_libs=libs)
        except RuntimeError as e:
            raise CodegenError(f"ExecutionEngine: {e}") from None
        self.functions = {}
        for name, (inputs, outputs) in self.signatures.items():
            try:
                self.functions[name] = JitFunction(self.engine, name, inputs, outputs, owner=self, refusal=refusal)
            except RuntimeError as e:
                raise CodegenError(f"could not compile @{name}: {e}") from None

    def __getitem__(self, name: str) -> JitFunction:
        return self.functions[name]

    def __getattr__(self, name: str) -> JitFunction:
        functions = self.__dict__.get("functions", {})
        if name in functions:
            return functions[name]
        raise AttributeError(name)


def _lowered_target(module: ir.Module) -> Target:
    attributes = module.operation.attributes
    cpu = ir.StringAttr(attributes[CPU_ATTR]).value if CPU_ATTR in attributes else None
    return get_target(ir.StringAttr(attributes[TARGET_ATTR]).value if TARGET_ATTR in attributes else "host", cpu)


def jit(module: ir.Module, *, threads: int = 1, opt_level: int = 3, shared_libs: Sequence[str] = ()) -> JitModule:
    """Compile ``module`` for this machine. A module still on linalg is lowered first
    (in place, for the host, with ``threads``). A host module lowered for a CPU with
    features this machine lacks compiles, but calling it raises ``UnsupportedCpuError``."""
    attributes = module.operation.attributes
    if SIGNATURES not in attributes:
        lower_to_llvm(module, "host", threads=threads)
    elif TARGET_ATTR in attributes and ir.StringAttr(attributes[TARGET_ATTR]).value != "host":
        name = ir.StringAttr(attributes[TARGET_ATTR]).value
        raise CodegenError(f"the module was lowered for {name}; only host modules can be run by the JIT")
    return JitModule(module, opt_level=opt_level, shared_libs=shared_libs)


# ------------------------------------------------------------------------ LLVM IR and objects


def emit_llvm_ir(module: ir.Module) -> str:
    """LLVM IR text of an LLVM-dialect module (``lower_to_llvm`` output)."""
    llvm = _mlir.llvm
    with module.context:
        return str(llvm.translate_module_to_llvmir(module.operation))


# The bindings carry a newer LLVM (24git) than the installed llc. Constructs its
# printer emits that an older parser rejects are rewritten here; each entry is
# (pattern, replacement, what it is).


def _float_bits_as_double(value: np.float32) -> str:
    return "0x" + np.float64(value).tobytes()[::-1].hex().upper()


def _old_hex_literal(match) -> str:
    """LLVM 24's ``f0x<bits>`` literal in the older syntax: a float is written as the
    bits of the same value as a double, a half as ``0xH<bits>``."""
    bits = match.group(1)
    if len(bits) == 8:
        return _float_bits_as_double(np.frombuffer(bytes.fromhex(bits)[::-1], np.float32)[0])
    return ("0xH" if len(bits) == 4 else "0x") + bits


def _old_float_decimal(match) -> str:
    """A float printed as its shortest decimal (or ``inf`` / ``nan``), which the older
    parser rejects unless exact: the same value in hexadecimal."""
    return f"{match.group(1)} " + _float_bits_as_double(np.float32(match.group(2)))


LLC_COMPAT_REWRITES: list = [
    (r"\bf0x([0-9A-Fa-f]+)\b", _old_hex_literal, "hexadecimal float literals"),
    (r"\b(float) (-?[0-9]+\.[0-9]+e[-+][0-9]+)\b", _old_float_decimal, "shortest-decimal float literals"),
    (r"\b(float|double) ([-+]?(?:inf|nan))\b", _old_float_decimal, "infinity and NaN literals"),
]


def make_llc_compatible(llvm_ir: str) -> str:
    for pattern, replacement, _why in LLC_COMPAT_REWRITES:
        llvm_ir = re.sub(pattern, replacement, llvm_ir)
    return llvm_ir


# Modules of LLVM IR text at least this big are compiled in pieces, in parallel
# (``llvm-split``, then ``opt`` + ``llc`` per piece, ``ld -r`` joins the objects).
SPLIT_IR_CHARS = 4_000_000


def _compile_pieces(text: str, pieces: int, opt: str, llc: str, split: str, opt_level: int, flags, output: str):
    """Split the module's functions among ``pieces`` modules (the module-local symbols
    become hidden globals), compile them in parallel and join the objects."""
    with tempfile.TemporaryDirectory(prefix="dnnf-split-") as tmp:
        source = os.path.join(tmp, "module.ll")
        with open(source, "w") as f:
            f.write(text)
        proc = subprocess.run([split, f"-j{pieces}", "-o", os.path.join(tmp, "piece"), source], capture_output=True, text=True)
        if proc.returncode != 0:
            raise CodegenError(f"{os.path.basename(split)} failed:\n{proc.stderr.strip()}")
        names = [os.path.join(tmp, f"piece{i}") for i in range(pieces)]
        errors = []

        def build(name):
            for cmd in (
                [opt, f"-O{opt_level}", "-o", name + ".bc", name] + flags,
                [llc, f"-O{opt_level}", "-filetype=obj", "-o", name + ".o", name + ".bc"] + flags,
            ):
                proc = subprocess.run(cmd, capture_output=True, text=True)
                if proc.returncode != 0:
                    errors.append(f"{os.path.basename(cmd[0])} failed:\n{proc.stderr.strip()}")
                    return

        threads = [threading.Thread(target=build, args=(name,)) for name in names]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise CodegenError(errors[0])
        proc = subprocess.run(["ld", "-r", "-o", output] + [name + ".o" for name in names], capture_output=True, text=True)
        if proc.returncode != 0:
            raise CodegenError(f"ld -r failed:\n{proc.stderr.strip()}")


def compile_object(
    llvm_ir: str,
    triple: Optional[str] = None,
    *,
    target: "str | Target | None" = None,
    cpu: Optional[str] = None,
    features: Optional[str] = None,
    output: Optional[str] = None,
    opt_level: int = 3,
    assembly: bool = False,
    pic: bool = False,
) -> str:
    """Compile LLVM IR text to an object file (or assembly); returns its path.

    ``opt -O<opt_level>`` (LLVM's middle end: the same optimization the JIT runs --
    ``llc`` alone would keep, e.g., the one-iteration loops of strided transfers)
    then ``llc -O<opt_level>``. The triple, CPU and features default to those of
    ``target``.
    """
    llc = find_llc()
    if llc is None:
        raise CodegenError("llc not found (install llvm-22, or set DNNF_LLC)")
    t = get_target(target) if target is not None else None
    triple = triple or (t.triple if t else None)
    cpu = cpu if cpu is not None else (t.cpu if t else None)
    features = features if features is not None else (t.llvm_features if t else None)
    if output is None:
        fd, output = tempfile.mkstemp(suffix=".s" if assembly else ".o", prefix="dnnf-")
        os.close(fd)
    flags = []
    if triple:
        flags.append(f"-mtriple={triple}")
    if cpu:
        flags.append(f"-mcpu={cpu}")
    if features:
        flags.append(f"-mattr={features}")
    if pic:  # the object goes into a shared library
        flags.append("-relocation-model=pic")
    text = make_llc_compatible(llvm_ir)
    opt = find_opt()
    split = find_llvm_split()
    pieces = 2 if len(text) >= SPLIT_IR_CHARS and (os.cpu_count() or 1) > 1 else 1
    if (
        pieces > 1
        and opt is not None
        and opt_level > 0
        and split is not None
        and not assembly
        and shutil.which("ld")
        and (triple is None or triple == get_target("host").triple)
    ):
        _compile_pieces(text, pieces, opt, llc, split, opt_level, flags, output)
        return output
    data = text.encode()
    if opt is not None and opt_level > 0:
        # bitcode between opt and llc: printing and parsing big modules as text is slow
        proc = subprocess.run([opt, f"-O{opt_level}", "-o", "-", "-"] + flags, input=data, capture_output=True)
        if proc.returncode != 0:
            raise CodegenError(f"{os.path.basename(opt)} failed:\n{proc.stderr.decode(errors='replace').strip()}")
        data = proc.stdout
    cmd = [llc, f"-O{opt_level}", "-filetype=" + ("asm" if assembly else "obj"), "-o", output, "-"] + flags
    proc = subprocess.run(cmd, input=data, capture_output=True)
    if proc.returncode != 0:
        raise CodegenError(f"{os.path.basename(llc)} failed:\n{proc.stderr.decode(errors='replace').strip()}")
    return output


__all__ = [
    "CPU_ATTR",
    "CodegenError",
    "JitFunction",
    "JitModule",
    "LLC_COMPAT_REWRITES",
    "LoweringReport",
    "PIPELINE_STAGES",
    "compile_object",
    "emit_llvm_ir",
    "find_libomp",
    "jit",
    "lower_to_llvm",
    "make_llc_compatible",
    "signatures",
    "split_functions",
]
