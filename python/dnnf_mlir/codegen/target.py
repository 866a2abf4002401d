"""Targets: the machines the code generator compiles for, as the rest of the compiler sees them.

A ``Target`` is one concrete machine of a kind (``cpu``: an architecture and a CPU
named as LLVM names it, ``codegen/cpu/target.py``; ``vulkan``: a GPU device profile,
``codegen/gpu/vulkan/target.py``; later ``opencl``). The compiler asks it only what every kind answers: its ``name``, whether its
code runs in this process, what it lacks here, what names it in the compile cache,
the ``FusionLimits`` that fusion keeps each kernel within, and its ``backend``, the
code generator of its kind (``backend.py``).

Backends register themselves when their package is imported (``codegen/__init__``
imports each one): ``register_backend(backend, resolvers)`` makes
``get_target(name, ...)`` resolve the names it lists (``host``, ``native``,
``aarch64``, ...; a name also stands for its dashed variants, such as a triple
``aarch64-unknown-linux-gnu``), and ``Target.backend`` find the backend of a kind.
This module imports no backend.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Callable, ClassVar


@dataclass(frozen=True)
class FusionLimits:
    """What one kernel may hold: every fusion block stays within these (``fusion/constraints.py``)."""

    max_inputs: int  # tensors the kernel reads
    max_outputs: int  # tensors it writes
    max_live_values: int  # intermediate values alive at once in its body (registers)
    # Its contractions read 8-bit operands as bytes (a CPU with VNNI: dnnf-int8-matmuls), so
    # their conversion to floats stays out of the kernel producing the bytes.
    byte_contractions: bool = False


class Target(ABC):
    """A machine to compile for (see the module docstring)."""

    kind: ClassVar[str]  # "cpu", "vulkan", "opencl": which backend compiles for it
    precisions: ClassVar[tuple] = ("fp32",)  # what its tensors may be stored in (``PRECISIONS``)
    # The layout of convolutions' activations where ``--gpu-layout`` is auto (GPU targets:
    # nc4hw4 on the device profiles where it measured faster, ``GpuDevice.channel_blocks``).
    default_layout: ClassVar[str] = "nchw"
    # Whether ecg-fuse merges a LRN into the pooling reading it (``fusion/lrn_pools.py``;
    # GPU targets: ``GpuDevice.lrn_in_pools``).
    lrn_in_pools: ClassVar[bool] = False
    # Whether ecg-fuse merges sibling matmuls each of which lays out its own result
    # (BERT's Q/K/V, each reshaped and transposed to its heads; ``fusion/horizontal.py``).
    merges_laid_out_projections: ClassVar[bool] = True
    name: str  # as given to get_target: "host", "aarch64", ...

    @property
    def backend(self):
        """The registered backend of this target's kind."""
        return _BACKENDS[self.kind]

    @property
    @abstractmethod
    def runs_here(self) -> bool:
        """Whether its code can run in this process (a foreign CPU's runs under an emulator)."""

    @property
    @abstractmethod
    def fusion_limits(self) -> FusionLimits:
        """The limits of one kernel, which the fusion planners keep every block within."""

    @abstractmethod
    def describe(self) -> str:
        """What a message names: ``host (znver4, native)``, ``aarch64 (cortex-a76)``."""

    @abstractmethod
    def missing_features(self) -> tuple:
        """What its code needs that this machine lacks: empty when it can run here."""

    @abstractmethod
    def options(self) -> dict:
        """The ``get_target`` options that name it again with its ``name`` (``{"cpu":
        "native"}``), as given: also its pass options and module attributes."""

    @abstractmethod
    def cache_fields(self) -> dict:
        """What identifies its code in the compile cache (JSON values, ``name`` included),
        resolved: ``native`` means another CPU on another machine."""


# What a model's tensors are stored in: fp16 keeps weights and activations in half
# precision and computes in f32 (``codegen/gpu/precision.py``).
PRECISIONS = ("fp32", "fp16")


def check_precision(precision: str, target: Target) -> None:
    """A ``ValueError`` naming ``target`` where it cannot store tensors in ``precision``."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got '{precision}'")
    if precision not in target.precisions:
        raise ValueError(f"target {target.describe()} computes in {', '.join(target.precisions)} only: "
                         f"--precision {precision} is for the GPU targets (vulkan, opencl)")


_BACKENDS: dict = {}  # kind -> backend
_RESOLVERS: dict = {}  # target name -> resolve(name, **options) -> Target
_ALIASES: dict = {}  # another name -> the target name


def register_backend(backend, resolvers: dict[str, Callable[..., Target]], aliases: dict[str, str] | None = None):
    """Register ``backend`` (a ``backend.Backend``) and the target names it resolves:
    ``resolvers`` maps each name to ``resolve(name, **options)``, ``aliases`` other
    names to those."""
    _BACKENDS[backend.kind] = backend
    _RESOLVERS.update(resolvers)
    _ALIASES.update(aliases or {})


def backends() -> list:
    """The registered backends."""
    return list(_BACKENDS.values())


def get_target(target: "str | Target", cpu: str | None = None, **options) -> Target:
    """The target named ``target`` with ``options`` (``cpu``: the CPU as LLVM names it;
    ``device``: a GPU's device profile; None leaves an option to its default; one the
    target does not take is a ``ValueError``). A ``Target`` is returned as it is unless an
    option names something else."""
    given = {key: value for key, value in dict(options, cpu=cpu).items() if value is not None}
    if isinstance(target, Target):
        if all(target.options().get(key) == value for key, value in given.items()):
            return target
        given = {**target.options(), **given}
        target = target.name
    for name in (target, target.split("-", 1)[0]):
        name = _ALIASES.get(name, name)
        if name in _RESOLVERS:
            resolve = _RESOLVERS[name]
            takes = [p for p in inspect.signature(resolve).parameters][1:]
            foreign = sorted(set(given) - set(takes))
            if foreign:
                raise ValueError(f"target {target!r} takes no option {', '.join(foreign)} (its options: "
                                 f"{', '.join(takes) or 'none'})")
            return resolve(target, **given)
    raise ValueError(f"unknown target {target!r}; known: {', '.join(_RESOLVERS)}")


__all__ = ["PRECISIONS", "FusionLimits", "Target", "backends", "check_precision", "get_target", "register_backend"]
