"""``compile_cached``: ``compile_model`` through the compile cache.

What the session, ``dnnf-compile`` and ``dnnf-bench`` share: the key of a
compilation (the model's digest, its input shapes, the options and the resolved
CPU, see ``keys.py``), what the entry records of it for ``dnnf-cache list``, and the
compilation itself when the entry is missing.
"""

from __future__ import annotations

from pathlib import Path

from ..compiler.driver import CompileOptions, compile_model
from .keys import entry_key
from .store import CompileCache, build_uncached


def compile_fields(model_digest: str, shapes: dict, options: CompileOptions) -> dict:
    """Everything that decides the compiled code, as JSON values (the key's input)."""
    t = options.target
    return {
        "model": model_digest,
        "shapes": {name: list(shape) for name, shape in sorted(shapes.items())},
        "target": t.name, "cpu": t.cpu_name, "cpu_features": list(t.features),
        "threads": options.threads, "rewrite": options.rewrite, "fusion": options.fusion,
        "profile": options.profile, "outline": options.outline,
    }


def compile_cached(model, model_digest: str, shapes: dict, options: CompileOptions,
                   cache: CompileCache | None, load, name: str | None = None):
    """``(load(directory), compiled)``: the compiled ``model`` (content ``model_digest``)
    for input ``shapes`` (every input, static), from ``cache`` when it holds it, else
    compiled (into the cache, or a temporary directory when ``cache`` is None).
    ``model`` is the ONNX file, or a function returning it, called only to compile.
    ``load`` is as for ``CompileCache.fetch``; ``name`` is the model's, for the listing."""

    def build(directory):
        compile_model(model() if callable(model) else model, directory, target=options.target, threads=options.threads, shapes=shapes,
                      rewrite=options.rewrite, outline=options.outline, fusion=options.fusion, profile=options.profile)

    static = all(isinstance(d, int) for shape in shapes.values() for d in shape)
    if cache is None or not static:  # a symbolic shape cannot be compiled: compile_model says why
        return build_uncached(build, load)
    fields = compile_fields(model_digest, shapes, options)
    description = {"name": name or Path(model).stem, **fields}
    return cache.fetch(entry_key(fields), build, load, description)


__all__ = ["compile_cached", "compile_fields"]
