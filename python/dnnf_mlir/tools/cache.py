"""dnnf-cache: list, clear or prune the compile cache.

    dnnf-cache list                      # every entry: model, shapes, options, size, last use
    dnnf-cache prune --max-size 2G       # delete the least recently used down to 2 GiB
    dnnf-cache clear                     # delete everything
    dnnf-cache --cache-dir DIR list      # another cache than $DNNF_CACHE_DIR or ~/.cache/dnnf-mlir/compiled

The cache holds what InferenceSession, dnnf-compile and dnnf-bench compiled, one
entry per model content, input shapes, compile options, CPU and compiler version
(see dnnf_mlir.cache). Entries being built or loaded by another process are left.
"""

import argparse
import re
import time

from ..cache import CompileCache
from ..compiler.options import describe_cache_fields
from .common import ToolError, run_tool, tool_parser

UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
SIZE = re.compile(r"(?P<number>\d+(\.\d*)?)\s*(?P<unit>[KMGT]?)(I?B)?", re.IGNORECASE)


def parse_size(text: str) -> int:
    """'500M', '2G', '1.5GiB', '4096' -> bytes (units are powers of 1024)."""
    match = SIZE.fullmatch(text.strip())
    if not match:
        raise ToolError(f"--max-size expects a size such as 500M or 2G, got '{text}'")
    return int(float(match.group("number")) * UNITS[match.group("unit").upper()])


def human(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            break
        size /= 1024
    return f"{size:.0f} B" if unit == "B" else f"{size:.1f} {unit}"


def describe(info) -> str:
    d = info.description
    if not d:
        return f"{info.key[:12]}  {human(info.bytes):>10}  (no description: an entry of an older format or corrupt)"
    shapes = ", ".join(f"{n}={'x'.join(map(str, s))}" for n, s in d.get("shapes", {}).items())
    used = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.last_used))
    options = describe_cache_fields({k: v for k, v in d.items() if k not in ("name", "model", "shapes")})
    return f"{info.key[:12]}  {human(info.bytes):>10}  {used}  {d['name']} [{shapes}] {options}"


def make_parser() -> argparse.ArgumentParser:
    parser = tool_parser("dnnf-cache", __doc__)
    parser.add_argument("--cache-dir", metavar="DIR", help="the cache (default: $DNNF_CACHE_DIR or ~/.cache/dnnf-mlir/compiled)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{list,clear,prune}")
    commands.add_parser("list", help="every entry, least recently used first")
    commands.add_parser("clear", help="delete every entry")
    prune = commands.add_parser("prune", help="delete the least recently used entries down to a size")
    prune.add_argument("--max-size", required=True, metavar="SIZE", help="what the cache may keep: 500M, 2G, ...")
    return parser


def main(argv=None) -> int:
    args = make_parser().parse_args(argv)
    cache = CompileCache(args.cache_dir)
    if args.command == "list":
        entries = cache.entries()
        for info in entries:
            print(describe(info))
        print(f"{len(entries)} entries, {human(sum(e.bytes for e in entries))} in {cache.root}")
    elif args.command == "clear":
        removed, kept = cache.clear()
        print(f"deleted {removed} entries from {cache.root}" + (f"; {kept} in use by another process kept" if kept else ""))
    else:
        limit = parse_size(args.max_size)
        removed = cache.prune(limit)
        left = sum(e.bytes for e in cache.entries())
        print(f"deleted {len(removed)} entries ({human(sum(e.bytes for e in removed))}); "
              f"{human(left)} left in {cache.root}")
    return 0


def entry():
    run_tool("dnnf-cache", main)


if __name__ == "__main__":
    entry()
