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

from . import compute, elementwise, indexing, movement, quantized, recurrent, resampling
from .draws import new_input
from .graph import Case, GraphBuilder

FAMILIES = {**elementwise.FAMILIES, **movement.FAMILIES, **resampling.FAMILIES, **compute.FAMILIES, **recurrent.FAMILIES,
            **indexing.FAMILIES, **quantized.FAMILIES}
# Family -> relative weight. The first is what Hypothesis shrinks towards.
WEIGHTS = {
    "unary": 6, "binary": 6, "variadic": 2, "discontinuous": 2,
    "matmul": 6, "gemm": 2, "conv": 6, "siblings": 3, "attention": 2, "conv_transpose": 2, "pool": 4, "reduce": 4, "row_op": 6, "normalization": 2,
    "reshape": 2, "transpose": 2, "slice": 2, "concat": 2, "split": 2, "gather": 2, "expand": 2, "tile": 2,
    "pad": 2, "reshaping": 2, "depth_space": 2, "resize": 3,
    "recurrent": 2,
    "scatter": 2, "gather_nd": 1, "top_k": 1, "cum_sum": 1, "trilu": 1, "qdq": 2, "quantized_contraction": 2,
    "grid_sample": 1,
}
WEIGHTED = [name for name, weight in WEIGHTS.items() for _ in range(weight)]
TWO_THREADS = 4  # one graph in this many also runs its compiled code on two threads


@st.composite
def graphs(draw, max_ops: int = 8, families: tuple = ()) -> Case:
    """A graph of up to ``max_ops`` families' ops (``families``: only these)."""
    g = GraphBuilder()
    g.weights_as_inputs = draw(st.booleans())
    new_input(draw, g)
    chosen = [name for name in WEIGHTED if name in families] if families else WEIGHTED
    for _ in range(draw(st.integers(1, max_ops))):
        FAMILIES[draw(st.sampled_from(chosen))](draw, g)
    computed = [v for v in g.values if v.name not in g.distributions]
    others = draw(st.lists(st.sampled_from(computed), max_size=2))
    outputs = list({v.name: v for v in [computed[-1], *others]}.values())
    threads = (1, 2) if draw(st.integers(0, TWO_THREADS - 1)) == TWO_THREADS - 1 else (1,)
    return Case(g.model(outputs, threads))


@st.composite
def batches(draw, size: int = 12, max_ops: int = 8, families: tuple = ()) -> list:
    """Between 1 and ``size`` graphs (a count that shrinks, dropping graphs)."""
    return [draw(graphs(max_ops, families)) for _ in range(draw(st.integers(1, size)))]


__all__ = ["FAMILIES", "TWO_THREADS", "WEIGHTS", "batches", "graphs"]
