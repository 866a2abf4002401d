"""The fusion plan as a picture: Graphviz DOT text of a ``PlanGraph``, rendered to SVG by ``dot``.

One cluster per fused block, labelled ``#i`` (its launch) and its mapping type,
holding its ops; an unfused op stands alone as ``#i op``. Each edge is a value from
its producer to a consumer, as wide as the log of its bytes: a value that stays inside
its block (never materialised, IR_removable) is a thin dashed grey line, a
materialised one a solid black line with its size.

A deep model is one tall column when drawn as one graph (ResNet-50: 262 x 10,370
points), so the nodes are split by depth into columns side by side, as many as make the
picture about ``ASPECT`` wide for its height: Graphviz lays out each column as its
own component, left to right. An edge into another column becomes a stub in that
column, "from #i", named after the box it comes from. ``annotations`` (per launch, a
``BoxNote``) add each kernel's measured numbers to its label and fill it by colour.
"""

from __future__ import annotations

import math
import shutil
import subprocess
from dataclasses import dataclass
from xml.etree import ElementTree

from .plan_graph import PlanGraph

# Fill colours of the clusters by mapping type.
COLOURS = {
    "One-to-One": "#e8f4e8", "One-to-Many": "#fff4dc", "Many-to-Many": "#e4ecfa",
    "Reorganize": "#f6e8f6", "Shuffle": "#fbe9e4",
}
ASPECT = 32 / 9  # width / height the columns aim at: two 16:9 screens side by side


class PictureError(Exception):
    """Graphviz missing, or failing on the plan."""


@dataclass(frozen=True)
class BoxNote:
    """What a kernel's box says beyond its ops: extra label lines, its fill, a tooltip."""

    lines: tuple
    fill: str
    tooltip: str = ""


def _size(nbytes: int) -> str:
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{nbytes} B"


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def node_depths(graph: PlanGraph) -> list:
    """Each node's longest path from an input (node ids are in topological order)."""
    depth = [0] * len(graph.labels)
    for edge in sorted(graph.edges, key=lambda e: e.consumer):
        depth[edge.consumer] = max(depth[edge.consumer], depth[edge.producer] + 1)
    return depth


def column_count(one_column: tuple) -> int:
    """Columns making the picture about ``ASPECT`` wide for its height, from the size
    (width, height) of its layout in one column: k columns are about k times as wide
    and a k-th as tall."""
    width, height = one_column
    return max(1, math.ceil(math.sqrt(ASPECT * height / max(width, 1.0))))


