"""A sweep case's model compiled with kernel timers and run: what the sweep and the call floor time."""

from __future__ import annotations

from pathlib import Path

import onnx

from ..compiler import Artifact, compile_model
from ..kernel_profile.report import profile_runs


def timed_runs(model: onnx.ModelProto, feeds: dict, directory: Path, runs: int, cpu: "str | None" = None) -> tuple:
    """``(artifact, session, inputs, outputs, KernelProfile)`` of ``model`` compiled into
    ``directory`` for the host's ``cpu`` (one thread, kernel timers) and run ``runs`` times
    on ``feeds``."""
    path = directory.parent / f"{directory.name}.onnx"
    onnx.save(model, path)
    compile_model(path, directory, profile_kernels=True, threads=1, cpu=cpu)
    artifact = Artifact(directory)
    session = artifact.session(1)
    inputs = [feeds[name] for name, _, _ in artifact.inputs]
    outputs, profile = profile_runs(session, inputs, runs)
    return artifact, session, inputs, outputs, profile


__all__ = ["timed_runs"]
