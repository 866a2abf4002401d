"""The ECG op classes, grouped by module; importing this package defines them all.

- data movement (no arithmetic): ``reshape`` (reshape, flatten, squeeze,
  unsqueeze), ``slicing`` (slice, concat, split, pad), ``shuffle`` (transpose,
  depth_to_space, space_to_depth), ``one_to_many`` (expand, tile, gather,
  gather_elements) and ``resize``;
- ``elementwise``: the One-to-One ops, and ``quantization``: linear (de)quantization;
- Many-to-Many: ``convolution``, ``matmul``, ``pooling`` (incl. LRN), ``softmax``,
  ``reduction`` (incl. arg_max/arg_min), ``normalization`` and ``recurrent`` (LSTM/GRU/RNN loops);
- ``structure``: constants and fusion blocks;
- ``scatter`` and ``top_k``: the Many-to-Many ops lowered to sequential loops;
- ``gather_sum``: GridSample's weighted sum of the rows its taps pick.

``common`` and ``windows`` hold what several op modules share. The imports below
run in this order on purpose: it is the order in which the ops enter ``OPS``,
which the rewrite-rule catalogue and the importer iterate.
"""

from . import reshape, slicing, shuffle, one_to_many, resize  # data movement
from . import elementwise, quantization
from . import convolution, matmul, pooling, softmax, reduction, normalization  # Many-to-Many
from . import structure
from . import bitwise, trigonometric  # One-to-One, after the rest: the catalogue's order stays
from . import bitcast
from . import recurrent, scatter, top_k  # Many-to-Many loops, last: the catalogue's order stays
from . import gather_sum  # GridSample's weighted taps (Many-to-Many), after them: the catalogue's order stays

__all__ = [
    "reshape", "slicing", "shuffle", "one_to_many", "resize", "elementwise", "quantization",
    "convolution", "matmul", "pooling", "softmax", "reduction", "normalization", "structure",
    "bitwise", "trigonometric", "bitcast", "recurrent", "scatter", "top_k", "gather_sum",
]