class _Dot:
    """The DOT lines of a ``PlanGraph`` in columns."""

    def __init__(self, graph: PlanGraph, annotations: dict, columns: int):
        self.graph, self.annotations, self.columns = graph, annotations, columns
        self.box_of = graph.box_of()
        depths = node_depths(graph)
        deepest = max(depths, default=0) + 1
        # A box goes whole into the column of its deepest node; the others follow their depth.
        unit_depth = list(depths)
        for box in graph.boxes:
            for node in box.nodes:
                unit_depth[node] = max(depths[n] for n in box.nodes)
        self.column = [min(self.columns - 1, d * self.columns // deepest) for d in unit_depth]
        self.stubs: dict = {}  # (producer node, column) -> stub name

    def node_label(self, node: int) -> str:
        box = self.box_of.get(node)
        if box is None or self.graph.boxes[box].mapping is not None:
            return self.graph.labels[node]
        return "\n".join([f"#{box} {self.graph.labels[node]}", *self._note_lines(box)])

    def _note_lines(self, box: int) -> tuple:
        note = self.annotations.get(box)
        return note.lines if note else ()

    def node_line(self, node: int) -> str:
        box = self.box_of.get(node)
        attributes = [f"label={_quoted(self.node_label(node))}"]
        if box is None:
            attributes.append("shape=ellipse")
        elif self.graph.boxes[box].mapping is None:
            attributes.append(f'id="launch_{box}"')
            note = self.annotations.get(box)
            if note:
                attributes += [f'fillcolor="{note.fill}"', f"tooltip={_quoted(note.tooltip)}"]
        return f"n{node} [{', '.join(attributes)}];"

    def cluster_lines(self, index: int) -> list:
        box = self.graph.boxes[index]
        note = self.annotations.get(index)
        label = "\n".join([f"#{index} {box.mapping}", *self._note_lines(index)])
        fill = note.fill if note else COLOURS.get(box.mapping, "white")
        lines = [f"    subgraph cluster_{index} {{",
                 f'      id="launch_{index}"; label={_quoted(label)}; fontsize=10; style=filled; color=grey40; '
                 f'fillcolor="{fill}";' + (f" tooltip={_quoted(note.tooltip)};" if note else "")]
        lines += [f"      {self.node_line(node)}" for node in box.nodes]
        return lines + ["    }"]

    def edge_line(self, edge) -> str:
        width = 1 + math.log2(max(edge.nbytes, 1024) / 1024) / 3
        if edge.inside:
            attributes = f"style=dashed, color=grey60, penwidth={width:.2f}"
        else:
            attributes = f'penwidth={width:.2f}, label="{_size(edge.nbytes)}"'
        return f"    {self.source(edge)} -> n{edge.consumer} [{attributes}];"

    def source(self, edge) -> str:
        """The producer's node, or in another column its stub there."""
        column = self.column[edge.consumer]
        if self.column[edge.producer] == column:
            return f"n{edge.producer}"
        key = (edge.producer, column)
        if key not in self.stubs:
            self.stubs[key] = f"s{edge.producer}_{column}"
        return self.stubs[key]

    def stub_text(self, producer: int) -> str:
        box = self.box_of.get(producer)
        return f"from {self.graph.labels[producer]}" if box is None else f"from #{box}"

    def lines(self) -> list:
        by_column = [[] for _ in range(self.columns)]
        for node in range(len(self.graph.labels)):
            if node not in self.box_of:
                by_column[self.column[node]].append(f"    {self.node_line(node)}")
        for index, box in enumerate(self.graph.boxes):
            if box.mapping is None:
                by_column[self.column[box.nodes[0]]] += [f"    {self.node_line(node)}" for node in box.nodes]
            elif box.nodes:
                by_column[self.column[box.nodes[0]]] += self.cluster_lines(index)
        edges = [[] for _ in range(self.columns)]
        for edge in self.graph.edges:
            edges[self.column[edge.consumer]].append(self.edge_line(edge))
        for (producer, column), name in self.stubs.items():
            by_column[column].append(f'    {name} [label={_quoted(self.stub_text(producer))}, shape=plaintext, '
                                     'fillcolor=none, fontcolor=grey30];')
        lines = []
        for column, (nodes, column_edges) in enumerate(zip(by_column, edges)):
            lines += [f"  subgraph cluster_column_{column} {{", '    style=invis; label="";', *nodes, *column_edges,
                      "  }"]
        return lines


def plan_dot(graph: PlanGraph, annotations: dict | None = None, columns: int = 1, title: str = "") -> str:
    """The DOT text of ``graph`` in ``columns``, each box with its ``annotations``
    (launch -> ``BoxNote``), the picture titled ``title``."""
    lines = ["digraph fusion {",
             "  rankdir=TB; ranksep=0.3; nodesep=0.2;",
             "  node [fontsize=10, style=filled, fillcolor=white, shape=box, height=0.3]; edge [fontsize=8];"]
    lines += _Dot(graph, annotations or {}, columns).lines()
    if title:  # after the columns, which would inherit it
        lines.append(f"  labelloc=t; fontsize=14; label={_quoted(title)};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def plan_svg(graph: PlanGraph, annotations: dict | None = None, title: str = "") -> bytes:
    """The SVG of ``graph`` (as ``plan_dot``) in the columns ``column_count`` picks
    from a first layout in one column, once corrected when uneven columns leave the
    picture narrower than ``ASPECT``."""
    columns = column_count(svg_size(render_svg(plan_dot(graph, annotations, 1))))  # the title spans all columns
    svg = render_svg(plan_dot(graph, annotations, columns, title))
    width, height = svg_size(svg)
    if width / height < ASPECT / 1.25:
        columns = math.ceil(columns * math.sqrt(ASPECT * height / width))
        svg = render_svg(plan_dot(graph, annotations, columns, title))
    return svg


def render_svg(dot_text: str) -> bytes:
    """SVG of ``dot_text`` by Graphviz's ``dot``."""
    dot = shutil.which("dot")
    if dot is None:
        raise PictureError("Graphviz's dot not found (package graphviz; tools/setup.sh installs it)")
    proc = subprocess.run([dot, "-Tsvg"], input=dot_text.encode(), capture_output=True)
    if proc.returncode != 0:
        raise PictureError(f"dot failed: {proc.stderr.decode().strip()[-500:]}")
    return proc.stdout


def svg_size(svg: bytes) -> tuple:
    """(width, height) in points of an SVG that ``dot`` wrote."""
    root = ElementTree.fromstring(svg)
    return tuple(float(root.attrib[side].removesuffix("pt")) for side in ("width", "height"))


__all__ = ["ASPECT", "BoxNote", "COLOURS", "PictureError", "column_count", "node_depths", "plan_dot", "plan_svg",
           "render_svg", "svg_size"]
