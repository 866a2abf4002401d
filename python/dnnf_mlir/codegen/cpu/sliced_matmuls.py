"""A matmul read only in disjoint row slices, computed slice by slice.

Horizontal fusion (``fusion/horizontal.py``) merges sibling 1x1 convolutions of one
input (a ResNet stage's projection shortcut beside its first convolution, an
Inception module's 1x1 branches) into one wider convolution whose result the
branches read in slices of channels. ``convolutions_to_matmul`` computes it as one
``linalg.matmul`` ``[F, OH*OW]``, its bias applied in its epilogue
(``collapse_epilogues``); the slices are then the kernel's results or what their own
element-wise ops (a ReLU on one branch only) read. Bufferization cannot write a
slice of the wide result in place of the kernel's out-parameter, so it copies each
slice out, a second pass over the whole result (a sixth of ResNet-50's first
64 -> 320 kernel).

Here each slice gets a matmul of its own: the weight rows of the slice, the same
input, the element-wise chain after the matmul applied to it (its operands sliced
alike), so each part is written straight into its result and a branch's own
element-wise ops become that part's epilogue. The input, read once per part, is
the small operand of these kernels (64 x 3136 beside 320 x 64 weights and a
320 x 3136 result). Only where the slices' rows outnumber K times the extra parts:
each part reads (and, for many rows, packs) B, K x N, again, where the copies cost
the rows x N of the slices. Measured (1 thread, AVX-512, per kernel, interleaved):
ResNet-50's 64 -> 320 at 56x56 0.94 of the time; Inception v2's 28x28 merges
(K >= 192, 64-row parts) 0.96-0.98, but its 14x14 ones (K = 576, B packed per
part) 0.99-1.01: left merged, with these.

Columns likewise: BERT's three 768 x 768 Q/K/V matmuls of one input, merged into one
over ``dnnf-weight-panels``' panels (``scf.forall`` over 72 panels of 32 columns),
wrote the whole 128 x 2304 product (1.2 MB, more than Zen 4's 1 MiB L2) before the
bias and the three transposes to the heads read it back in slices of 768 columns.
Where the slices are of whole panels, each gets a loop over its own panels (read in
place: the weights stay a kernel argument, prefetched), then its slice of the bias
and its transpose, placed before the slice's user so that its 393 KB are read back
from L2. No work is added: each panel is read once either way, and A once per panel.
A slice cutting a panel is left merged (its panels would need making anew).
Measured (Q/K/V with bias and transposes alone, 128 tokens, 1 thread, thread CPU
time, 300 interleaved rounds, load ~11): 0.983 of main's time on AVX-512, 0.984 on
AVX2, even with three separate matmuls (``--fusion none``: 0.977 / 0.984). In whole
BERT-base three matmul + heads kernels then measured 2% faster still, so CPU targets no
longer merge such projections (``Target.merges_laid_out_projections``); the split serves
the merges that remain (sibling matmuls without a layout of their own).
"""

from __future__ import annotations

import math

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ...linalg_builders import generic, inline_body, slice_at, with_operands
from ..linalg_queries import (accumulator_fill, elementwise_consumer, has_default_maps, indexing_maps, linalg_inputs,
                              only_user, parallel_loops, producer, reassociation, reassociation_groups, static_slice,
                              static_tensor_type)
from .weight_panels import panel_product


def _element_wise_chain(matmul) -> tuple[list, ir.Value]:
    """The element-wise ops applied one after the other to ``matmul``'s result, each
    the only user of the previous value (``elementwise_consumer``), and the last value."""
    chain, value = [], matmul.results[0]
    while (consumer := elementwise_consumer(value.owner)) is not None:
        chain.append(consumer)
        value = consumer.results[0]
    return chain, value


