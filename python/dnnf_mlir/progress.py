"""A compilation's progress as ``logging`` records: the library reports, the tools render.

``compile_model`` logs each stage (``STAGES``) on the ``dnnf_mlir.compile`` logger at
INFO as it starts and ends, and each pass it runs within a stage; the code generator
logs its phases on ``dnnf_mlir.codegen`` at DEBUG (the profiling oracle's candidate
kernels go through it too, during ``fuse``), the profiling oracle each candidate it
measures on ``dnnf_mlir.fusion`` at INFO. Every such record carries a
``ProgressEvent`` as ``record.progress``, and its message says the same in words, so
``logging.basicConfig(level=logging.INFO)`` is all a Python caller needs to follow a
compilation; the command-line tools draw them (``tools/progress_display.py``).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

STAGES = ("import", "rewrite", "fuse", "lower", "llvm", "build")


@dataclass(frozen=True)
class ProgressEvent:
    stage: str  # one of STAGES
    kind: str  # "start", "step" (within the stage) or "done"
    detail: str = ""  # what the stage works on: the model, a pass, a code generator phase
    step: int = 0  # steps done of ``steps`` (0 of 0: the stage does not count them)
    steps: int = 0
    seconds: float = 0.0  # the stage's time, on "done"

    def message(self) -> str:
        count = f" ({self.step}/{self.steps})" if self.steps else ""
        if self.kind == "done":
            return f"{self.stage}: done in {self.seconds:.1f} s"
        return f"{self.stage}: {self.detail}{count}" if self.detail else f"{self.stage}{count}"


def report(logger: logging.Logger, event: ProgressEvent, level: int = logging.INFO):
    """Log ``event`` on ``logger``: its message, and the event itself as ``record.progress``."""
    logger.log(level, "%s", event.message(), extra={"progress": event})


class StageTimer:
    """The stages of one compilation, timed and logged: ``enter`` ends the current stage
    (a "done" event with its time) and starts another, or, for the same stage again,
    logs a step; ``times`` sums the seconds per stage."""

    def __init__(self, logger: logging.Logger):
        self.logger = logger
        self.times = {}
        self.stage = None
        self.started = 0.0

    def enter(self, stage: str, detail: str = ""):
        if stage == self.stage:
            report(self.logger, ProgressEvent(stage, "step", detail))
            return
        self.finish()
        self.stage, self.started = stage, time.perf_counter()
        report(self.logger, ProgressEvent(stage, "start", detail))

    def finish(self):
        """End the current stage, if any."""
        if self.stage is None:
            return
        seconds = time.perf_counter() - self.started
        self.times[self.stage] = self.times.get(self.stage, 0.0) + seconds
        report(self.logger, ProgressEvent(self.stage, "done", seconds=seconds))
        self.stage = None


__all__ = ["STAGES", "ProgressEvent", "StageTimer", "report"]
