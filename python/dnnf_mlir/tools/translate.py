"""dnnf-translate: translations into and out of MLIR (for now: ONNX -> ECG)."""

import argparse
import sys
import time

from ..asm import write_module
from ..frontend.onnx_importer import import_onnx
from .common import ToolError, parse_shape_overrides, run_tool


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dnnf-translate", description="Translate models into the ECG dialect.")
    parser.add_argument("input", help="input model")
    parser.add_argument("--import-onnx", action="store_true", required=True, help="import an ONNX model")
    parser.add_argument("-o", dest="output", default="-", help="output file ('-' for stdout)")
    parser.add_argument("--shape", action="append", metavar="NAME=DIMS", help="static shape of an input, e.g. x=1x3x224x224")
    parser.add_argument("--emit-bytecode", action="store_true", help="write MLIR bytecode (compact for big weights)")
    parser.add_argument("--mlir-print-debuginfo", action="store_true", help="print locations (ONNX node names)")
    parser.add_argument("--time", action="store_true", help="print the import time to stderr")
    return parser


def main(argv=None) -> int:
    args = make_parser().parse_args(argv)
    start = time.perf_counter()
    module = import_onnx(args.input, shapes=parse_shape_overrides(args.shape))
    if args.time:
        print(f"import: {time.perf_counter() - start:.2f} s", file=sys.stderr)
    if not module.operation.verify():
        raise ToolError("the imported module does not verify")
    write_module(module, args.output, bytecode=args.emit_bytecode, debug_info=args.mlir_print_debuginfo)
    return 0


def entry():
    run_tool("dnnf-translate", main)


if __name__ == "__main__":
    entry()
