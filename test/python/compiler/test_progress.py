"""A compilation's progress: the events compile_model logs, and how the tools show them
(plain lines on a pipe, a live display on a terminal, nothing when quiet)."""

import io
import logging
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from dnnf_mlir.compiler import compile_model
from dnnf_mlir.progress import STAGES, ProgressEvent, report
from dnnf_mlir.tools.progress_display import progress_display

ROOT = Path(__file__).resolve().parents[3]
GELU_MLP = ROOT / "test" / "tools" / "dnnf-run" / "Inputs" / "gelu_mlp.onnxtxt"
PHASES = ("prepare", "schedule", "bufferize", "lower-vectors", "parallel", "llvm")


def test_compile_model_logs_its_stages_in_order(tmp_path, caplog):
    with caplog.at_level(logging.DEBUG, logger="dnnf_mlir"):
        manifest = compile_model(GELU_MLP, tmp_path / "gelu").manifest
    records = [r for r in caplog.records if hasattr(r, "progress")]
    assert all(r.getMessage() == r.progress.message() for r in records)
    events = [r.progress for r in records if r.name == "dnnf_mlir.compiler"]
    # Each stage starts, and is done, before the next starts.
    bounds = [(e.stage, e.kind) for e in events if e.kind != "step"]
    assert bounds == [(stage, kind) for stage in STAGES for kind in ("start", "done")]
    assert [k for k in manifest["compile_seconds"] if k != "total"] == list(STAGES)
    assert events[0].detail == str(GELU_MLP)
    lower = [e.detail for e in events if e.stage == "lower" and e.kind != "done"]
    assert lower == ["ecg-outline-kernels", "convert-ecg-to-linalg", "dnnf-int8-matmuls", "dnnf-winograd",
                     "dnnf-channel-panels", "dnnf-weight-panels", "dnnf-externalize-weights",
                     f"dnnf-lower-to-llvm: {manifest['unique_kernels']} kernels ({manifest['kernels']} launched per run)"]
    phases = [r.progress for r in records if r.name == "dnnf_mlir.codegen"]
    assert all(r.levelno == logging.DEBUG for r in records if r.name == "dnnf_mlir.codegen")
    assert [(e.detail, e.step, e.steps) for e in phases] == [
        (f"code generation: {phase}", index, len(PHASES)) for index, phase in enumerate(PHASES)
    ]


def _log(logger: str, event: ProgressEvent, level=logging.INFO):
    report(logging.getLogger(logger), event, level)


def _some_events():
    _log("dnnf_mlir.compiler", ProgressEvent("lower", "start", "dnnf-lower-to-llvm: 3 kernels (4 launched per run)"))
    _log("dnnf_mlir.codegen", ProgressEvent("lower", "step", "code generation: prepare", 0, 6), logging.DEBUG)
    _log("dnnf_mlir.fusion", ProgressEvent("fuse", "step", "measuring candidate 1: ecg.add | ecg.relu"))
    logging.getLogger("dnnf_mlir.frontend.onnx_upgrade").warning("'g': opset 6 upgraded to opset 7")
    logging.getLogger("dnnf_mlir.frontend").info("not progress, not a warning")
    _log("dnnf_mlir.compiler", ProgressEvent("lower", "done", seconds=1.5))


def test_lines_on_a_pipe_show_the_running_stage_and_warnings():
    stream = io.StringIO()
    with progress_display("tool", stream=stream):
        _some_events()
    assert stream.getvalue().splitlines() == [
        "tool: lower: dnnf-lower-to-llvm: 3 kernels (4 launched per run)",
        "tool: lower: code generation: prepare (0/6)",
        "tool: warning: 'g': opset 6 upgraded to opset 7",
    ]
    assert not logging.getLogger("dnnf_mlir").handlers


def test_quiet_shows_nothing():
    stream = io.StringIO()
    with progress_display("tool", quiet=True, stream=stream):
        _some_events()
    assert stream.getvalue() == ""


def test_live_display_on_a_pseudo_terminal(tmp_path):
    """dnnf-compile on a real terminal: the stages drawn with rich (escape sequences, a
    check mark when done; redrawn ten times a second, so a short step may never show),
    no plain lines; the summary on stdout."""
    controller, terminal = pty.openpty()
    command = [sys.executable, "-m", "dnnf_mlir.tools.compile", str(GELU_MLP), "-o", str(tmp_path / "gelu")]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=terminal, env=dict(os.environ, COLUMNS="120"))
    os.close(terminal)
    drawn = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the terminal closed: the process ended
            break
        if not chunk:
            break
        drawn += chunk
    os.close(controller)
    stdout = process.stdout.read().decode()
    assert process.wait() == 0
    text = drawn.decode()
    assert "\x1b[" in text and "✓" in text
    for stage in STAGES:
        assert f"{stage} " in text
    assert "code generation: llvm" in text  # the lower stage's last step, drawn by the final refresh at least
    assert "dnnf-compile: import:" not in text
    assert stdout.startswith("gelu_mlp: ")


def test_each_record_shown_once_when_a_root_handler_appears(caplog):
    """A library that calls ``logging.debug`` meanwhile (IREE's runtime does) gives the
    root logger a handler: the display's records do not reach it too."""
    stream = io.StringIO()
    root = logging.getLogger()
    with progress_display("tool", stream=stream):
        root.addHandler(caplog.handler)
        try:
            _some_events()
        finally:
            root.removeHandler(caplog.handler)
    assert len(stream.getvalue().splitlines()) == 3
    assert not [r for r in caplog.records if r.name.startswith("dnnf_mlir")]


@pytest.mark.parametrize("quiet", [False, True])
def test_the_package_logger_is_restored(quiet):
    package = logging.getLogger("dnnf_mlir")
    level, propagate = package.level, package.propagate
    with progress_display("tool", quiet=quiet, stream=io.StringIO()):
        assert package.handlers
    assert package.level == level and package.propagate == propagate and not package.handlers
