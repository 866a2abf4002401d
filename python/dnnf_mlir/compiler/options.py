"""``CompileOptions``: every choice that decides what a compilation makes, in one object.

``compile_model``, dnnf-compile, dnnf-bench, ``InferenceSession`` and the compile cache
all take it, and each derives what it needs from its fields rather than listing them:
the tools their flags (``add_option_arguments``, ``from_arguments``), the cache its key
(``cache_fields``) and dnnf-cache its listing (``describe_cache_fields``),
``compile_model`` the target (``resolve_target``). A field added here (a GPU's
precision, its device limits) reaches all of them; one marked ``target_option`` is an
option of ``codegen.get_target`` (``cpu``), which names the target in the cache by
what it resolves to (``Target.cache_fields``: ``native`` is this machine's CPU).

Profiling is off by default everywhere: Table 3's yellow cells are decided
conservatively, so that a model's kernels do not depend on what was measured before.
The one measurement a default compile reads is dnnf-tune's choice of scheme per
convolution (``--winograd auto``): the choices stored for the target's CPU and the
thread count are then part of the cache key (``winograd_measurements``), so that
tuning makes new keys.
"""

import argparse
import hashlib
import json
from dataclasses import dataclass, field, fields

from ..codegen import PRECISIONS, Target, check_precision, get_target
from ..fusion import MODES
from ..fusion.profile_db import ProfileDatabase

TUNED_FIELD = "winograd_measurements"


def _option(default, help: str, **metadata):
    return field(default=default, metadata={"help": help, **metadata})


@dataclass(frozen=True, kw_only=True)
class CompileOptions:
    target: str = _option("host", "the target: host (this machine; the default), aarch64, vulkan (SPIR-V "
                                "kernels, a C runtime over libvulkan) or opencl (OpenCL C kernels, a C runtime over "
                                "the OpenCL ICD)")
    cpu: str | None = _option(
        None, "CPU to compile for, as LLVM names it: native (this machine; the host default, or $DNNF_CPU), "
        "x86-64-v3, znver3, skylake-avx512, cortex-a76, ... (AArch64 default: generic). The library refuses to "
        "load on a CPU without its features", target_option=True, metavar="NAME")
    device: str | None = _option(
        None, "GPU targets: the device profile compiled for: generic (the default: the limits every GPU of the "
        "brief offers, matmul tiles as measured on real GPUs) or, for Vulkan, lavapipe (Mesa's CPU device: taller "
        "matmul tiles, convolutions channel-blocked), for OpenCL, pocl (OpenCL on the CPU: convolutions "
        "channel-blocked). The code runs on any device that meets the profile's limits",
        target_option=True, metavar="NAME")
    threads: int = _option(1, "threads the parallel loops are split for (OpenMP; host only)")
    rewrite: bool = _option(True, "run ecg-rewrite on the imported graph (--no-rewrite compiles it as imported)")
    fusion: str = _option(
        "dnnf", "ecg-fuse's planner: dnnf (mapping types, the paper's Table 3; default), tvm (TVM's fixed "
        "patterns) or none (one kernel per op)", choices=MODES)
    profile: bool = _option(
        False, "decide Table 3's yellow cells by the latencies measured on this machine and kept in the "
        "profiling database ($DNNF_PROFILE_DB) instead of conservatively (deterministic)")
    outline: bool = _option(
        True, "make every kernel a function (ecg-outline-kernels; --no-outline: the code generator draws the "
        "kernel boundaries, the pipeline before kernel functions)")
    precision: str = _option(
        "fp32", "what tensors are stored in: fp32 (the default) or fp16 (GPU targets: weights and activations in "
        "half precision, every kernel computing in fp32; the model's inputs and outputs stay fp32)",
        choices=PRECISIONS)
    gpu_layout: str = _option(
        "auto", "GPU targets: the layout of convolution kernels' activations: nchw, nc4hw4 (channels in blocks "
        "of 4 innermost, one vec4 per pixel; NCHW copies where other kernels read them) or auto (the default: "
        "the device profile's: nc4hw4 for pocl and lavapipe, where it measured faster, nchw elsewhere)",
        choices=("auto", "nchw", "nc4hw4"))
    profile_kernels: bool = _option(
        False, "time every kernel launch (dnnf-run OUT --profile; CPU targets): timers compiled in around each "
        "kernel call; without it the code has none")
    winograd: str = _option(
        "auto", "CPU targets: compute 3x3 stride-1 convolutions by Winograd F(4x4, 3x3) where the cost model "
        "expects it to be faster (auto), wherever it can (always), every one or an error (strict) or never (off)",
        choices=("auto", "always", "strict", "off"))

    def __post_init__(self):
        if self.fusion not in MODES:
            raise ValueError(f"fusion must be one of {', '.join(MODES)}, got '{self.fusion}'")
        if self.threads < 1:
            raise ValueError(f"threads must be at least 1, got {self.threads}")

    def target_options(self) -> dict:
        """The fields that are options of ``codegen.get_target``."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.metadata.get("target_option")}

    def resolve_target(self) -> Target:
        target = get_target(self.target, **self.target_options())
        check_precision(self.precision, target)
        return target

    def cache_fields(self) -> dict:
        """What names the compiled code in the compile cache (JSON values): the resolved
        target's fields, and every other option."""
        compile_fields = {f.name: getattr(self, f.name) for f in fields(self)
                          if f.name != "target" and not f.metadata.get("target_option")}
        target = self.resolve_target()
        return {**target.cache_fields(), **compile_fields, TUNED_FIELD: self.winograd_measurements(target)}

    def winograd_measurements(self, target: Target) -> str | None:
        """A digest of the schemes dnnf-tune chose for ``target``'s CPU and ``threads``
        that ``--winograd auto`` reads from the profiling database (None: no choice read)."""
        if self.winograd != "auto" or target.backend.kind != "cpu":
            return None
        database = ProfileDatabase()
        try:
            choices = database.scheme_choices(target.name, target.cpu_name, self.threads)
        finally:
            database.close()
        return hashlib.sha256(json.dumps(choices).encode()).hexdigest()[:16] if choices else None


