"""The CPU targets' rewrites of linalg before scheduling: ops turned into the shapes
the CPU kernels take, in an order where each sees the previous ones' results.

``rewrite_for_kernels(module, target)`` runs, in order: a recurrence's states written in
place across its time steps (``step_states``); exp/erf/tanh/powf as vectorizable
arithmetic (``approximations``); contractions written as ``linalg.generic`` rebuilt
as ``linalg.matmul`` / ``batch_matmul`` (``contractions``); batch-1 Gemms with a
transposed weight marked as matrix-vector products (``matvec``); matmuls reading an
operand transposed get a ``linalg.transpose`` + the plain op; grouped convolutions
of few channels per group become one register-tiled generic over their taps
(``grouped``), the others split per group; depthwise convolutions become loops over channels (rows at least a
vector wide: ``depthwise``) or flat rows of whole vectors (narrower, unstrided:
``flat_planes``); pooling and the other depthwise convolutions become element-wise
ops over the taps of their window (``windows``), a LRN's window of channels too
(``channel_windows``); single-image 1x1 convolutions and
those of output rows narrower than a vector become ``linalg.matmul``; stride-1 ones whose
rows waste columns computed over flat rows of whole vectors (``flat_conv_rows``); other NCHW
convolutions are widened to whole vectors along the
output width, strided ones split by phase (``convolutions``); a per-channel element-wise
op over a channel concat computed piece by piece, each piece copied into the concat in
the same pass (``concat_pointwise``); the convolutions' element-wise
consumers moved past the slices and reshapes those leave, to become epilogues
(``epilogues``); a merged 1x1 convolution read only in slices of channels computed
slice by slice, each part into its result (``sliced_matmuls``); an epilogue reading a transposing copy through a collapse (Winograd's
output) folded into the copy (``permuted_epilogues``); the unit dims of ops whose
innermost loop has extent 1 folded away, so that their vectors run along a dim of
extent > 1 (``unit_dims``); last, the innermost loops of element-wise ops over rows
narrower than a vector merged, so that their vectors are whole (``narrow_rows``), the
dims that a transpose moves together merged where its rows are narrower than a register
block (``narrow_transposes``); and the pieces of a concatenation computed in place in its
result (``concat_pieces``).
"""

from __future__ import annotations

from ..._mlir import ir
from ..approximations import approximate_math
from ..contractions import generic_contractions_to_matmul, normalize_matmuls
from .target import CpuTarget
from .channel_windows import channel_window_taps
from .concat_pieces import concat_pieces_in_place
from .depthwise import depthwise_channel_loops
from .concat_pointwise import pointwise_over_concat_pieces
from .flat_conv_rows import flat_row_convolutions
from .flat_planes import flat_plane_taps
from .grouped import grouped_taps
from .grouped_epilogues import grouped_epilogues
from .convolutions import convolutions_to_matmul, pad_convolutions, split_grouped_convolutions, split_strided_convolutions
from .epilogues import collapse_epilogues, widen_epilogues
from .matvec import rewrite_matvecs
from .narrow_rows import merge_narrow_rows
from .narrow_transposes import merge_narrow_transposes
from .permuted_epilogues import fold_permuted_epilogues
from .pool_inputs import pools_through_inputs
from .sliced_matmuls import split_sliced_matmuls
from .step_states import write_states_in_place
from .unit_dims import fold_unit_dims
from .windows import windows_to_taps


def rewrite_for_kernels(module: ir.Module, target: CpuTarget) -> int:
    """Rewrite ``module`` in place for the CPU schedules; returns how many ops changed."""
    lanes = target.lanes(32)
    rewritten = write_states_in_place(module)
    rewritten += approximate_math(module)
    rewritten += generic_contractions_to_matmul(module)
    rewritten += rewrite_matvecs(module, lanes)
    rewritten += normalize_matmuls(module)
    rewritten += grouped_taps(module, target)
    rewritten += split_grouped_convolutions(module)
    rewritten += grouped_epilogues(module)
    rewritten += pools_through_inputs(module)
    rewritten += depthwise_channel_loops(module, lanes)
    rewritten += flat_plane_taps(module, lanes)
    rewritten += windows_to_taps(module)
    rewritten += channel_window_taps(module)
    rewritten += convolutions_to_matmul(module, target)
    rewritten += flat_row_convolutions(module, target)
    rewritten += pad_convolutions(module, target)
    rewritten += split_strided_convolutions(module)
    rewritten += pointwise_over_concat_pieces(module)
    rewritten += widen_epilogues(module)
    rewritten += collapse_epilogues(module)
    rewritten += split_sliced_matmuls(module)
    rewritten += fold_permuted_epilogues(module)
    rewritten += fold_unit_dims(module)
    rewritten += merge_narrow_rows(module, target)
    rewritten += merge_narrow_transposes(module)
    rewritten += concat_pieces_in_place(module)
    return rewritten


__all__ = ["rewrite_for_kernels"]
