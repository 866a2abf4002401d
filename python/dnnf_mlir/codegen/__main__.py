"""Command line: lower a linalg-on-tensors MLIR file and print the result.

    python -m dnnf_mlir.codegen model.mlir --target=aarch64 --emit=llvm | llc-22 ...
    python -m dnnf_mlir.codegen model.mlir --emit=mlir --stop-after=schedule
    python -m dnnf_mlir.codegen model.mlir --emit=asm --target=aarch64 -o kernel.s

--emit: mlir (the module after --stop-after, default: the LLVM dialect), llvm
(LLVM IR), asm / obj (through opt + llc), transform (the generated transform
scripts), schedules (the strategy chosen for each op, and the kernel function holding it).
"""

from __future__ import annotations

import argparse
import sys

from .._mlir import ir
from .cpu.objects import compile_object, emit_llvm_ir
from .errors import CodegenError
from .pipeline import PIPELINE_STAGES, lower_to_llvm
from .target import get_target


class _Stop(Exception):
    pass


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dnnf_mlir.codegen", description=__doc__.split("\n\n")[0])
    parser.add_argument("input", help="MLIR file (linalg on tensors), - for stdin")
    parser.add_argument("--target", default="host", help="host (default) or aarch64")
    parser.add_argument("--cpu", default=None, help="CPU as LLVM names it (default: $DNNF_CPU or native; generic for aarch64)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--emit", default="mlir", choices=["mlir", "llvm", "asm", "obj", "transform", "schedules"])
    parser.add_argument("--stop-after", choices=PIPELINE_STAGES, default=None)
    parser.add_argument("-o", "--output", default="-")
    args = parser.parse_args(argv)
    text = sys.stdin.read() if args.input == "-" else open(args.input).read()
    try:
        target = get_target(args.target, args.cpu)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    stopped = {}

    def dump(stage, module):
        if stage == args.stop_after:
            stopped["text"] = str(module)
            raise _Stop()

    with ir.Context():
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        try:
            report = lower_to_llvm(module, target, threads=args.threads, dump=dump if args.stop_after else None)
        except _Stop:
            report = None
        except CodegenError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        if args.emit == "mlir":
            result = stopped.get("text") or str(module)
        elif args.stop_after:
            parser.error("--stop-after only goes with --emit=mlir")
        elif args.emit == "transform":
            result = report.schedule_script + "\n" + report.vector_script
        elif args.emit == "schedules":
            result = "\n".join(f"{k.tag} {k.op} {list(k.shape)} {k.strategy} {k.details} @{k.function}" for k in report.schedules) + "\n"
        elif args.emit == "llvm":
            result = emit_llvm_ir(module)
        else:
            path = compile_object(emit_llvm_ir(module), target=target, assembly=args.emit == "asm",
                                  output=None if args.output == "-" else args.output)
            if args.output != "-":
                return 0
            mode = "r" if args.emit == "asm" else "rb"
            with open(path, mode) as f:
                result = f.read()
            if args.emit == "obj":
                sys.stdout.buffer.write(result)
                return 0
    if args.output == "-":
        sys.stdout.write(result)
    else:
        with open(args.output, "w") as f:
            f.write(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