def add_option_arguments(parser: argparse.ArgumentParser, skip=()):
    """A flag for each field of ``CompileOptions`` not in ``skip``: ``--name VALUE``, or
    ``--name`` / ``--no-name`` for a yes-or-no option."""
    for option in fields(CompileOptions):
        if option.name in skip:
            continue
        flag, meta = "--" + option.name.replace("_", "-"), option.metadata
        if isinstance(option.default, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=option.default, help=meta["help"])
        else:
            parser.add_argument(flag, type=str if option.default is None else type(option.default),
                                default=option.default, choices=meta.get("choices"), metavar=meta.get("metavar"),
                                help=meta["help"])


def from_arguments(args: argparse.Namespace, **overrides) -> CompileOptions:
    """The ``CompileOptions`` of the flags ``add_option_arguments`` made, with ``overrides``."""
    given = {f.name: getattr(args, f.name) for f in fields(CompileOptions) if hasattr(args, f.name)}
    return CompileOptions(**{**given, **overrides})


def describe_cache_fields(cache_fields: dict) -> str:
    """``host znver4 threads=1 fusion=dnnf profile no-outline``: ``cache_fields`` in
    words: the target's (but lists), then each option, a yes-or-no one only when it is
    not its default."""
    options = [f for f in fields(CompileOptions) if f.name != "target" and not f.metadata.get("target_option")]
    names = {f.name for f in options}
    words = [str(value) for name, value in cache_fields.items()
             if name not in names and name != TUNED_FIELD and not isinstance(value, list)]
    for option in options:
        value = cache_fields.get(option.name, option.default)
        if not isinstance(option.default, bool):
            words.append(f"{option.name}={value}")
        elif value != option.default:
            words.append(option.name if value else f"no-{option.name}")
    if cache_fields.get(TUNED_FIELD):
        words.append(f"tuned={cache_fields[TUNED_FIELD]}")
    return " ".join(words)


__all__ = ["CompileOptions", "add_option_arguments", "describe_cache_fields", "from_arguments"]
