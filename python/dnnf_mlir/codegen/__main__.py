"""Command line: lower a linalg-on-tensors MLIR file for a target and print the result.

    python -m dnnf_mlir.codegen model.mlir --target=aarch64 --emit=llvm | llc-22 ...
    python -m dnnf_mlir.codegen model.mlir --emit=mlir --stop-after=schedule
    python -m dnnf_mlir.codegen model.mlir --emit=asm --target=aarch64 -o kernel.s
    python -m dnnf_mlir.codegen model.mlir --target=vulkan --emit=plan

--emit: mlir (the module after --stop-after, default: the lowered module), transform
(the generated transform scripts), schedules (the strategy chosen for each op, and the
kernel function holding it), or a format of the target's backend (CPU: llvm, the
LLVM IR; asm / obj, through opt + llc; Vulkan: plan, the runtime's dispatch plan;
spirv-asm, the kernels disassembled; OpenCL: plan; opencl, the program's OpenCL C).
--stop-after: a stage of the target's backend (CPU: prepare, schedule, bufferize,
lower-vectors, parallel, llvm; Vulkan: prepare, schedule, bufferize, outline,
device-code, spirv; OpenCL: the same, opencl last).
"""

from __future__ import annotations

import argparse
import sys

from .._mlir import ir
from .errors import CodegenError
from .pipeline import lower
from .target import backends, get_target

GENERIC_FORMATS = ("mlir", "transform", "schedules")


class _Stop(Exception):
    pass


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dnnf_mlir.codegen", description=__doc__.split("\n\n")[0])
    parser.add_argument("input", help="MLIR file (linalg on tensors), - for stdin")
    parser.add_argument("--target", default="host", help="host (default), aarch64, ... (a registered target)")
    parser.add_argument("--cpu", default=None, help="CPU as LLVM names it (default: $DNNF_CPU or native; generic for aarch64)")
    parser.add_argument("--device", default=None, help="GPU targets: the device profile (vulkan, opencl: generic, the default)")
    parser.add_argument("--threads", type=int, default=1)
    formats = list(GENERIC_FORMATS) + list(dict.fromkeys(f for b in backends() for f in b.output_formats))
    parser.add_argument("--emit", default="mlir", choices=formats)
    parser.add_argument("--stop-after", choices=list(dict.fromkeys(s for b in backends() for s in b.stages)))
    parser.add_argument("-o", "--output", default="-")
    args = parser.parse_args(argv)
    try:
        text = sys.stdin.read() if args.input == "-" else open(args.input).read()
        target = get_target(args.target, args.cpu, device=args.device)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    backend = target.backend
    if args.emit not in GENERIC_FORMATS and args.emit not in backend.output_formats:
        parser.error(f"--emit={args.emit}: the {backend.kind} backend emits {', '.join(backend.output_formats)}")
    if args.stop_after and args.stop_after not in backend.stages:
        parser.error(f"--stop-after={args.stop_after}: the {backend.kind} backend's stages are {', '.join(backend.stages)}")
    if args.stop_after and args.emit != "mlir":
        parser.error("--stop-after only goes with --emit=mlir")
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
            report = lower(module, target, threads=args.threads, dump=dump if args.stop_after else None)
            if args.emit == "mlir":
                result = str(module)
            elif args.emit == "transform":
                result = report.schedule_script + "\n" + report.mapping_script
            elif args.emit == "schedules":
                result = "\n".join(f"{k.tag} {k.op} {list(k.shape)} {k.strategy} {k.details} @{k.function}"
                                   for k in report.schedules) + "\n"
            else:
                result = backend.translate(module, target, args.emit)
        except _Stop:
            result = stopped["text"]
        except CodegenError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
    if args.output != "-":
        try:
            with open(args.output, "wb" if isinstance(result, bytes) else "w") as f:
                f.write(result)
        except OSError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
    elif isinstance(result, bytes):
        sys.stdout.buffer.write(result)
    else:
        sys.stdout.write(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
