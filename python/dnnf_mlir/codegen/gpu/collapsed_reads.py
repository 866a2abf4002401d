"""Readers of a collapsed value computed in the kernel iterate over its uncollapsed shape.

A LayerNorm over Swin's tokens reads them as ``1 x 256 x 48``, collapsed from the
window reversal's ``1 x 4 x 4 x 4 x 4 x 48`` (or the patch embedding's ``16 x 16``
grid): a collapse of several dims above 1 that no affine map without ``floordiv`` /
``mod`` reads (``reshapes.py``), so that the kernel took a launch for the reversal and
another for the normalization (``phases.py``). Upstream's reshape propagation
(``linalg-fuse-elementwise-ops``) expands a generic reading a collapse into the
collapse's source shape, reductions along dims the collapse keeps included, but only
when the collapse has that one reader; a normalization reads its input twice (the
mean, the centred values). ``split_collapsed_reads`` gives each reader a collapse of its
own, so that the propagation expands every reader: their results then come collapsed,
read the same way by the next ops, until the kernel's result, which the caller views.
"""

from __future__ import annotations

from ..._mlir import ir
from ...ir_walk import walk_ops
from ..linalg_queries import indexing_maps, reassociation_groups, static_tensor_type
from ..passes import run_passes

PROPAGATION = "canonicalize,linalg-fuse-elementwise-ops,canonicalize"  # no cse: it would merge the copies again


def _merges_dims(collapse) -> bool:
    """Whether ``collapse`` merges several dims above 1 into one (a unit dim dropped does not count)."""
    shape = static_tensor_type(collapse.operands[0]).shape
    return any(sum(1 for dim in group if shape[dim] != 1) > 1 for group in reassociation_groups(collapse))


def _expandable(reader) -> bool:
    """Whether the propagation can expand ``reader``: a ``linalg.generic`` whose maps are
    all projected permutations (upstream's condition)."""
    return reader.name == "linalg.generic" and all(m.is_projected_permutation for m in indexing_maps(reader))


def _split(module: ir.Module) -> int:
    """Give each reader of a merging collapse of a value computed by a linalg op its own
    copy of the collapse, where every reader is ``_expandable``; returns how many copies
    were made."""
    made = 0
    for collapse in walk_ops(module.operation, {"tensor.collapse_shape"}):
        source = collapse.operands[0]
        if not (isinstance(source, ir.OpResult) and source.owner.name.startswith("linalg.")) or \
                static_tensor_type(source) is None or not _merges_dims(collapse):
            continue
        uses = [(use.owner, use.operand_number) for use in collapse.results[0].uses]
        if len(uses) < 2 or not all(_expandable(owner) for owner, _ in uses):
            continue
        for owner, number in uses[1:]:
            with ir.InsertionPoint(collapse), collapse.location:
                copy = collapse.clone()
            owner.operands[number] = copy.results[0]
            made += 1
    return made


def split_collapsed_reads(module: ir.Module, rounds: int = 16) -> int:
    """Split the merging collapses with several readers (``_split``) and let the reshape
    propagation expand the readers, again while it leaves new such collapses (a
    reader's collapsed result read twice), at most ``rounds`` times; returns how many
    collapses were split."""
    split = 0
    for _ in range(rounds):
        made = _split(module)
        if not made:
            break
        split += made
        run_passes(PROPAGATION, module)
    return split


__all__ = ["split_collapsed_reads"]
