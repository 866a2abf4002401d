"""The fuzzer's GPU mode: the generator's graphs compiled as ``dnnf-compile --target T``
(``vulkan``: SPIR-V run on lavapipe; ``opencl``: OpenCL C run on PoCL) in fp32, each
graph alone, run on the device and compared with onnxruntime.

The comparison is the host mode's (``differential.difference``): element by element,
``|got - want| <= 1e-4 * max(1, scale) + 1e-4 * |want|``, integers and booleans
equal. The GPU kernels sum in other orders than onnxruntime (workgroup tiles, vec4
steps), which the same bound covers as it covers the host's tiled sums. Every SPIR-V
binary of a Vulkan artifact is checked by ``spirv-val`` here too, apart from the
compiler's own check, so that a binary that skipped it is still caught.

A compilation the code generator refuses with a diagnostic that names a known limit
(``REFUSALS``: an element type the GPU targets do not take, a device limit, a kernel
none of the GPU schedules applies to) is counted as ``unsupported``, named by the
message without its kernel names and sizes; any other exception, an invalid binary or
a wrong output is a failure.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from ..codegen import CodegenError
from ..codegen.gpu.vulkan.spirv import find_spirv_tool, validate
from ..compiler import Artifact, CompileError, compile_model
from .differential import Batch, check_cases, onnxruntime_outputs

GPU_TARGETS = ("vulkan", "opencl")
TARGETS = ("host", *GPU_TARGETS)
# The code generator's refusals of a known limit, and where each message's name ends.
REFUSALS = re.compile(r"(which the GPU targets do not support yet|has a dynamic shape"
                      r"|the device allows|neither its fused schedule nor one dispatch per op applies)")
PASS_PREFIX = re.compile(r"^[a-z0-9-]+: ")
KERNEL_NAME = re.compile(r"\bkernel_[0-9]+_\w+")
ERROR_NAME_CHARS = 60  # of a compiler error's message in its failure's signature


def generic(text: str) -> str:
    """``text`` without a leading pass name, its kernel names and numbers made generic:
    what errors of one kind share."""
    return re.sub(r"\b[0-9]+\b", "N", KERNEL_NAME.sub("K", PASS_PREFIX.sub("", text)))


def refusal_name(message: str) -> str | None:
    """The name a refusal is counted under (its first line up to the limit it names,
    made ``generic``), or None if ``message`` is no refusal."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    found = REFUSALS.search(first)
    return generic(first[:found.end()]) if found else None


def error_stage(stage: str, error: Exception) -> str:
    """``stage`` named further by the start of ``error``'s message, made ``generic``, so
    that a campaign counts and shrinks each kind of compiler error on its own."""
    first = generic(str(error).strip().splitlines()[0]) if str(error).strip() else ""
    if len(first) > ERROR_NAME_CHARS:
        first = first[:ERROR_NAME_CHARS].rsplit(" ", 1)[0]  # cut at a word
    return f"{stage}: {first}" if first else stage


def spirv_problems(artifact: Path) -> list:
    """What ``spirv-val`` says about each SPIR-V binary of ``artifact`` that it rejects
    (and that there is none, which no Vulkan artifact may lack): the Vulkan backend's
    own check, run again on what the artifact holds."""
    binaries = sorted((artifact / "kernels").glob("*.spv"))
    if not binaries:
        return ["no SPIR-V binary in the artifact"]
    find_spirv_tool("spirv-val")  # no validator is an error of the setup, not a finding
    problems = []
    for binary in binaries:
        try:
            validate(binary.read_bytes(), binary.name)
        except CodegenError as error:
            problems.append(str(error))
    return problems


class GpuBatch(Batch):
    """A batch of cases checked on ``target``: each compiled alone, run and compared
    with onnxruntime's outputs."""

    def __init__(self, cases: list, target: str, seed: int = 0):
        super().__init__(cases, seed)
        self.target = target

    def run(self) -> list:
        with tempfile.TemporaryDirectory(prefix=f"dnnf-fuzz-{self.target}-") as scratch:
            for index in range(len(self.cases)):
                self.check_on_device(index, Path(scratch))
        return self.failures

    def check_on_device(self, index: int, scratch: Path) -> None:
        case, inputs = self.cases[index], self.inputs[index]
        reference = self.guarded(index, "onnxruntime", lambda: onnxruntime_outputs(case, inputs))
        if reference is None:
            return
        self.expected[index] = reference
        model, artifact = scratch / f"case{index}.onnx", scratch / f"case{index}-{self.target}"
        model.write_bytes(case.to_bytes())
        stage = f"compilation for {self.target}"
        try:
            compile_model(model, artifact, target=self.target, precision="fp32")
        except CompileError as error:
            refusal = refusal_name(str(error))
            if refusal is None:
                self.record(index, error_stage(stage, error), error)
            else:
                self.fail(index, "unsupported", f"{self.target}: {refusal}", str(error))
            return
        except Exception as error:  # a traceback out of the compiler is a finding
            self.record(index, error_stage(stage, error), error)
            return
        if self.target == "vulkan":
            problems = spirv_problems(artifact)
            if problems:
                self.fail(index, "invalid SPIR-V", stage, "; ".join(problems))
                return
        got = self.guarded(index, f"run on {self.target}", lambda: Artifact(artifact).run(inputs)[0])
        if got is not None:
            self.compare(index, f"{self.target} vs onnxruntime", got)


def check_cases_on(target: str, cases: list, seed: int = 0) -> list:
    """The failures of ``cases`` on ``target``: ``host`` is the host mode
    (``differential.check_cases``), a GPU target this module's."""
    if target == "host":
        return check_cases(cases, seed)
    if target not in GPU_TARGETS:
        raise ValueError(f"unknown fuzzing target {target!r} (known: {', '.join(TARGETS)})")
    return GpuBatch(cases, target, seed).run()


__all__ = ["GPU_TARGETS", "GpuBatch", "REFUSALS", "TARGETS", "check_cases_on", "error_stage", "generic", "refusal_name", "spirv_problems"]
