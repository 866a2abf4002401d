"""The fusion plan as a picture: Graphviz DOT text, rendered to SVG by ``dot``.

One cluster per ``ecg.fused`` op, labelled with its mapping type, holding its ops;
unfused ops stand alone. Each edge is a value from its producer to a consumer, as wide
as the log of its bytes: a value that stays inside its block (never materialised,
IR_removable) is a thin dashed grey line, a materialised one a solid black line with
its size. Constants are left out (weights would hide the graph).
"""

from __future__ import annotations

import math
import shutil
import subprocess

from .._mlir import ir
from ..ecg import from_mlir

# Fill colours of the clusters by mapping type.
COLOURS = {
    "One-to-One": "#e8f4e8", "One-to-Many": "#fff4dc", "Many-to-Many": "#e4ecfa",
    "Reorganize": "#f6e8f6", "Shuffle": "#fbe9e4",
}


class PictureError(Exception):
    """Graphviz missing, or failing on the plan."""


def _bytes(value) -> int:
    try:
        return from_mlir(value.type).nbytes
    except Exception:  # noqa: BLE001 - a non-tensor value (none in ECG functions) carries nothing drawn
        return 0


def _size(nbytes: int) -> str:
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{nbytes} B"


class _Drawing:
    """The DOT lines of one function, built by walking its ops and fused bodies."""

    def __init__(self, function, prefix: str):
        self.lines: list[str] = []
        self.node_of: dict = {}  # ir.Value -> node id of its producer (or input)
        self.removed: set = set()  # values that never leave their block
        self.count = 0
        self.prefix = prefix
        self.function = function

    def node(self, label: str, shape: str = "box") -> str:
        name = f"{self.prefix}n{self.count}"
        self.count += 1
        self.lines.append(f'    {name} [label="{label}", shape={shape}];')
        return name

    def edge(self, value, consumer: str):
        producer = self.node_of.get(value)
        if producer is None:
            return  # a constant
        nbytes = _bytes(value)
        width = 1 + math.log2(max(nbytes, 1024) / 1024) / 3
        if value in self.removed:
            self.lines.append(f"  {producer} -> {consumer} [style=dashed, color=grey60, penwidth={width:.2f}];")
        else:
            self.lines.append(f'  {producer} -> {consumer} [penwidth={width:.2f}, label="{_size(nbytes)}"];')

    def draw(self) -> list:
        body = self.function.regions[0].blocks[0]
        for index, argument in enumerate(body.arguments):
            self.node_of[argument] = self.node(f"input {index}", shape="ellipse")
        clusters = 0
        for op in body.operations:
            op = op.operation
            if op.name == "ecg.constant":
                continue
            if op.name == "ecg.fused":
                self._fused(op, clusters)
                clusters += 1
            elif op.name == "func.return":
                for index, value in enumerate(op.operands):
                    self.edge(value, self.node(f"output {index}", shape="ellipse"))
            else:
                node = self.node(op.name.removeprefix("ecg."))
                for value in op.operands:
                    self.edge(value, node)
                for result in op.results:
                    self.node_of[result] = node
        return self.lines

    def _fused(self, fused, cluster: int):
        inner = fused.regions[0].blocks[0]
        for argument, operand in zip(inner.arguments, fused.operands):
            if operand in self.node_of:
                self.node_of[argument] = self.node_of[operand]
        mapping = ir.StringAttr(fused.attributes["mapping"]).value
        self.lines.append(f"  subgraph cluster_{cluster} {{")
        self.lines.append(f'    label="{mapping}"; style=filled; color=grey40; fillcolor="{COLOURS.get(mapping, "white")}";')
        ops = [op.operation for op in inner.operations]
        yielded = set(ops[-1].operands)
        edges = []
        for op in ops[:-1]:
            if op.name == "ecg.constant":
                continue
            node = self.node(op.name.removeprefix("ecg."))
            edges += [(value, node) for value in op.operands]
            for result in op.results:
                self.node_of[result] = node
                if result not in yielded:
                    self.removed.add(result)
        for result, value in zip(fused.results, ops[-1].operands):
            self.node_of[result] = self.node_of.get(value)
        self.lines.append("  }")
        for value, node in edges:
            self.edge(value, node)


def plan_dot(module) -> str:
    """The DOT text of every function of a fused ECG ``module``."""
    op = module.operation if hasattr(module, "operation") else module
    lines = ["digraph fusion {", "  rankdir=TB; node [fontsize=10, style=filled, fillcolor=white]; edge [fontsize=8];"]
    functions = [f.operation for f in op.regions[0].blocks[0].operations if f.operation.name == "func.func"]
    for index, function in enumerate(functions):
        lines += _Drawing(function, f"f{index}").draw()
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_svg(dot_text: str) -> bytes:
    """SVG of ``dot_text`` by Graphviz's ``dot``."""
    dot = shutil.which("dot")
    if dot is None:
        raise PictureError("Graphviz's dot not found (package graphviz; tools/setup.sh installs it)")
    proc = subprocess.run([dot, "-Tsvg"], input=dot_text.encode(), capture_output=True)
    if proc.returncode != 0:
        raise PictureError(f"dot failed: {proc.stderr.decode().strip()[-500:]}")
    return proc.stdout


__all__ = ["COLOURS", "PictureError", "plan_dot", "render_svg"]
