"""The Python pass base class and its options."""

import json
import sys
from dataclasses import dataclass

from .._mlir import PassManager, ir
from ..asm import write_bytes


class PassError(Exception):
    """Raised inside a pass: reported as an error at ``op`` (default: the anchor op),
    failing the pipeline."""

    def __init__(self, message: str, op=None):
        super().__init__(message)
        self.op = op


def option_items(text: str) -> list:
    """``(name, value)`` of each option in pipeline syntax (``a=1 b=x``, spaces or commas
    between); the value of a bare flag (``{full-unroll}``) is None."""
    items = []
    for item in text.replace(",", " ").split():
        name, has_value, value = item.partition("=")
        items.append((name, value if has_value else None))
    return items


def write_stats(report: dict, path: str):
    """Write a pass's JSON report to the file of its ``stats-file`` option ('-' is stderr:
    stdout carries the IR)."""
    text = json.dumps(report, indent=2) + "\n"
    if path == "-":
        sys.stderr.write(text)
    else:
        write_bytes(text.encode(), path)


@dataclass(frozen=True)
class Option:
    name: str
    type: type
    default: object
    help: str

    def parse(self, text: str):
        if self.type is bool:
            if text.lower() not in ("true", "false", "1", "0"):
                raise ValueError(f"option '{self.name}' expects true or false, got '{text}'")
            return text.lower() in ("true", "1")
        return self.type(text)


class ModulePass:
    """A pass over a ``builtin.module``; subclasses set NAME, SUMMARY, OPTIONS, run().

    A pass is known to pipelines and ``dnnf-opt`` by its entry in ``registry.PASS_TABLE``.
    """

    NAME = ""
    SUMMARY = ""
    OPTIONS: tuple = ()

    def __init__(self, **options):
        known = {o.name: o for o in self.OPTIONS}
        for name in options:
            if name not in known:
                raise ValueError(f"pass '{self.NAME}' has no option '{name}'")
        self.options = {o.name: options.get(o.name, o.default) for o in self.OPTIONS}

    @classmethod
    def from_text(cls, text: str) -> "ModulePass":
        """Options from pipeline syntax: 'a=1 b=x' (spaces or commas between)."""
        known = {o.name: o for o in cls.OPTIONS}
        options = {}
        for name, value in option_items(text):
            if name not in known:
                raise ValueError(f"pass '{cls.NAME}' has no option '{name}'")
            options[name] = known[name].parse(value or "")
        return cls(**options)

    def run(self, module: ir.Operation):
        raise NotImplementedError

    def __call__(self, op, pass_=None):
        """Run on ``op`` (a module or Operation); inside a PassManager, fail the pass on error."""
        operation = op.operation if hasattr(op, "operation") else op
        if pass_ is None:
            self.run(operation)
            return
        try:
            self.run(operation)
        except PassError as error:
            (error.op or operation).location.emit_error(f"{self.NAME}: {error}")
            pass_.signal_pass_failure()

    def add_to(self, pm: PassManager):
        pm.add(self, name=type(self).__name__, argument=self.NAME, description=self.SUMMARY)
