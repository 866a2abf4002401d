"""Hypothesis strategies: ``graphs()`` draws one well-typed random ONNX graph (a
``Case``), ``batches()`` a list of them compiled together.

A graph starts from one input and applies a few op families in turn (element-wise,
data movement, contractions, windows, reductions, row ops), each reading values of
the pool: the newest value half the time (chains, which fusion joins), an older one
otherwise (shared subexpressions, several consumers). Its outputs are the last value
and up to two others. Families are weighted towards what the code generator
specializes: contractions with epilogues, convolutions and pools, row ops.
"""

from __future__ import annotations

from hypothesis import strategies as st

from . import compute, elementwise, movement
from .draws import new_input
from .graph import Case, GraphBuilder

FAMILIES = {**elementwise.FAMILIES, **movement.FAMILIES, **compute.FAMILIES}
# Family -> relative weight. The first is what Hypothesis shrinks towards.
WEIGHTS = {
    "unary": 3, "binary": 3, "variadic": 1, "discontinuous": 1,
    "matmul": 3, "gemm": 1, "conv": 3, "conv_transpose": 1, "pool": 2, "reduce": 2, "row_op": 3, "normalization": 1,
    "reshape": 1, "transpose": 1, "slice": 1, "concat": 1, "split": 1, "gather": 1, "expand": 1, "tile": 1,
    "pad": 1, "reshaping": 1, "depth_space": 1, "resize": 1,
}
WEIGHTED = [name for name, weight in WEIGHTS.items() for _ in range(weight)]
TWO_THREADS = 4  # one graph in this many also runs its compiled code on two threads


@st.composite
def graphs(draw, max_ops: int = 8) -> Case:
    g = GraphBuilder()
    g.weights_as_inputs = draw(st.booleans())
    new_input(draw, g)
    for _ in range(draw(st.integers(1, max_ops))):
        FAMILIES[draw(st.sampled_from(WEIGHTED))](draw, g)
    computed = [v for v in g.values if v.name not in g.distributions]
    others = draw(st.lists(st.sampled_from(computed), max_size=2))
    outputs = list({v.name: v for v in [computed[-1], *others]}.values())
    threads = (1, 2) if draw(st.integers(0, TWO_THREADS - 1)) == TWO_THREADS - 1 else (1,)
    return Case(g.model(outputs, threads))


@st.composite
def batches(draw, size: int = 8, max_ops: int = 8) -> list:
    """Between 1 and ``size`` graphs (a count that shrinks, dropping graphs)."""
    return [draw(graphs(max_ops)) for _ in range(draw(st.integers(1, size)))]


__all__ = ["FAMILIES", "TWO_THREADS", "WEIGHTS", "batches", "graphs"]
