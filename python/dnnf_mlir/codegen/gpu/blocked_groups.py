"""Grouped convolutions (AlexNet's two towers) in NC4HW4, so that a run of blocked
kernels goes through them with no copy back to NCHW.

A grouped convolution lowers to ``linalg.conv_2d_ngchw_gfchw`` between views: its input
``[N, C, H, W]`` expanded to ``[N, G, C/G, H, W]``, its filters ``[F, C/G, KH, KW]`` to
``[G, F/G, C/G, KH, KW]``, its result ``[N, G, F/G, OH, OW]`` collapsed back to
``[N, F, OH, OW]``. Where each group's input and output channels fill their blocks
(``C/G`` and ``F/G`` multiples of 4), a block of output channels lies in one group, and
the blocked convolution (``blocked_kernels._blocked_convolution``) computes it as a
group-1 one over the ``C/G`` channels of its group: the filters ``[F, C/G, KH, KW]``
packed as for a group-1 convolution, the input's channel block read at
``(fb floordiv (F/G/4)) * (C/G/4) + cb``. ``GroupedConvolution`` says where those parts are.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..._mlir import ir
from ..constant_filters import ConstantFilters
from ..linalg_queries import producer, reassociation_groups
from .nc4hw4 import BLOCK

GROUPED = "linalg.conv_2d_ngchw_gfchw"
_SPLIT_CHANNELS = [[0], [1, 2], [3], [4]]  # [N, C, H, W] <-> [N, G, C/G, H, W]


@dataclass
class GroupedConvolution:
    """A ``GROUPED`` op's blocked parts: the ``[N, C, H, W]`` it reads, its filters' source
    (``[F, C/G, KH, KW]``), and the blocks of output and input channels per group."""

    x: ir.Value
    filters: ConstantFilters
    output_blocks: int
    input_blocks: int

    @classmethod
    def of(cls, conv, calls: dict) -> "GroupedConvolution | None":
        """The parts of the ``GROUPED`` op ``conv`` when its views are the lowering's
        and each group's channels fill their blocks, else None."""
        x_view, w_view = producer(conv.operands[0]), producer(conv.operands[1])
        if any(view is None or view.name != "tensor.expand_shape" or reassociation_groups(view) != groups
               for view, groups in ((x_view, _SPLIT_CHANNELS), (w_view, [[0, 1], [2], [3], [4]]))):
            return None
        _, group_outputs, group_inputs, _, _ = ir.RankedTensorType(conv.operands[1].type).shape
        if group_outputs % BLOCK or group_inputs % BLOCK:
            return None
        filters = ConstantFilters(w_view, calls, 0)
        if not filters.constant():
            return None
        return cls(x_view.operands[0], filters, group_outputs // BLOCK, group_inputs // BLOCK)

    def input_block(self, output_block: ir.AffineExpr, input_block: ir.AffineExpr) -> ir.AffineExpr:
        """The input's channel block that output block ``output_block`` reads as its
        group's block ``input_block``."""
        blocks = ir.AffineConstantExpr.get
        return ir.AffineFloorDivExpr.get(output_block, blocks(self.output_blocks)) * self.input_blocks + input_block


def collapses_groups(op) -> bool:
    """Whether ``op`` views a ``GROUPED`` op's ``[N, G, F/G, OH, OW]`` as ``[N, F, OH, OW]``."""
    source = producer(op.operands[0]) if op.name == "tensor.collapse_shape" else None
    return source is not None and source.name == GROUPED and reassociation_groups(op) == _SPLIT_CHANNELS


__all__ = ["GROUPED", "GroupedConvolution", "collapses_groups"]
