"""``compile_cached``: ``compile_model`` through the compile cache.

What the session, ``dnnf-compile`` and ``dnnf-bench`` share: the key of a
compilation (the model's digest, its input shapes, the options and the resolved
CPU, see ``keys.py``), what the entry records of it for ``dnnf-cache list``, and the
compilation itself when the entry is missing.
"""

from __future__ import annotations

import functools
import shutil
import tempfile
from pathlib import Path

from ..compiler import CompileOptions, compile_model
from ..compiler.driver import ECG_IR, LLVM_IR
from ..compiler.huge_pages import copy_aligned
from .entry import ENTRY_FILE
from .keys import entry_key
from .store import CompileCache, build_uncached


def compile_fields(model_digest: str, shapes: dict, options: CompileOptions) -> dict:
    """Everything that decides the compiled code, as JSON values (the key's input)."""
    shapes = {name: list(shape) for name, shape in sorted(shapes.items())}
    return {"model": model_digest, "shapes": shapes, **options.cache_fields()}


def compile_cached(model, model_digest: str, shapes: dict, options: CompileOptions,
                   cache: CompileCache | None, load, name: str | None = None):
    """``(load(directory), compiled)``: the compiled ``model`` (content ``model_digest``)
    for input ``shapes`` (every input's, all static), from ``cache`` when it holds it, else
    compiled (into the cache, or a temporary directory when ``cache`` is None).
    ``model`` is the ONNX file, or a function returning it, called only to compile.
    ``load`` is as for ``CompileCache.fetch``; ``name`` is the model's, for the listing."""

    def build(directory):
        compile_model(model() if callable(model) else model, directory, options=options, shapes=shapes)

    if cache is None:
        return build_uncached(build, load)
    fields = compile_fields(model_digest, shapes, options)
    return cache.fetch(entry_key(fields), build, load, {"name": name or Path(model).stem, **fields})


def store_compiled(outdir: Path, model_digest: str, shapes: dict, options: CompileOptions, cache: CompileCache,
                   name: str):
    """Keep the directory ``compile_model`` made in ``outdir`` in ``cache`` (unless it has
    that entry), without the IR files of ``keep_ir``: what a cache hit would have given."""
    fields = compile_fields(model_digest, shapes, options)
    copy = functools.partial(shutil.copytree, outdir, ignore=shutil.ignore_patterns(ECG_IR, LLVM_IR),
                             copy_function=copy_aligned)
    cache.fetch(entry_key(fields), copy, lambda directory: None, {"name": name, **fields})


def copy_entry(entry: Path, outdir: Path):
    """Copy a cache entry to ``outdir`` (replaced), as ``compile_model`` would have
    written it: built under a temporary name next to it and renamed at the end."""
    outdir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{outdir.name}.", dir=outdir.parent))
    try:
        shutil.copytree(entry, staging / "copy", ignore=shutil.ignore_patterns(ENTRY_FILE), copy_function=copy_aligned)
        if outdir.exists():
            shutil.rmtree(outdir)
        (staging / "copy").rename(outdir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


__all__ = ["compile_cached", "compile_fields", "copy_entry", "store_compiled"]
