"""The fusion plan picture (--fusion-svg): a deep plan wraps into columns that fit two screens."""

from xml.etree import ElementTree

from dnnf_mlir.fusion.picture import ASPECT, plan_dot, plan_svg, render_svg, svg_size
from dnnf_mlir.fusion.plan_graph import PlanBox, PlanEdge, PlanGraph

SVG = "{http://www.w3.org/2000/svg}"
MIB = 2**20


def _residual_chain(blocks: int) -> PlanGraph:
    """input -> ``blocks`` fused conv+relu+add blocks, each adding the output of the
    block two before it (a residual edge, which crosses columns), then an unfused
    softmax -> output: 3 * blocks + 3 nodes, ``blocks`` + 1 kernels."""
    graph = PlanGraph(labels=["input 0"])
    previous = [0, 0]  # the last two blocks' outputs (the input at first)
    for _ in range(blocks):
        conv, relu, add = (len(graph.labels) + i for i in range(3))
        graph.labels += ["conv", "relu", "add"]
        graph.boxes.append(PlanBox([conv, relu, add], "Many-to-Many"))
        graph.edges += [PlanEdge(previous[-1], conv, MIB, False), PlanEdge(conv, relu, MIB, True),
                        PlanEdge(relu, add, MIB, True), PlanEdge(previous[-2], add, MIB, False)]
        previous = [previous[-1], add]
    softmax = len(graph.labels)
    graph.labels += ["softmax", "output 0"]
    graph.boxes.append(PlanBox([softmax]))
    graph.edges += [PlanEdge(previous[-1], softmax, MIB, False), PlanEdge(softmax, softmax + 1, 4096, False)]
    return graph


def test_long_plan_wraps_into_two_screens():
    graph = _residual_chain(40)  # 123 nodes, as many as ResNet-50's plan (126)
    one_column = svg_size(render_svg(plan_dot(graph)))
    assert one_column[1] > 10 * one_column[0] > 1000  # a tall column: the picture before wrapping
    svg = plan_svg(graph)
    width, height = svg_size(svg)
    # Two 1920x1080 screens side by side at 75% zoom show 3840 x 1080 points (1 pt = 4/3 px).
    assert width <= 3840 and height <= 1080, (width, height)
    assert width * height <= 1.1 * one_column[0] * one_column[1] + 3840 * 200  # wrapped, not blown up

    root = ElementTree.fromstring(svg)
    launches = [g.attrib["id"] for g in root.iter(f"{SVG}g") if g.attrib.get("id", "").startswith("launch_")]
    assert sorted(launches) == sorted(f"launch_{index}" for index in range(len(graph.boxes)))
    texts = [text.text for text in root.iter(f"{SVG}text")]
    assert "#0 Many-to-Many" in texts and "#40 softmax" in texts  # numbered boxes, unfused op alone
    stubs = [text for text in texts if text.startswith("from #")]
    assert stubs  # residual edges into a later column are stubs there, named by the box they come from
    assert texts.count("conv") == 40 and texts.count("1.0 MiB") > 0


def test_longer_plan_keeps_the_aspect():
    width, height = svg_size(plan_svg(_residual_chain(120)))
    assert ASPECT / 2 <= width / height <= 2 * ASPECT, (width, height)


def test_columns_hold_every_edge_once():
    graph = _residual_chain(30)
    dot = plan_dot(graph, columns=4)
    assert dot.count("subgraph cluster_column_") == 4
    assert dot.count(" -> ") == len(graph.edges)  # each edge drawn once, from its producer or its stub
    stubbed = [line for line in dot.splitlines() if line.strip().startswith("s") and " -> " in line]
    assert stubbed and all("[penwidth=" in line for line in stubbed)  # a stub's edge is materialised
