"""convert-ecg-to-linalg: every ECG op becomes upstream ops on tensors.

Named linalg ops where upstream has one (matmul, batch_matmul, convolutions,
pooling, transpose, broadcast, fill, reduce), ``linalg.generic`` with arith/math
bodies for elementwise ops (numpy broadcasting through the indexing maps), tensor
ops for data movement (expand_shape/collapse_shape, extract_slice, concat, pad)
and ``arith.constant`` for ``ecg.constant``.

The lowering is a table, ``LOWERINGS``, from ECG mnemonic to a small function
``lower(op, args) -> [values]``: ``op`` is the ECG op (attributes and types),
``args`` the operand values to use (they differ from the op's operands inside an
``ecg.fused`` body, which is inlined). Functions run with the insertion point before
the op and its location as the default. An op without an entry, or with a
configuration its entry does not handle, is an error at the op's location and the
pass fails.

Semantics follow each op's numpy ``reference`` (the interpreter), including the
order of floating-point operations where it is cheap to do so.

One module per purpose:

- ``registry``: the ``LOWERINGS`` table and its ``@lowers`` decorator;
- ``builders``: scalar arithmetic and tensor building blocks every family uses;
- ``elementwise``: unary, binary and ternary ops, ``cast``, ``clip``, ``bit_shift``;
- ``matmul``: ``gemm`` and ``mat_mul``;
- ``convolution``: ``conv``, any rank onto the 2-d named convolutions;
- ``conv_transpose``: ``conv_transpose``, one convolution per phase of the output;
- ``pooling``: max, average and global pooling;
- ``normalization``: softmax, batch/layer/instance normalization, LRN;
- ``reduction``: ``reduce_*``, ``arg_max``/``arg_min``;
- ``data_movement``: ``constant``, reshapes, transpose, slice, concat, split, pad,
  expand, tile, gathers, depth/space rearrangements;
- ``flat_reads``: how gathers read their source (its 1-d view, so that they vectorize);
- ``resize``: ``resize``, a gather with its taps (indices, weights) as constants;
- ``quantization``: ``quantize_linear``, ``dequantize_linear``, one elementwise generic each;
- ``bitwise_trig``: the bitwise ops and the trigonometric/hyperbolic functions;
- ``scatter``, ``top_k``: the scatters and TopK, ``scf.for`` loops over tensors updated
  in place (the one family that is not a linalg op);
- ``pass_``: the pass itself (checking, lowering op by op, inlining ``ecg.fused``).
"""

from .pass_ import ConversionError, ConvertECGToLinalgPass, LoweringError, convert_ecg_to_linalg, convert_module
from .registry import LOWERINGS, lowers

__all__ = [
    "LOWERINGS", "ConvertECGToLinalgPass", "ConversionError", "LoweringError", "convert_ecg_to_linalg",
    "convert_module", "lowers",
]
