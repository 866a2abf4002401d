"""The declarative half of lowering, read from the top-level ``lowering/`` folder.

``lowering/`` holds what the compiler runs to lower a model, as files a user reads
and changes without reading Python, and that stock tools take as they are:

* ``*.pipeline``: a textual MLIR pass pipeline (``builtin.module(...)``, one pass a
  line, ``//`` comment lines): ``dnnf-opt --pass-pipeline-file=FILE``, or
  ``mlir-opt --pass-pipeline="$(grep -v '^ *//' FILE)"``.
* ``*.mlir``: transform-dialect libraries of ``transform.named_sequence`` entry
  points, for ``transform-preload-library`` + ``transform-interpreter``.

The folder is the checkout's (next to ``python/``) unless ``$DNNF_LOWERING`` names
another, e.g. a changed copy to try.
"""

from __future__ import annotations

import os
from pathlib import Path

LOWERING_ENV = "DNNF_LOWERING"


class LoweringFileError(FileNotFoundError):
    """A file of ``lowering/`` that is missing."""


def lowering_dir() -> Path:
    """The ``lowering/`` folder in use."""
    return Path(os.environ.get(LOWERING_ENV) or Path(__file__).resolve().parents[2] / "lowering")


def lowering_file(name: str) -> Path:
    """``lowering/<name>``; a missing file is a ``LoweringFileError`` naming it."""
    path = lowering_dir() / name
    if not path.is_file():
        raise LoweringFileError(f"{path} not found (the lowering/ folder of dnnf-mlir, or ${LOWERING_ENV})")
    return path


def pipeline_text(path: "str | os.PathLike") -> str:
    """The pass pipeline of a ``.pipeline`` file, without its comment lines."""
    lines = Path(path).read_text().splitlines()
    return "\n".join(line for line in lines if not line.lstrip().startswith("//")).strip()


def read_pipeline(name: str) -> str:
    """The pass pipeline of ``lowering/<name>``."""
    return pipeline_text(lowering_file(name))


def read_transform_library(name: str) -> str:
    """The text of the transform-dialect library ``lowering/<name>``."""
    return lowering_file(name).read_text()


__all__ = ["LOWERING_ENV", "LoweringFileError", "lowering_dir", "lowering_file", "pipeline_text", "read_pipeline", "read_transform_library"]
