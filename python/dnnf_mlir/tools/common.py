"""What every dnnf command shares: one-line errors and exit codes, never a traceback."""

import argparse
import json
import re
import sys
from pathlib import Path

LOCATION = re.compile(r'loc\("(?P<file>[^"]*)":(?P<line>\d+):(?P<col>\d+)\)')


def tool_parser(prog: str, doc: str) -> argparse.ArgumentParser:
    """The argument parser of a tool whose module docstring is its help: the first
    paragraph describes it, the rest (usage examples, details) follows the options."""
    paragraphs = doc.split("\n\n")
    return argparse.ArgumentParser(prog=prog, description=paragraphs[0], epilog="\n\n".join(paragraphs[1:]),
                                   formatter_class=argparse.RawDescriptionHelpFormatter)


class ToolError(Exception):
    """A user-facing failure: printed as 'tool: error: message', exit status 1."""


def run_tool(name: str, main):
    try:
        status = main(sys.argv[1:])
    except KeyboardInterrupt:
        status = 130
    except Exception as error:
        status = _report(name, error)
    sys.exit(status)


def _report(name: str, error: Exception) -> int:
    """Print a user-facing error in one line (MLIR's as diagnostics) and return the exit
    status; re-raise anything else, a bug, with its traceback.

    The error types are imported once something failed: imported up front, they would
    load the code generator (``UnsupportedTargetError``) into every tool, ``dnnf-opt --help`` too.
    """
    from .._mlir import MLIRError
    from ..asm import SourceError
    from ..codegen import UnsupportedTargetError
    from ..ecg import UnsupportedTypeError, VerificationError
    from ..frontend.onnx_importer import OnnxImportError
    from ..interpreter import InterpreterError

    if isinstance(error, MemoryError):
        print(f"{name}: error: out of memory{f' ({error})' if str(error) else ''}", file=sys.stderr)
        return 1
    if isinstance(error, (ToolError, OnnxImportError, InterpreterError, VerificationError, UnsupportedTypeError,
                          UnsupportedTargetError, SourceError, OSError)):
        message = error.strerror + f": '{error.filename}'" if isinstance(error, OSError) and error.filename else error
        print(f"{name}: error: {message}", file=sys.stderr)
        return 1
    if isinstance(error, MLIRError):
        for diagnostic in error.error_diagnostics:
            print_diagnostic(diagnostic, name)
        if not error.error_diagnostics:
            print(f"{name}: error: {error.message}", file=sys.stderr)
        return 1
    raise error


def parse_shape_overrides(items) -> dict:
    """['x=1x3x224x224', ...] -> {'x': (1, 3, 224, 224)}."""
    shapes = {}
    for item in items or ():
        name, _, dims = item.rpartition("=")
        try:
            shapes[name] = tuple(int(d) for d in dims.split("x")) if dims else ()
        except ValueError:
            raise ToolError(f"--shape expects NAME=DxDx..., got '{item}'") from None
        if not name:
            raise ToolError(f"--shape expects NAME=DxDx..., got '{item}'")
    return shapes


def print_diagnostic(diagnostic, filename: str):
    """Print an MLIR diagnostic as 'file:line:col: severity: message', then its notes."""
    match = LOCATION.search(str(diagnostic.location))
    where = f"{filename}:{match.group('line')}:{match.group('col')}" if match else f"{filename}: {diagnostic.location}"
    severity = str(diagnostic.severity).rsplit(".", 1)[-1].lower()
    print(f"{where}: {severity}: {diagnostic.message}", file=sys.stderr)
    for note in diagnostic.notes:
        print_diagnostic(note, filename)


def onnxruntime_session(onnx_path, optimize: bool = False, threads: int | None = None):
    """An onnxruntime CPU session: graph optimizations off (ORT_DISABLE_ALL, the
    reference semantics) or all on (ORT_ENABLE_ALL); ``threads`` intra-op threads."""
    import onnxruntime

    from ..frontend.onnx_importer import MIN_OPSET, load_model
    from ..frontend.onnx_upgrade import upgrade

    options = onnxruntime.SessionOptions()
    level = onnxruntime.GraphOptimizationLevel
    options.graph_optimization_level = level.ORT_ENABLE_ALL if optimize else level.ORT_DISABLE_ALL
    options.log_severity_level = 3
    if threads:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
    # Idle workers sleep instead of spinning: spinning threads would take the cores from
    # whatever runs next in this process (the compiled model, in dnnf-bench's rounds),
    # as the compiled code's OpenMP workers do (codegen/cpu/openmp.py).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    # Also reads ONNX's text syntax; an old opset is upgraded as the importer does it
    # (onnxruntime lacks some opset-6 kernels, e.g. PRelu-6). A binary model that needs
    # no upgrade is read by onnxruntime from its file: serialized again, a large CNN's
    # weights would take a second.
    loaded = load_model(onnx_path)
    model = upgrade(loaded, MIN_OPSET)
    model = str(onnx_path) if model is loaded and Path(onnx_path).suffix == ".onnx" else model.SerializeToString()
    try:
        return onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    except Exception as error:  # noqa: BLE001 - onnxruntime raises its own untyped failures
        raise ToolError(f"onnxruntime cannot load {onnx_path}: {str(error).splitlines()[0]}") from None


def write_json_document(path, document: dict):
    """``document`` as JSON at ``path``, replacing it whole (never half written)."""
    tmp = Path(path).with_suffix(".tmp")
    tmp.write_text(json.dumps(document, indent=1) + "\n")
    tmp.replace(path)
