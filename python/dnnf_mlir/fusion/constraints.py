"""Legality constraints every fusion block satisfies, whichever planner formed it.

- the limits of the target's kernels (``codegen.FusionLimits``, from the target
  ``ecg-fuse`` is given; a CPU's: 32 inputs and 8 outputs, what ``ecg.fused`` can hold,
  and 16 live values, the AVX2 register file): at most ``max_inputs`` inputs and
  ``max_outputs`` outputs, at most ``max_live_values`` intermediate values live at
  once in the body's order;
- (Listing 1's planner only) no cycle through an op outside the block, contraction
  operands produced outside, a shared iteration domain (``joined_domain``), and, on a
  target with ``byte_contractions``, bytes converted for a contraction produced
  outside the conversion (``splits_byte_conversion``).
"""

from collections import Counter
from math import prod

import numpy as np

from ..codegen import FusionLimits
from ..ecg import from_mlir

# Their operands are read by the packing matmul/convolution kernels (DESIGN.md section
# 10: a contraction must always reach those kernels, whatever surrounds it), so a
# contraction takes no producer into its block: it fuses with its consumers, the
# epilogue (bias, activation, residual add).
CONTRACTIONS = frozenset({"conv", "conv_transpose", "gemm", "mat_mul"})
# The ops of the importer's conversion of 8-bit operands for an integer contraction
# (QLinearConv, MatMulInteger, ...): cast to i32, subtract the zero point, cast to f32.
BYTE_CONVERSION = frozenset({"cast", "sub"})


def live_values(graph, members) -> int:
    """The most intermediate values of the block that are live at once in program order
    (an output no body op reads again is stored when computed and not counted)."""
    order = sorted(members)
    last = {}
    for position, member in enumerate(order):
        for vid in graph.operands[member]:
            if graph.producer[vid] in members:
                last[vid] = position
    ends = Counter(last.values())
    live = peak = 0
    for position, member in enumerate(order):
        live += sum(vid in last for vid in graph.results[member]) - ends[position]
        peak = max(peak, live)
    return peak


def limits_violation(graph, members, limits: FusionLimits) -> str | None:
    """The name of the first operand or register limit of ``limits`` the block ``members`` exceeds."""
    if len(graph.inputs(members)) > limits.max_inputs:
        return "inputs"
    if len(graph.outputs(members)) > limits.max_outputs:
        return "outputs"
    if live_values(graph, members) > limits.max_live_values:
        return "live-values"
    return None


def feeds_contraction(graph, members, candidate: int) -> bool:
    """True when ``candidate`` and the block would hold a contraction with a producer of its operands."""
    nodes = graph.nodes
    if nodes[candidate].mnemonic in CONTRACTIONS and any(p in members for p in graph.preds[candidate]):
        return True
    return any(s in members and nodes[s].mnemonic in CONTRACTIONS for s in graph.succs[candidate])


def _converts_bytes(graph, node: int) -> bool:
    """Whether ``node`` casts 8-bit integers and its result reaches a contraction through
    the conversion's ops only."""
    if graph.nodes[node].mnemonic != "cast":
        return False
    dtype = from_mlir(graph.values[graph.operands[node][0]].type).dtype
    if dtype.kind not in "iu" or dtype.itemsize != 1:
        return False
    frontier, seen = [node], set()
    while frontier:
        current = frontier.pop()
        for succ in graph.succs[current]:
            mnemonic = graph.nodes[succ].mnemonic
            if mnemonic in CONTRACTIONS:
                return True
            if mnemonic in BYTE_CONVERSION and succ not in seen:
                seen.add(succ)
                frontier.append(succ)
    return False


def splits_byte_conversion(graph, members, candidate: int) -> bool:
    """True when ``candidate`` and the block would hold a conversion of bytes for a
    contraction (``_converts_bytes``) and the op producing those bytes: kept apart, the
    conversion is a kernel of its own, which dnnf-int8-matmuls replaces by the bytes."""
    if _converts_bytes(graph, candidate) and any(p in members for p in graph.preds[candidate]):
        return True
    return any(s in members and _converts_bytes(graph, s) for s in graph.succs[candidate])


def joined_domain(domain: tuple | None, shape: tuple) -> tuple | None:
    """The iteration domain of a block whose largest One-to-One op iterates over
    ``domain`` once a One-to-One op with output ``shape`` joins it; None when they do
    not share one.

    They share it when the shapes are equal, when one broadcasts into the other
    (numpy's rules: a bias, a per-row statistic of a normalization), or when they
    have as many elements (the same elements re-indexed by a Reorganize or Shuffle op
    of the block). An outer-product broadcast ([n, 1] with [1, m]) or unrelated sizes
    would make the block iterate over a space larger than either op's.
    """
    if domain is None or tuple(domain) == tuple(shape) or prod(domain) == prod(shape):
        return tuple(domain or shape)
    try:
        both = tuple(np.broadcast_shapes(domain, shape))
    except ValueError:
        return None
    return both if both in (tuple(domain), tuple(shape)) else None
