#!/usr/bin/env python3
"""Generate the ECG dialect's documentation files in dialect/ from the op classes.

- dialect/ecg.irdl.mlir: the dialect's IRDL definition (``dnnf_mlir.dialect_docs.irdl_text``),
  loadable by stock MLIR tools, e.g. ``torch-mlir-opt --irdl-file=dialect/ecg.irdl.mlir``;
- dialect/ECGOps.md: the Markdown op reference (``dnnf_mlir.dialect_docs.op_reference_markdown``);
- dialect/RewriteRules.md: the ecg-rewrite rule catalogue with each rule's FLOPs on its
  example (``dnnf_mlir.dialect_docs.rules_markdown``; a few seconds).

Usage: python tools/gen_dialect_docs.py [--check] [--out-dir DIR]

``--check`` writes nothing and exits 1, naming the stale files, when the files on
disk differ from what the code generates (test/python/test_dialect_docs.py does
the same check).
"""

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Document the checkout this script lives in, whichever dnnf_mlir is installed.
sys.path.insert(0, str(REPO / "python"))

from dnnf_mlir.dialect_docs import irdl_text, op_reference_markdown, rules_markdown  # noqa: E402

FILES = {
    "ecg.irdl.mlir": irdl_text,
    "ECGOps.md": op_reference_markdown,
    "RewriteRules.md": rules_markdown,
}


def generate() -> dict:
    """File name -> generated text."""
    return {name: make() for name, make in FILES.items()}


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a file on disk is stale; write nothing")
    parser.add_argument("--out-dir", type=Path, default=REPO / "dialect", help="output directory (default: dialect/)")
    args = parser.parse_args(argv)

    texts = generate()
    if args.check:
        stale = []
        for name, text in texts.items():
            path = args.out_dir / name
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(_display(path))
        if stale:
            for path in stale:
                print(f"{path} is stale: it differs from what the code generates", file=sys.stderr)
            print("run: python tools/gen_dialect_docs.py", file=sys.stderr)
            return 1
        print("dialect docs are up to date")
        return 0

    args.out_dir.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        path = args.out_dir / name
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            print(f"unchanged {_display(path)}")
            continue
        path.write_text(text, encoding="utf-8")
        print(f"wrote {_display(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
