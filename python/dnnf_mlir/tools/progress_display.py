"""What the tools show of the library's log records, on stderr: a compilation's progress
(``dnnf_mlir.progress`` events) and the library's warnings.

On a terminal, a live display (``rich``): a line per stage with a spinner, the pass or
code generator phase it is in, a bar (pulsing until the stage counts its steps) and
its time, so that a compilation of minutes never looks hung; it is cleared when the
tool ends, and each compilation replaces the previous one's lines (``dnnf-bench``).
Otherwise (a pipe, a CI log) one plain line per stage, pass and phase as it starts,
``tool: stage: detail``. With ``quiet``, nothing but the errors the tool reports.
A step of another stage than the running one is not shown: the profiling oracle
lowers its candidate kernels during ``fuse``.
"""

import contextlib
import logging
import sys
import warnings

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

PACKAGE_LOGGER = "dnnf_mlir"


class _Display(logging.Handler):
    """Routes records: progress events of the running stage to ``show``, warnings and
    errors without one to ``say`` as ``tool: level: message``, the rest nowhere."""

    def __init__(self, tool: str):
        super().__init__(logging.DEBUG)
        self.tool = tool
        self.stage = None

    def emit(self, record: logging.LogRecord):
        event = getattr(record, "progress", None)
        if event is None:
            if record.levelno >= logging.WARNING:
                self.say(f"{self.tool}: {record.levelname.lower()}: {record.getMessage()}")
            return
        if event.kind == "start":
            self.stage = event.stage
        elif event.stage != self.stage:
            return
        self.show(event)

    def say(self, line: str):
        raise NotImplementedError

    def show(self, event):
        raise NotImplementedError


class _Lines(_Display):
    """One line per stage, pass and phase as it starts."""

    def __init__(self, tool: str, stream):
        super().__init__(tool)
        self.stream = stream

    def say(self, line: str):
        print(line, file=self.stream, flush=True)

    def show(self, event):
        if event.kind != "done":
            self.say(f"{self.tool}: {event.message()}")


class _Live(_Display):
    """A rich progress display: one task per stage of the current compilation."""

    def __init__(self, tool: str, stream):
        super().__init__(tool)
        self.progress = Progress(
            SpinnerColumn(finished_text="[green]✓"), TextColumn("{task.fields[stage]:<8}"), BarColumn(bar_width=20),
            TimeElapsedColumn(), TextColumn("{task.description}"),
            console=Console(file=stream), transient=True,
        )
        self.tasks = {}
        self.progress.start()

    def say(self, line: str):
        self.progress.console.print(line, markup=False, highlight=False)

    def show(self, event):
        if event.kind == "start" and event.stage == "import":  # a new compilation
            for task in self.tasks.values():
                self.progress.remove_task(task)
            self.tasks.clear()
        if event.kind == "start":
            self.tasks[event.stage] = self.progress.add_task(event.detail, total=None, stage=event.stage)
            return
        task = self.tasks[event.stage]
        if event.kind == "done":
            self.progress.update(task, total=1, completed=1)
        elif event.steps:
            self.progress.update(task, description=event.detail, total=event.steps, completed=event.step)
        else:
            self.progress.update(task, description=event.detail)

    def close(self):
        self.progress.stop()
        super().close()


@contextlib.contextmanager
def progress_display(tool: str, quiet: bool = False, stream=None):
    """Show the package's log records on ``stream`` (stderr) while the block runs: live on
    a terminal, plain lines otherwise, nothing when ``quiet`` (Python warnings included).
    Only there: a root handler installed meanwhile (``logging.debug`` in IREE's runtime
    installs one) would print each record a second time."""
    stream = stream or sys.stderr
    package = logging.getLogger(PACKAGE_LOGGER)
    level, propagate = package.level, package.propagate
    if quiet:
        handler = logging.NullHandler()
    else:
        handler = _Live(tool, stream) if stream.isatty() else _Lines(tool, stream)
    package.setLevel(logging.ERROR if quiet else logging.DEBUG)
    package.addHandler(handler)
    package.propagate = False
    try:
        with warnings.catch_warnings():
            if quiet:
                warnings.simplefilter("ignore")
            yield
    finally:
        package.removeHandler(handler)
        package.setLevel(level)
        package.propagate = propagate
        handler.close()