def _slices_along(value, dim: int):
    """``[(slice, first, count)]`` when every use of ``value`` is a static slice of it,
    whole but along ``dim``, at least two, pairwise disjoint; else None."""
    shape = static_tensor_type(value).shape
    slices = []
    for user in (use.owner for use in value.uses):
        box = static_slice(user) if user.name == "tensor.extract_slice" else None
        if box is None:
            return None
        offsets, sizes, strides = box
        if any(s != 1 for s in strides) or any(o != 0 or s != full for d, (o, s, full) in
                                               enumerate(zip(offsets, sizes, shape)) if d != dim):
            return None
        slices.append((user, offsets[dim], sizes[dim]))
    ordered = sorted(slices, key=lambda s: s[1])
    if len(ordered) < 2 or any(a[1] + a[2] > b[1] for a, b in zip(ordered, ordered[1:])):
        return None
    return slices


def _row_slices(value):
    """``(reshape, [(slice, first row, row count)])`` when every use of ``value`` (a
    ``[rows, N]`` tensor, or its ``expand_shape`` to ``[1, rows, ...]``, the reshape)
    is a static slice of whole rows, at least two, pairwise disjoint; else None."""
    reshape = None
    users = [use.owner for use in value.uses]
    if len(users) == 1 and users[0].name == "tensor.expand_shape":
        reshape = users[0]
        if reassociation_groups(reshape)[0] != [0, 1] or static_tensor_type(reshape.results[0]).shape[0] != 1:
            return None
        value = reshape.results[0]
    slices = _slices_along(value, 0 if reshape is None else 1)
    return None if slices is None else (reshape, slices)


def _cut_along(value, amap, dim: int, first: int, count: int):
    """Operand ``value`` of an element-wise op read by ``amap``, cut to ``first .. first
    + count`` along the op's loop ``dim`` where it varies along it."""
    t = static_tensor_type(value)
    along = [i for i, e in enumerate(amap.results) if isinstance(e, ir.AffineDimExpr) and ir.AffineDimExpr(e).position == dim]
    if not along:
        return value
    offsets, sizes = [0] * t.rank, list(t.shape)
    offsets[along[0]], sizes[along[0]] = first, count
    return slice_at(value, offsets, sizes)


def _then(op, consumer):
    """The body of ``op`` followed by that of ``consumer`` (which reads only ``op``'s
    value), as a ``generic`` body."""
    def body(*args):
        block, after = op.regions[0].blocks[0], consumer.regions[0].blocks[0]
        (value,) = inline_body(block, dict(zip(block.arguments, args)))
        values = {argument: value for argument in list(after.arguments)[:-1]}
        values[after.arguments[len(after.arguments) - 1]] = args[-1]
        return inline_body(after, values)
    return body


def _chain_part(value, chain, whole, dim: int, first: int, count: int, consumer=None):
    """The element-wise ``chain`` (over ``whole``, the value it reads first) applied to
    ``value``, its part ``first .. first + count`` along loop ``dim``, the other operands
    cut alike; ``consumer`` (if any) applied in the chain's last op."""
    tensor = _mlir.tensor
    t = static_tensor_type(value)
    for op in chain:
        maps = indexing_maps(op)
        inputs = [value if operand == whole else _cut_along(operand, amap, dim, first, count)
                  for operand, amap in zip(linalg_inputs(op), maps)]
        init = tensor.empty(list(t.shape), t.element_type)
        if op == chain[-1] and consumer is not None:
            (value,) = generic(inputs, maps, [init], _then(op, consumer))
        else:
            (value,) = with_operands(op, inputs, maps, [init])
        whole = op.results[0]
    return value


def _part(matmul, fill, chain, consumer, first: int, count: int):
    """Rows ``first .. first + count`` of the chain's value ``[rows, N]``, computed alone,
    the slice's own ``consumer`` (if any) applied in the chain's last op."""
    tensor, linalg = _mlir.tensor, _mlir.linalg
    weights, data = matmul.operands[0], matmul.operands[1]
    k, n = static_tensor_type(weights).shape[1], static_tensor_type(data).shape[1]
    element = static_tensor_type(matmul.results[0]).element_type
    accumulator = linalg.fill(fill.operands[0], outs=[tensor.empty([count, n], element)])
    value = linalg.matmul(slice_at(weights, [first, 0], [count, k]), data, outs=[accumulator])
    identity = ir.AffineMap.get_identity(2)
    if consumer is not None and not chain:
        inputs = linalg_inputs(consumer)
        (value,) = with_operands(consumer, [value] * len(inputs), [identity] * (len(inputs) + 1),
                                 [tensor.empty([count, n], element)], ["parallel"] * 2)
    return _chain_part(value, chain, matmul.results[0], 0, first, count, consumer)


