"""Textual pass pipelines mixing ECG (Python) passes with upstream MLIR passes.

The bindings cannot register Python passes by name, so the pipeline text is
split here: runs of upstream passes go to ``PassManager.add`` as text, ECG passes
are added as Python passes. An ECG pass nested under an op anchor (for example
``func.func(ecg-op-stats)``) runs once over the module.
"""

from .._mlir import PassManager, ir
from .pass_base import option_items
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


class Pipeline:
    """A module-level pass pipeline as a list of ``(pass, options)``, so that a driver
    sets the options of a named pass, or leaves it out, without editing its text."""

    def __init__(self, text: str):
        body = text.strip()
        if not (body.startswith("builtin.module(") and body.endswith(")")):
            raise PipelineError(f"a pipeline is 'builtin.module(...)', got: {body[:60]}")
        self.passes = [_split_options(element) for element in _split_top_level(body[len("builtin.module("):-1])]

    def names(self) -> list:
        return [name for name, _ in self.passes]

    def with_options(self, name: str, **options) -> "Pipeline":
        """The pipeline with ``options`` (Python names: ``weights_file`` is ``weights-file``) set on pass ``name``."""
        if name not in self.names():
            raise PipelineError(f"the pipeline has no pass {name}")
        changed = self._copy()
        for index, (pass_name, current) in enumerate(changed.passes):
            if pass_name == name:
                updated = dict(current)
                updated.update({key.replace("_", "-"): str(value) for key, value in options.items()})
                changed.passes[index] = (pass_name, updated)
        return changed

    def replaced(self, name: str, by: str) -> "Pipeline":
        """The pipeline with pass ``by`` where it has ``name`` (with the same options)."""
        changed = self._copy()
        changed.passes = [(by if n == name else n, o) for n, o in changed.passes]
        return changed

    def inserted_after(self, name: str, new: str) -> "Pipeline":
        """The pipeline with pass ``new`` (no options) right after pass ``name``."""
        if name not in self.names():
            raise PipelineError(f"the pipeline has no pass {name}")
        changed = self._copy()
        index = changed.names().index(name) + 1
        changed.passes[index:index] = [(new, {})]
        return changed

    def without(self, name: str) -> "Pipeline":
        changed = self._copy()
        changed.passes = [(n, o) for n, o in changed.passes if n != name]
        return changed

    def element_texts(self) -> list:
        """Each pass in pipeline syntax (``name{key=value ...}``)."""
        def option(key, value):
            return key if value is None else f"{key}={value}"

        return [name + ("{" + " ".join(option(k, v) for k, v in options.items()) + "}" if options else "")
                for name, options in self.passes]

    def text(self) -> str:
        return "builtin.module(" + ",".join(self.element_texts()) + ")"

    def _copy(self) -> "Pipeline":
        copy = Pipeline.__new__(Pipeline)
        copy.passes = list(self.passes)
        return copy


def _split_options(element: str) -> tuple:
    """``name{a=1 b=2}`` -> (name, {a: 1, b: 2}); a nested pipeline (``func.func(...)``)
    stays one opaque name."""
    if "{" not in element or "(" in element.partition("{")[0]:
        return element, {}
    name, _, rest = element.partition("{")
    return name.strip(), dict(option_items(rest.rstrip("}")))


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
