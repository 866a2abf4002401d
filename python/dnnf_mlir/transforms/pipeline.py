"""Textual pass pipelines mixing ECG (Python) passes with upstream MLIR passes.

The bindings cannot register Python passes by name, so the pipeline text is
split here: runs of upstream passes go to ``PassManager.add`` as text, ECG passes
are added as Python passes. An ECG pass nested under an op anchor (for example
``func.func(ecg-op-stats)``) runs once over the module.
"""

from .._mlir import PassManager, ir
from .registry import PASSES


class PipelineError(ValueError):
    pass


def _split_top_level(text: str) -> list:
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "({":
            depth += 1
        elif char in ")}":
            depth -= 1
            if depth < 0:
                raise PipelineError(f"unbalanced ')' or '}}' in pipeline '{text}'")
        elif char == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if depth:
        raise PipelineError(f"unbalanced '(' or '{{' in pipeline '{text}'")
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def _flatten(text: str, anchors: tuple) -> list:
    """[(anchors, element text)] for every pass in ``text``, in order."""
    items = []
    for element in _split_top_level(text):
        brace = element.find("{")
        paren = element.find("(")
        if paren != -1 and (brace == -1 or paren < brace):
            if not element.endswith(")"):
                raise PipelineError(f"malformed pipeline element '{element}'")
            items += _flatten(element[paren + 1 : -1], anchors + (element[:paren].strip(),))
        else:
            items.append((anchors, element))
    return items


def _render(anchors: tuple, elements: list) -> str:
    text = ",".join(elements)
    for anchor in reversed(anchors):
        text = f"{anchor}({text})"
    return text


def ecg_pass(element: str):
    """The ECG pass object for a pipeline element, or None for an upstream pass."""
    name, _, options = element.partition("{")
    cls = PASSES.get(name.strip())
    if cls is None:
        return None
    try:
        return cls.from_text(options.rstrip("}"))
    except ValueError as error:
        raise PipelineError(str(error)) from None


def build_pass_manager(pipeline: str, context: ir.Context) -> PassManager:
    """A PassManager on builtin.module for ``pipeline`` (with or without the module anchor)."""
    pipeline = pipeline.strip()
    elements = _split_top_level(pipeline)
    if len(elements) == 1 and elements[0].startswith("builtin.module("):
        items = _flatten(elements[0][len("builtin.module(") : -1], ())
    else:
        items = _flatten(pipeline, ())
    pm = PassManager("builtin.module", context)
    pending_anchors, pending = (), []

    def flush():
        if pending:
            text = _render(pending_anchors, pending)
            try:
                pm.add(text)
            except ValueError as error:
                raise PipelineError(str(error).strip()) from None
            pending.clear()

    for anchors, element in items:
        pass_ = ecg_pass(element)
        if pass_ is not None:
            flush()
            pass_.add_to(pm)
            continue
        if anchors != pending_anchors:
            flush()
            pending_anchors = anchors
        pending.append(element)
    flush()
    return pm
