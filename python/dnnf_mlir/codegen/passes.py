"""Running upstream pass pipelines and transform-dialect scripts on a module, with
failures reported as ``CodegenError``."""

from __future__ import annotations

from .. import _mlir
from .._mlir import PassManager, ir
from .errors import CodegenError


def run_passes(passes: str, module: ir.Module):
    """Run the comma-separated ``passes`` (nested in ``builtin.module``) on ``module``."""
    run_pipeline(f"builtin.module({passes})", module)


def run_pipeline(pipeline: str, module: ir.Module):
    """Run a whole textual pass ``pipeline`` (``builtin.module(...)``) on ``module``."""
    PassManager.parse(pipeline, module.context).run(module.operation)


def apply_script(module: ir.Module, text: str, name: str, what: str):
    """Run the transform named sequence ``@name`` of ``text``; a failure is a
    CodegenError saying ``what`` failed."""
    interpreter = _mlir.transform_interpreter
    try:
        script = ir.Module.parse(text, module.context)
        entry = None
        for op in script.body.operations:
            if op.operation.name == "transform.named_sequence" and ir.StringAttr(op.attributes["sym_name"]).value == name:
                entry = op
        interpreter.apply_named_sequence(module.operation, entry, script)
    except (ValueError, ir.MLIRError) as e:
        raise CodegenError(f"{what} failed: {e}") from None


_PASS_CACHE: dict = {}


def has_pass(name: str) -> bool:
    if name not in _PASS_CACHE:
        try:
            PassManager.parse(f"builtin.module({name})")
            _PASS_CACHE[name] = True
        except Exception:  # noqa: BLE001 - any parse failure means "not registered"
            _PASS_CACHE[name] = False
    return _PASS_CACHE[name]


__all__ = ["apply_script", "has_pass", "run_passes", "run_pipeline"]
