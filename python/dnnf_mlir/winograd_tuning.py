"""Choosing Winograd or direct per convolution by measuring both (``dnnf-tune``).

Each kernel of a fused model (an ``ecg.fused`` block or an unfused op, as dnnf-compile
plans it) that holds one convolution ``dnnf-winograd`` can rewrite becomes a module of
its own: the kernel with its filters as constants and its epilogue (bias, ReLU,
residual add) as in the model (``fusion.profiling.extract_function``). It is lowered
to linalg as dnnf-compile lowers it, which gives the convolution's signature (its key
in the profiling database, ``winograd_choice.convolution_signature``, the form the
compile reads), then compiled twice -- direct and by Winograd -- by the profiling
oracle's lowering and JIT, and the two timed in alternating rounds (each round the
best of several calls, ``fusion.profiling.latency_us``; the best of the rounds kept).

Each call is timed cold, after the caches were flushed: in a model, a layer's weights
come from memory (ResNet-50's are 100 MB), and Winograd's are four times the direct
ones. Timed warm, back to back, Inception-v2's 192 -> 320 channels at 7x7 took 0.33 ms
by Winograd against 0.69 ms direct, where the model's kernel profile shows both at
0.55 ms: the 8.8 MB of transformed filters take 0.2 ms to read at 43 GB/s.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._mlir import ir
from .codegen.linalg_queries import linalg_ops, static_tensor_type
from .codegen.winograd import is_winograd_shape
from .codegen.winograd_choice import convolution_signature
from .codegen.winograd_cost import prefers_winograd
from .codegen.winograd_pass import winograd_convolutions
from .fusion.profile_db import SchemeKey, SchemeTiming
from .fusion.profiling import compile_for_host, extract_function, latency_us, lowering_pipeline
from .transforms.pipeline import Pipeline, build_pass_manager

ROUNDS = 3  # alternating direct / Winograd timings of one convolution
CONSTANTS = ("ecg.constant", "arith.constant")
KERNEL_FUNCTION = "conv"


@dataclass
class TuningCase:
    """One convolution of a model to measure: its kernel as a module lowered to linalg."""

    key: SchemeKey
    module: ir.Module  # @conv: the kernel, in linalg on tensors, before dnnf-winograd
    channels: tuple  # (input, output)
    output: tuple  # (height, width)
    rule: bool  # what the cost model would choose
    layers: int = 1  # kernels of the models with this key

    def describe(self) -> str:
        c, k = self.channels
        return f"{c:>4} -> {k:<4} at {self.output[0]}x{self.output[1]}"


def _split(pipeline: Pipeline, first: str) -> tuple:
    """``pipeline`` before pass ``first``, and from it on."""
    names = pipeline.names()
    cut = names.index(first)
    before, after = pipeline, pipeline
    for name in names[cut:]:
        before = before.without(name)
    for name in names[:cut]:
        after = after.without(name)
    return before, after


def _kernels(module: ir.Module) -> list:
    """The ops of every function of ``module`` that are kernels holding a 3x3 convolution."""
    found = []
    for function in module.body.operations:
        if function.operation.name != "func.func":
            continue
        for op in function.regions[0].blocks[0].operations:
            op = op.operation
            convs = [op] if op.name == "ecg.conv" else [o for o in _nested(op) if o.name == "ecg.conv"]
            if any(list(ir.RankedTensorType(c.operands[1].type).shape[2:]) == [3, 3] for c in convs):
                found.append(op)
    return found


def _nested(op) -> list:
    return [inner.operation for region in op.regions for block in region.blocks for inner in block.operations]


def tuning_case(kernel, target, threads: int):
    """The ``TuningCase`` of ``kernel`` (an op of a fused ECG function) on the host CPU
    ``target``, or None when it holds no convolution that dnnf-winograd can rewrite, or
    several (their times would not be told apart)."""
    constants = [v.owner.operation for v in kernel.operands
                 if isinstance(v, ir.OpResult) and v.owner.operation.name in CONSTANTS]
    with kernel.context, ir.Location.unknown():
        module = ir.Module.create()
        extract_function(constants + [kernel], KERNEL_FUNCTION, None, module)
        to_linalg, _ = _split(lowering_pipeline(target.cpu, threads), "dnnf-winograd")
        build_pass_manager(to_linalg.text(), module.context).run(module.operation)
        convs = [op for op in linalg_ops(module.operation) if is_winograd_shape(op)]
        if len(convs) != 1 or winograd_convolutions(module.operation.clone(), "always") != 1:
            return None  # not one convolution, or its filters are not constant
        conv = convs[0]
        x_t, out_t = static_tensor_type(conv.operands[0]), static_tensor_type(conv.results[0])
        n, c = x_t.shape[:2]
        k, oh, ow = out_t.shape[1:]
        key = SchemeKey(convolution_signature(conv), target.name, target.cpu_name, threads)
    return TuningCase(key, module, (c, k), (oh, ow), prefers_winograd(n, c, k, oh, ow, threads))


def tuning_cases(module: ir.Module, target, threads: int) -> list:
    """The ``TuningCase`` of each kernel of the fused ECG ``module`` that holds one
    convolution dnnf-winograd can rewrite, in program order."""
    return [case for kernel in _kernels(module) if (case := tuning_case(kernel, target, threads)) is not None]


def measure_schemes(case: TuningCase, cpu: str, threads: int) -> SchemeTiming:
    """Compile ``case`` direct and by Winograd for the host ``cpu`` and time both."""
    _, to_llvm = _split(lowering_pipeline(cpu, threads), "dnnf-winograd")
    to_llvm = to_llvm.without("dnnf-winograd")
    functions = []
    for scheme in ("direct", "winograd"):
        module = ir.Module.parse(str(case.module), case.module.context)
        if scheme == "winograd":
            winograd_convolutions(module.operation, "always")
        functions.append(compile_for_host(module, cpu, threads, to_llvm)[KERNEL_FUNCTION])
    rng = np.random.default_rng(0)
    best = [float("inf")] * 2
    for _ in range(ROUNDS):
        for index, function in enumerate(functions):
            best[index] = min(best[index], latency_us(function, rng, cold=True))
    return SchemeTiming(direct_us=best[0], winograd_us=best[1])


__all__ = ["ROUNDS", "TuningCase", "measure_schemes", "tuning_case", "tuning_cases"]
