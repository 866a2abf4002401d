"""``python -m dnnf_mlir.fuzz run N`` runs a campaign of N graphs (``tools/fuzz.sh``);
``python -m dnnf_mlir.fuzz replay FILE...`` checks saved graphs and prints what fails;
``--target vulkan`` or ``--target opencl`` checks them on a GPU target instead of the host."""

import argparse
import json
import sys
from pathlib import Path

from .campaign import format_summary, run_campaign
from .graph import Case
from .gpu import TARGETS, check_cases_on
from .strategies import FAMILIES


def replay(paths, target: str = "host") -> int:
    status = 0
    for path in paths:
        failures = check_cases_on(target, [Case.from_bytes(Path(path).read_bytes())])
        for failure in failures:
            print(f"{path}: {failure}")
            status |= failure.kind != "unsupported"
        if not failures:
            print(f"{path}: ok")
    return status


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dnnf_mlir.fuzz", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a campaign")
    run.add_argument("graphs", type=int)
    run.add_argument("--workers", type=int, default=2)
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--out", default="build/fuzz", help="where failing graphs and summary.json go")
    run.add_argument("--families", default="", help="only these op families, comma-separated (e.g. conv,pool,matmul)")
    run.add_argument("--target", choices=TARGETS, default="host", help="where the graphs are compiled and run")
    again = commands.add_parser("replay", help="check saved graphs (.onnx)")
    again.add_argument("--target", choices=TARGETS, default="host", help="where the graphs are compiled and run")
    again.add_argument("paths", nargs="+")
    args = parser.parse_args(argv)
    if args.command == "replay":
        return replay(args.paths, args.target)
    families = tuple(f for f in args.families.split(",") if f)
    unknown = set(families) - set(FAMILIES)
    if unknown:
        parser.error(f"unknown families {', '.join(sorted(unknown))} (known: {', '.join(FAMILIES)})")
    summary = run_campaign(args.graphs, args.workers, args.seed, args.out, families, args.target)
    (Path(args.out) / "summary.json").write_text(json.dumps(summary, indent=1))
    print(format_summary(summary))
    return 1 if summary["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
