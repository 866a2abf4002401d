"""Command line: the OpenCL C of every ``gpu.module`` of a mapped MLIR file (the IR the
OpenCL backend prints at its stage ``opencl``: ``--stop-after=device-code``), a
translation in the manner of ``mlir-translate``, for the printer's regression tests.

    python -m dnnf_mlir.codegen.gpu.opencl kernels.mlir [--split-input-file]

A module whose op the printer cannot print is an ``error:`` line naming the op and the
kernel (exit status 1); with ``--split-input-file`` each chunk (``// -----``) is
printed, or fails, on its own.
"""

from __future__ import annotations

import argparse
import sys

from ...._mlir import MLIRError, ir
from ....ir_walk import walk_ops
from ...errors import CodegenError
from .printer import opencl_source

SPLIT = "// -----"


def translate(text: str) -> str:
    """The OpenCL C of every ``gpu.module`` of the module ``text``, in order."""
    with ir.Context():
        module = ir.Module.parse(text)
        return "\n".join(opencl_source(gpu_module) for gpu_module in walk_ops(module.operation, {"gpu.module"}))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dnnf_mlir.codegen.gpu.opencl", description=__doc__.split("\n\n")[0])
    parser.add_argument("input", help="MLIR file holding gpu.modules, - for stdin")
    parser.add_argument("--split-input-file", action="store_true", help="translate each '// -----' chunk on its own")
    args = parser.parse_args(argv)
    text = sys.stdin.read() if args.input == "-" else open(args.input).read()
    status = 0
    for chunk in text.split(SPLIT) if args.split_input_file else [text]:
        try:
            sys.stdout.write(translate(chunk))
        except (CodegenError, MLIRError) as error:
            print(f"error: {error}", file=sys.stdout if args.split_input_file else sys.stderr)
            status = 1
        if args.split_input_file:
            sys.stdout.write(SPLIT + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