def _unary_consumer(slice_op):
    """``(consumer, reshape)``: the element-wise ``linalg.generic`` that alone reads the
    slice (through ``reshape``, a ``collapse_shape``, or directly), reading nothing
    else (a ReLU), all maps the identity; else None."""
    value, reshape = slice_op.results[0], None
    user = only_user(value)
    if user is not None and user.name == "tensor.collapse_shape":
        reshape, value = user, user.results[0]
        user = only_user(value)
    if user is None or user.name != "linalg.generic" or len(user.results) != 1:
        return None
    rank = static_tensor_type(value).rank
    parallel = parallel_loops(user)
    if parallel is None or not all(parallel) or any(m != ir.AffineMap.get_identity(rank) for m in indexing_maps(user)):
        return None
    if any(operand != value for operand in linalg_inputs(user)) or static_tensor_type(user.results[0]) is None:
        return None
    return user, reshape


def _row_groups(shape: list, rows: int, n: int):
    """The reassociation expanding ``[rows, n]`` to ``shape`` (unit dims, the rows, then
    dims of N), or None."""
    for first, size in enumerate(shape):
        if size == rows and math.prod(shape[first + 1:]) == n:
            return [list(range(first + 1)), list(range(first + 1, len(shape)))]
        if size != 1:
            return None
    return None


def _expanded(value, shape: list):
    """The ``[rows, N]`` ``value`` expanded to ``shape`` (``_row_groups``)."""
    t = static_tensor_type(value)
    groups = _row_groups(shape, t.shape[0], t.shape[1])
    return _mlir.tensor.expand_shape(ir.RankedTensorType.get(shape, t.element_type), value, reassociation(groups), [], shape)


def _split(matmul) -> bool:
    fill = accumulator_fill(matmul)
    result = static_tensor_type(matmul.results[0])
    if fill is None or result is None or result.rank != 2 or not has_default_maps(matmul):
        return False
    chain, value = _element_wise_chain(matmul)
    found = _row_slices(value)
    if found is None:
        return False
    reshape, slices = found
    if (len(slices) - 1) * static_tensor_type(matmul.operands[0]).shape[1] > result.shape[0]:
        return False  # B, read (and packed) again per extra part, outweighs the slices' copies
    n = result.shape[1]
    for slice_op, first, count in slices:
        found = _unary_consumer(slice_op)
        if found is not None and _row_groups(list(static_tensor_type(found[0].results[0]).shape), count, n) is None:
            found = None
        consumer, consumer_reshape = found if found is not None else (None, None)
        replaced = slice_op if consumer is None else consumer
        with ir.InsertionPoint(replaced), slice_op.location:
            part = _part(matmul, fill, chain, consumer, first, count)
            shape = list(static_tensor_type(replaced.results[0]).shape)
            if shape != [count, n]:
                part = _expanded(part, shape)
        replaced.results[0].replace_all_uses_with(part)
        for op in [consumer, consumer_reshape, slice_op]:
            if op is not None:
                op.erase()
    for op in ([reshape] if reshape is not None else []) + chain[::-1] + [matmul]:
        op.erase()
    return True


def _inside(value, loop) -> bool:
    """Whether ``value`` is defined in the body of ``loop``."""
    if isinstance(value, ir.BlockArgument):
        return value.owner.owner == loop.operation
    return value.owner.operation.parent == loop.operation


