"""What every dnnf command shares: one-line errors and exit codes, never a traceback."""

import re
import sys

LOCATION = re.compile(r'loc\("(?P<file>[^"]*)":(?P<line>\d+):(?P<col>\d+)\)')


class ToolError(Exception):
    """A user-facing failure: printed as 'tool: error: message', exit status 1."""


def run_tool(name: str, main):
    from .._mlir import MLIRError
    from ..ecg import UnsupportedTypeError, VerificationError
    from ..frontend.onnx_importer import OnnxImportError
    from ..interpreter import InterpreterError

    try:
        status = main(sys.argv[1:])
    except (ToolError, OnnxImportError, InterpreterError, VerificationError, UnsupportedTypeError, OSError) as error:
        message = error.strerror + f": '{error.filename}'" if isinstance(error, OSError) and error.filename else error
        print(f"{name}: error: {message}", file=sys.stderr)
        status = 1
    except MLIRError as error:
        for diagnostic in error.error_diagnostics:
            print_diagnostic(diagnostic, name)
        if not error.error_diagnostics:
            print(f"{name}: error: {error.message}", file=sys.stderr)
        status = 1
    except KeyboardInterrupt:
        status = 130
    sys.exit(status)


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
