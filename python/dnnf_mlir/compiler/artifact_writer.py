"""What makes a target's deployable directory out of a lowered module.

``compile_model`` lowers a model through the target's backend, then hands the module to
the ``ArtifactWriter`` of the target's kind (``driver.WRITERS``), which writes and
builds its files in the output directory (``weights.bin`` is already there) behind
the C interface of ``c_glue.py``, and says what the manifest records of them. The
CPU's is ``cpu_library.py``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import ClassVar

from .._mlir import ir
from ..progress import StageTimer
from .c_glue import ModelInterface


class ArtifactWriter(ABC):
    kind: ClassVar[str]  # the Target.kind whose lowered modules it takes

    @abstractmethod
    def write(self, module: ir.Module, directory: Path, interface: ModelInterface, entry: str, target,
              timer: StageTimer) -> dict:
        """Write and build the artifact of ``module`` (lowered for ``target``, its entry
        point ``entry``) into ``directory``, each step a stage of ``timer``; returns the
        manifest's entries for it, among them ``emulator``: the command that runs its
        runner on this machine, None when it runs here."""


__all__ = ["ArtifactWriter"]