def _panel_loop(loop):
    """``(A, panels, NR, fill scalar)`` of an ``scf.forall`` that ``panel_product`` made
    (``weight_panels.py``): ``A @ B`` from B's whole panels ``[N / NR, K, NR]`` into a
    fill, the panels defined outside the loop, A too or made in it by one op of outside
    values (a reshape of the input); else None."""
    if len(loop.results) != 1 or producer(loop.operands[len(loop.operands) - 1]) is None:
        return None
    result = static_tensor_type(loop.results[0])
    body = loop.regions[0].blocks[0]
    matmuls = [op for op in body.operations if op.name == "linalg.matmul"]
    if result is None or result.rank != 2 or len(matmuls) != 1 or not has_default_maps(matmuls[0]):
        return None
    a, panel, init = matmuls[0].operands
    fill, take = producer(init), producer(panel)
    if fill is None or fill.name != "linalg.fill" or _inside(fill.operands[0], loop):
        return None
    if take is None or take.name != "tensor.extract_slice" or _inside(take.operands[0], loop):
        return None
    panels = static_tensor_type(take.operands[0])
    if panels is None or panels.rank != 3 or panels.shape[0] * panels.shape[2] != result.shape[1]:
        return None
    if producer(loop.operands[len(loop.operands) - 1]).name != "tensor.empty":
        return None
    if _inside(a, loop) and (a.owner.regions or any(_inside(operand, loop) for operand in a.owner.operands)):
        return None
    return a, take.operands[0], panels.shape[2], fill.operands[0]


def _outside(a, loop):
    """``a`` (``_panel_loop``'s A), made before ``loop`` if it is made in its body."""
    if not _inside(a, loop):
        return a
    with ir.InsertionPoint(loop):
        return a.owner.operation.clone().results[0]


def _split_columns(loop) -> bool:
    """Split a panel loop (``_panel_loop``) whose value, through an ``expand_shape``
    keeping its columns and an element-wise chain, is read only in disjoint slices of
    whole panels of columns: each slice gets a loop over its own panels, computed
    before the slice's user so that it is consumed while in cache."""
    value = loop.results[0]
    expand = only_user(value)
    if expand is not None and (expand.name != "tensor.expand_shape" or len(reassociation_groups(expand)[-1]) != 1):
        expand = None
    chain, last = _element_wise_chain(expand if expand is not None else loop)
    dim = static_tensor_type(last).rank - 1
    slices = _slices_along(last, dim)
    if slices is None:
        return False
    found = _panel_loop(loop)
    if found is None or any(first % found[2] or count % found[2] for _, first, count in slices):
        return False  # a slice cutting a panel would need its panels made anew
    a, panels, nr, zero = found
    a = _outside(a, loop)
    m = static_tensor_type(a).shape[0]
    element = static_tensor_type(value).element_type
    for slice_op, first, count in slices:
        user = only_user(slice_op.results[0])
        with ir.InsertionPoint(user if user is not None else slice_op), slice_op.location:
            init = _mlir.linalg.fill(zero, outs=[_mlir.tensor.empty([m, count], element)])
            part = panel_product(a, init, count, panels, nr, first // nr)
            if expand is not None:
                shape = list(static_tensor_type(expand.results[0]).shape)[:-1] + [count]
                part = _mlir.tensor.expand_shape(ir.RankedTensorType.get(shape, element), part,
                                                 reassociation(reassociation_groups(expand)), [], shape)
            part = _chain_part(part, chain, (expand if expand is not None else loop).results[0], dim, first, count)
        slice_op.results[0].replace_all_uses_with(part)
        slice_op.erase()
    for op in chain[::-1] + ([expand] if expand is not None else []) + [loop]:
        op.erase()
    return True


def split_sliced_matmuls(module: ir.Module) -> int:
    """Compute each matmul read only in disjoint row slices, and each loop over weight
    panels read only in disjoint slices of whole panels, slice by slice (see the module
    docstring); returns how many were split."""
    columns = sum(_split_columns(loop) for loop in walk_ops(module.operation, {"scf.forall"}))
    return columns + sum(_split(matmul) for matmul in walk_ops(module.operation, {"linalg.matmul"}))


__all__ = ["split_sliced_matmuls"]
