"""Transform-dialect schedules: how each linalg op of a module is tiled and vectorized.

``plan(module, target, threads)`` tags every linalg op of the module with a
``dnnf.cg`` attribute, chooses a strategy for it and returns the text of one
transform-dialect named sequence (``@__dnnf_codegen``) that the pipeline runs on
linalg on tensors:

* ``linalg.matmul`` / ``linalg.batch_matmul`` (f32): a register-blocked micro-kernel
  of MR x NR (8 x 2 vectors on AVX-512 and NEON): ``pad`` of the whole op to whole
  register tiles when the shape needs it, ``tile_using_forall`` over the threads
  (the zero fill fused with ``fuse_into_containing_op``), register tiles with
  ``structured.fuse`` (n outer, m inner; fill fused), the K x NR panel of B packed
  (``pad`` nofold + ``hoist_pad``), k steps of one unrolled by 4, ``vectorize`` to
  ``vector.contract`` and the accumulator kept in registers across k
  (``hoist_loop_invariant_subsets``, with the canonicalization around it done once
  for the whole function at the end of the script: ``Planner.finish``). An element-wise consumer (bias, activation)
  becomes the root of the tiling and is applied to the accumulators before the
  single store (epilogue fusion).
* ``linalg.conv_2d_nchw_fchw`` (f32): ``pad_convolutions`` first widens the output
  width to whole vectors; then the zero-padded input is materialized once
  (``bufferize_to_allocation``), threads split output channels, register tiles of
  FR channels x one row x WV columns, unit reduction steps with the KHxKW window
  unrolled, ``decompose`` to ``conv_1d_ncw_fcw`` and ``vectorize``.
* every other linalg op (element-wise generics, fills, transposes, reductions) is
  tiled to rows of vectors and vectorized (masked where the row is not a multiple
  of the vector); failures there are silenced and the op becomes scalar loops.
  Scalar loops too, by choice, for ops reading or writing i1 tensors (LLVM stores a
  vector of i1 as packed bits, a memref of i1 holds one byte per element), 0-d ops,
  and ops walking an operand backwards (negative Slice steps, which tiling gets wrong).

After bufferization, ``post_bufferization_script`` vectorizes the copies that are
left (packing buffers, padded operands, padded results), hoists redundant
transfers and lowers vector masks; ``vector_lowering_script`` finally lowers
``vector.contract`` -> outer products -> FMAs and n-D transfers to 1-D ones.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Optional

from .. import _mlir
from .._mlir import ir
from .target import Target

TAG = "dnnf.cg"

CONTRACTIONS = ("linalg.matmul", "linalg.batch_matmul", "linalg.conv_2d_nchw_fchw")


# --------------------------------------------------------------------------- script


class Script:
    """Text of one transform named sequence, with fresh handle names."""

    def __init__(self):
        self.lines: list[str] = []
        self._count = 0
        self._indent = 2

    def fresh(self, hint: str = "h") -> str:
        self._count += 1
        return f"%{hint}{self._count}"

    def emit(self, text: str):
        self.lines.append("  " * self._indent + text)

    # -- matching
    def match(self, names, within: str = "%root", tag: Optional[str] = None, hint: str = "m") -> str:
        handle = self.fresh(hint)
        ops = ", ".join(json.dumps(n) for n in names)
        attrs = f" attributes{{{TAG} = {json.dumps(tag)}}}" if tag is not None else ""
        self.emit(
            f"{handle} = transform.structured.match ops{{[{ops}]}}{attrs} in {within}"
            " : (!transform.any_op) -> !transform.any_op"
        )
        return handle

    def match_func(self, within: str = "%root") -> str:
        return self.match(["func.func"], within, hint="func")

    # -- tiling
    def tile_for(self, handle: str, sizes, interchange=None, hint: str = "t"):
        """Tile ``handle`` with scf.for loops (the two ops spell ``interchange`` differently)."""
        return self._loops("tile_using_for", handle, sizes, f" interchange = {list(interchange)}" if interchange else "", hint)

    def tile_forall(self, handle: str, sizes, hint: str = "t"):
        tiled, forall = self.fresh(hint), self.fresh("forall")
        self.emit(
            f"{tiled}, {forall} = transform.structured.tile_using_forall {handle} tile_sizes {list(sizes)}"
            " : (!transform.any_op) -> (!transform.any_op, !transform.any_op)"
        )
        return tiled, forall

    def fuse(self, handle: str, sizes, interchange=None, hint: str = "t"):
        """Tile ``handle`` with scf.for loops and fuse its producers (the fill) into them."""
        return self._loops("fuse", handle, sizes, f" interchange {list(interchange)}" if interchange else "", hint)

    def _loops(self, transform: str, handle: str, sizes, interchange: str, hint: str):
        """``transform.structured.<transform>`` making one scf.for per non-zero tile size:
        (tiled op handle, loop handles, outermost first)."""
        loops = sum(1 for s in sizes if s)
        tiled, loop = self.fresh(hint), self.fresh("loop")
        results = ", ".join(["!transform.any_op"] * (loops + 1))
        names = f"{tiled}, {loop}:{loops}" if loops > 1 else f"{tiled}, {loop}"
        self.emit(
            f"{names} = transform.structured.{transform} {handle} tile_sizes {list(sizes)}{interchange}"
            f" : (!transform.any_op) -> ({results})"
        )
        return tiled, [f"{loop}#{i}" for i in range(loops)] if loops > 1 else [loop]

    def fuse_into(self, producer: str, containing: str):
        fused, new = self.fresh("fused"), self.fresh("forall")
        self.emit(
            f"{fused}, {new} = transform.structured.fuse_into_containing_op {producer} into {containing}"
            " : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)"
        )
        return fused, new

    def producer_of(self, handle: str, operand: int) -> str:
        h = self.fresh("prod")
        self.emit(f"{h} = transform.get_producer_of_operand {handle}[{operand}] : (!transform.any_op) -> !transform.any_op")
        return h

    # -- padding / packing
    def pad(self, handle: str, dims, nofold, multiple_of=None, copy_back: str = "none", element: str = "f32"):
        padded, pad, copy = self.fresh("padded"), self.fresh("pad"), self.fresh("copy")
        n = len(nofold)
        values = ", ".join([f"0.0 : {element}"] * n)
        mult = f" pad_to_multiple_of {list(multiple_of)}" if multiple_of else ""
        self.emit(
            f"{padded}, {pad}, {copy} = transform.structured.pad {handle}{mult} {{"
            f"padding_values = [{values}], padding_dimensions = {list(dims)}, "
            f"nofold_flags = {list(nofold)}, copy_back_op = {json.dumps(copy_back)}}}"
            " : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)"
        )
        return padded

    def hoist_pad(self, pad: str, loops: int) -> str:
        h = self.fresh("packed")
        self.emit(f"{h} = transform.structured.hoist_pad {pad} by {loops} loops : (!transform.any_op) -> !transform.any_op")
        return h

    def bufferize_to_allocation(self, handle: str):
        buf, new = self.fresh("buf"), self.fresh("val")
        self.emit(
            f"{buf}, {new} = transform.structured.bufferize_to_allocation {handle}"
            ' {memcpy_op = "linalg.copy"} : !transform.any_op'
        )

    # -- vectorization
    def vectorize(self, handle: str, sizes=None, contraction: bool = False):
        vs = f" vector_sizes {list(sizes)}" if sizes else ""
        attrs = " {create_named_contraction}" if contraction else ""
        self.emit(f"transform.structured.vectorize {handle}{vs}{attrs} : !transform.any_op")

    def decompose(self, handle: str) -> str:
        h = self.fresh("dec")
        self.emit(f"{h} = transform.structured.decompose {handle} : (!transform.any_op) -> !transform.any_op")
        return h

    def patterns(self, func: str, patterns):
        self.emit(f"transform.apply_patterns to {func} {{")
        for p in patterns:
            self.emit(f"  transform.apply_patterns.{p}")
        self.emit("} : !transform.any_op")

    def canonicalize(self, func: str):
        self.patterns(func, ["canonicalization"])
        self.emit(f"transform.apply_cse to {func} : !transform.any_op")

    def hoist_accumulators(self, within: str):
        """Move loop invariants out and keep read/modify/write tiles in registers (tensors)."""
        loops = self.match_interface("LoopLikeInterface", within)
        self.emit(f"transform.apply_licm to {loops} : !transform.any_op")
        self.emit(f"transform.loop.hoist_loop_invariant_subsets {loops} : !transform.any_op")

    def match_interface(self, interface: str, within: str) -> str:
        h = self.fresh("loops")
        self.emit(
            f"{h} = transform.structured.match interface{{{interface}}} in {within}"
            " : (!transform.any_op) -> !transform.any_op"
        )
        return h

    def begin_suppressed(self, handle: str):
        """Open a nested sequence whose silenceable failures are ignored."""
        arg = self.fresh("s")
        self.emit(f"transform.sequence {handle} : !transform.any_op failures(suppress) {{")
        self.emit(f"^bb0({arg}: !transform.any_op):")
        self._indent += 1
        return arg

    def end_suppressed(self):
        self.emit("transform.yield")
        self._indent -= 1
        self.emit("}")

    def text(self, name: str = "__dnnf_codegen") -> str:
        body = "\n".join(self.lines)
        return (
            "module attributes {transform.with_named_sequence} {\n"
            f"  transform.named_sequence @{name}(%root: !transform.any_op {{transform.readonly}}) {{\n"
            f"{body}\n"
            "    transform.yield\n"
            "  }\n"
            "}\n"
        )


# --------------------------------------------------------------------------- strategies


@dataclass
class Kernel:
    """What was decided for one tagged op (reported by ``plan`` for inspection)."""

    tag: str
    op: str
    shape: tuple
    strategy: str
    details: dict = field(default_factory=dict)


def _shaped(value) -> Optional[ir.RankedTensorType]:
    try:
        t = ir.RankedTensorType(value.type)
    except (ValueError, TypeError):
        return None
    return t if t.has_static_shape else None


def _element_bits(t) -> int:
    et = t.element_type
    if isinstance(et, ir.F32Type) or isinstance(et, ir.IntegerType) and ir.IntegerType(et).width == 32:
        return 32
    if isinstance(et, ir.F64Type):
        return 64
    if isinstance(et, ir.F16Type) or isinstance(et, ir.BF16Type):
        return 16
    if isinstance(et, ir.IntegerType):
        return max(8, ir.IntegerType(et).width)
    return 32


def _is_i1(value) -> bool:
    try:
        t = ir.ShapedType(value.type)
    except (ValueError, TypeError):
        return False
    et = t.element_type
    return isinstance(et, ir.IntegerType) and ir.IntegerType(et).width == 1


def _linear_coefficients(expr) -> Optional[dict]:
    """{dim: coefficient} of an affine expression linear in the dims (None otherwise)."""
    if isinstance(expr, ir.AffineDimExpr):
        return {expr.position: 1}
    if isinstance(expr, (ir.AffineConstantExpr, ir.AffineSymbolExpr)):
        return {}
    if isinstance(expr, ir.AffineAddExpr):
        lhs, rhs = _linear_coefficients(expr.lhs), _linear_coefficients(expr.rhs)
        if lhs is None or rhs is None:
            return None
        return {d: lhs.get(d, 0) + rhs.get(d, 0) for d in set(lhs) | set(rhs)}
    if isinstance(expr, ir.AffineMulExpr):
        for a, b in ((expr.lhs, expr.rhs), (expr.rhs, expr.lhs)):
            if isinstance(b, ir.AffineConstantExpr):
                inner = _linear_coefficients(a)
                return None if inner is None else {d: c * b.value for d, c in inner.items()}
    return None


def _reverses_access(op) -> bool:
    """Whether an indexing map of ``op`` walks an operand backwards (a Slice with a
    negative step): tiling computes wrong slices of such operands."""
    try:
        maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    except (KeyError, ValueError, TypeError):
        return False
    for amap in maps:
        for expr in amap.results:
            coefficients = _linear_coefficients(expr)
            if coefficients is not None and any(c < 0 for c in coefficients.values()):
                return True
    return False


def _touches_i1(op) -> bool:
    """Whether ``op`` reads or writes a tensor (memref) of i1."""
    return any(_is_i1(v) for v in list(op.operands) + list(op.results))


def _is_f32(t) -> bool:
    return isinstance(t.element_type, ir.F32Type)


def _attr_ints(op, name):
    if name not in op.attributes:
        return None
    return [int(x) for x in ir.DenseIntElementsAttr(op.attributes[name])]


def _has_default_maps(op) -> bool:
    """A linalg.matmul / batch_matmul without user-defined indexing maps (no transposes)."""
    if "indexing_maps" not in op.attributes:
        return True
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    n = maps[0].n_dims
    batch = n - 3
    expected = [
        [*range(batch), batch, batch + 2],
        [*range(batch), batch + 2, batch + 1],
        [*range(batch), batch, batch + 1],
    ]
    for m, want in zip(maps, expected):
        if not m.is_projected_permutation or [ir.AffineDimExpr(r).position for r in m.results] != want:
            return False
    return True


def _largest_divisor(n: int, candidates) -> Optional[int]:
    for c in candidates:
        if c and n % c == 0:
            return c
    return None


def _register_tile_mn(m: int, n: int, target: Target):
    """(MR, NR, padded M, padded N) of the matmul micro-kernel.

    NR is a multiple of the vector length (two vectors when possible), MR rows of
    NR/L accumulator vectors use about half of the vector registers.
    """
    lanes = target.lanes(32)
    acc_budget = target.vector_registers // 2  # accumulators; the rest holds B and broadcasts
    if n <= lanes:
        nr = n  # one (partial) vector
    else:
        nr = _largest_divisor(n, [2 * lanes, lanes, 4 * lanes]) or 2 * lanes
    nvec = max(1, math.ceil(nr / lanes))
    mr_max = max(1, acc_budget // nvec)
    if m <= mr_max:
        mr = m
    else:
        mr = _largest_divisor(m, [c for c in range(mr_max, max(mr_max // 2, 1) - 1, -1)]) or mr_max
    pm = math.ceil(m / mr) * mr
    pn = math.ceil(n / nr) * nr
    return mr, nr, pm, pn


def _even_split(tiles, order, threads: int) -> Optional[int]:
    """The first dim in ``order`` whose tile count divides evenly among the threads."""
    for d in order:
        if tiles[d] >= threads and tiles[d] % threads == 0:
            return d
    return None


def _conv_vector_tile(ow: int, f: int, target: Target):
    """(FR output channels, WV output columns, OW padded to a multiple of WV).

    Vectors along the output width must be whole registers (or half ones): LLVM
    splits an accumulator of, say, 28 floats into 16 + 8 + 4 lanes and shuffles
    between them, which costs more than computing a few padded columns.
    """
    lanes = target.lanes(32)
    # Relative throughput of the micro-kernel by vector width (measured on AVX-512:
    # two registers per row amortize the weight broadcasts best).
    candidates = {2 * lanes: 1.0, lanes: 0.75, max(1, lanes // 2): 0.55}
    wv = min(candidates, key=lambda w: (math.ceil(ow / w) * w / candidates[w], -w))
    padded = math.ceil(ow / wv) * wv
    nvec = max(1, wv // lanes)
    fr_max = max(1, (target.vector_registers // 2) // nvec)
    fr = _largest_divisor(f, range(fr_max, 0, -1)) or 1
    return fr, wv, padded


def _conv_params(op):
    strides = _attr_ints(op, "strides") or [1, 1]
    dilations = _attr_ints(op, "dilations") or [1, 1]
    return strides, dilations


def pad_convolutions(module: ir.Module, target: Target) -> int:
    """Widen each f32 ``conv_2d_nchw_fchw`` to whole vectors along the output width.

    The input gets extra zero columns on the right (merged into its ``tensor.pad``
    when it has one), the convolution computes ``OW'`` columns into a fill of the
    wider shape, and an ``extract_slice`` keeps the first ``OW``. Returns how many
    convolutions were widened.
    """
    linalg, tensor, arith = _mlir.linalg, _mlir.tensor, _mlir.arith
    count = 0
    for op in _linalg_ops(module):
        if op.name != "linalg.conv_2d_nchw_fchw":
            continue
        x_t, w_t = _shaped(op.operands[0]), _shaped(op.operands[1])
        out_t = _shaped(op.results[0]) if op.results else None
        if x_t is None or w_t is None or out_t is None or not _is_f32(out_t) or not _is_f32(x_t):
            continue
        n, f, oh, ow = out_t.shape
        kw = w_t.shape[3]
        _, _, padded = _conv_vector_tile(ow, f, target)
        if padded == ow:
            continue
        (sh, sw), (dh, dw) = _conv_params(op)
        x = op.operands[0]
        need = (padded - 1) * sw + (kw - 1) * dw + 1
        delta = need - x_t.shape[3]
        if delta <= 0:
            continue
        f32 = out_t.element_type
        with ir.InsertionPoint(op), op.location:
            pad_op = x.owner if isinstance(x, ir.OpResult) else None
            if pad_op is not None and pad_op.name == "tensor.pad" and _static_pad(pad_op):
                low, high = _static_pad(pad_op)
                source = pad_op.operands[0]
                value = _pad_value(pad_op)
            else:
                low, high = [0] * 4, [0] * 4
                source, value = x, None
            if value is None:
                value = arith.constant(f32, 0.0)
            high = list(high)
            high[3] += delta
            new_x = _make_pad(source, low, high, value)
            init = op.operands[2]
            init_op = init.owner if isinstance(init, ir.OpResult) else None
            broadcast_dims = _dense_i64(init_op, "dimensions") if init_op is not None else None
            if init_op is not None and init_op.name == "linalg.fill":
                empty = tensor.empty([n, f, oh, padded], f32)
                new_init = linalg.fill(init_op.operands[0], outs=[empty])
            elif init_op is not None and init_op.name == "linalg.broadcast" and 3 in (broadcast_dims or []):
                # a bias broadcast over the width: broadcast into the wider shape
                empty = tensor.empty([n, f, oh, padded], f32)
                new_init = linalg.broadcast(init_op.operands[0], outs=[empty], dimensions=broadcast_dims).result
            else:
                new_init = _make_pad(init, [0] * 4, [0, 0, 0, padded - ow], arith.constant(f32, 0.0))
            conv = linalg.conv_2d_nchw_fchw(new_x, op.operands[1], outs=[new_init], strides=[sh, sw], dilations=[dh, dw])
            sliced = tensor.extract_slice(out_t, conv, [], [], [], [0, 0, 0, 0], [n, f, oh, ow], [1, 1, 1, 1])
        op.results[0].replace_all_uses_with(sliced)
        op.erase()
        for dead in (init_op, pad_op):
            if dead is not None and all(len(list(r.uses)) == 0 for r in dead.results):
                dead.erase()
        count += 1
    return count


def conv1x1_to_matmul(module: ir.Module) -> int:
    """Rewrite single-image 1x1 ``conv_2d_nchw_fchw`` (f32) as ``linalg.matmul``.

    ``W[F, C] @ X[C, OH*OW]`` over collapsed shapes (a strided convolution reads a
    strided ``extract_slice`` of the input first): the matmul micro-kernel with B
    packing instead of a convolution that reads a new input plane at every step.
    Returns how many convolutions were rewritten.
    """
    linalg, tensor = _mlir.linalg, _mlir.tensor
    count = 0
    for op in _linalg_ops(module):
        if op.name != "linalg.conv_2d_nchw_fchw":
            continue
        x_t, w_t = _shaped(op.operands[0]), _shaped(op.operands[1])
        out_t = _shaped(op.results[0]) if op.results else None
        if x_t is None or w_t is None or out_t is None or not (_is_f32(out_t) and _is_f32(x_t) and _is_f32(w_t)):
            continue
        n, f, oh, ow = out_t.shape
        _, c, kh, kw = w_t.shape
        if (n, kh, kw) != (1, 1, 1):
            continue
        (sh, sw), _ = _conv_params(op)
        f32 = out_t.element_type
        with ir.InsertionPoint(op), op.location:
            x = op.operands[0]
            if (sh, sw) != (1, 1) or tuple(x_t.shape[2:]) != (oh, ow):
                sliced = ir.RankedTensorType.get([1, c, oh, ow], f32)
                x = tensor.extract_slice(sliced, x, [], [], [], [0, 0, 0, 0], [1, c, oh, ow], [1, 1, sh, sw])
            xm = tensor.collapse_shape(ir.RankedTensorType.get([c, oh * ow], f32), x, _reassociation([[0, 1], [2, 3]]))
            wm = tensor.collapse_shape(ir.RankedTensorType.get([f, c], f32), op.operands[1], _reassociation([[0], [1, 2, 3]]))
            init = op.operands[2]
            init_op = init.owner if isinstance(init, ir.OpResult) else None
            if init_op is not None and init_op.name == "linalg.fill":
                new_init = linalg.fill(init_op.operands[0], outs=[tensor.empty([f, oh * ow], f32)])
            else:
                new_init = tensor.collapse_shape(ir.RankedTensorType.get([f, oh * ow], f32), init, _reassociation([[0, 1], [2, 3]]))
            mm = linalg.matmul(wm, xm, outs=[new_init])
            y = tensor.expand_shape(out_t, mm, _reassociation([[0, 1], [2, 3]]), [], [1, f, oh, ow])
        op.results[0].replace_all_uses_with(y)
        op.erase()
        if init_op is not None and all(len(list(r.uses)) == 0 for r in init_op.results):
            init_op.erase()
        count += 1
    return count


def normalize_matmuls(module: ir.Module) -> int:
    """``linalg.matmul`` / ``batch_matmul`` reading A or B transposed (``indexing_maps``,
    e.g. Q @ K^T) -> a ``linalg.transpose`` of that operand + the plain op, which gets
    the packed micro-kernel. Returns how many ops were rewritten."""
    linalg, tensor = _mlir.linalg, _mlir.tensor
    count = 0
    for op in _linalg_ops(module):
        if op.name not in ("linalg.matmul", "linalg.batch_matmul") or "indexing_maps" not in op.attributes:
            continue
        if _has_default_maps(op) or len(op.results) != 1:
            continue
        maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
        nb = maps[0].n_dims - 3
        dims = [[ir.AffineDimExpr(e).position if isinstance(e, ir.AffineDimExpr) else None for e in m.results] for m in maps]
        batch = list(range(nb))
        m_, n_, k_ = nb, nb + 1, nb + 2
        if dims[2] != batch + [m_, n_] or dims[0] not in (batch + [m_, k_], batch + [k_, m_]) or dims[1] not in (
            batch + [k_, n_],
            batch + [n_, k_],
        ):
            continue
        types = [_shaped(v) for v in op.operands[:3]]
        if any(t is None for t in types):
            continue
        with ir.InsertionPoint(op), op.location:
            operands = []
            for value, t, transposed in zip(op.operands[:2], types[:2], (dims[0][-1] == m_, dims[1][-1] == k_)):
                if transposed:
                    shape = list(t.shape[:nb]) + [t.shape[-1], t.shape[-2]]
                    empty = tensor.empty(shape, t.element_type)
                    value = linalg.transpose(value, outs=[empty], permutation=batch + [nb + 1, nb]).result
                operands.append(value)
            build = linalg.matmul if nb == 0 else linalg.batch_matmul
            new = build(*operands, outs=[op.operands[2]])
        op.results[0].replace_all_uses_with(new)
        op.erase()
        count += 1
    return count


def _generic_maps(op):
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]


def _map_dims(amap) -> Optional[list]:
    """Dim positions of a projected-permutation map, None for any other map."""
    dims = []
    for expr in amap.results:
        if not isinstance(expr, ir.AffineDimExpr):
            return None
        dims.append(ir.AffineDimExpr(expr).position)
    return dims if len(set(dims)) == len(dims) else None


def _slice_of(value, block):
    """(block arguments, ops of ``block`` in order) computing ``value``; None when it
    depends on anything but pure arith / math ops."""
    args, ops, seen = set(), [], set()

    def visit(v):
        if isinstance(v, ir.BlockArgument):
            if v.owner == block:
                args.add(v.arg_number)
            return True
        owner = v.owner.operation
        if owner.block != block:
            return True  # defined outside the body
        if owner in seen:
            return True
        if owner.name.split(".")[0] not in ("arith", "math"):
            return False
        seen.add(owner)
        if not all(visit(o) for o in owner.operands):
            return False
        ops.append(owner)
        return True

    if not visit(value):
        return None
    order = {op: i for i, op in enumerate(block.operations)}
    return args, sorted(ops, key=lambda o: order[o])


def _materialize_operand(op, value, maps, block):
    """A tensor and its dims (positions in ``op``'s loops) holding ``value`` of ``op``'s
    body: an input when ``value`` is one, else a new element-wise linalg.generic over
    the loops its inputs use (e.g. GELU or the softmax division fused into a matmul)."""
    linalg = _mlir.linalg
    n_inputs = len(op.operands) - 1
    found = _slice_of(value, block)
    if found is None:
        return None
    args, body = found
    if not args or max(args) >= n_inputs:
        return None
    if not body and len(args) == 1:
        (arg,) = args
        return op.operands[arg], _map_dims(maps[arg])
    space = sorted({d for a in args for d in _map_dims(maps[a])})
    inputs = sorted(args)
    sizes = {}
    for a in inputs:
        for d, s in zip(_map_dims(maps[a]), _shaped(op.operands[a]).shape):
            sizes[d] = s
    f32 = ir.F32Type.get()
    shape = [sizes[d] for d in space]
    new_maps = [
        ir.AffineMap.get(len(space), 0, [ir.AffineDimExpr.get(space.index(d)) for d in _map_dims(maps[a])]) for a in inputs
    ]
    new_maps.append(ir.AffineMap.get_identity(len(space)))
    parallel = ir.Attribute.parse("#linalg.iterator_type<parallel>")
    empty = _mlir.tensor.empty(shape, f32)
    generic = linalg.GenericOp(
        [ir.RankedTensorType.get(shape, f32)],
        [op.operands[a] for a in inputs],
        [empty],
        ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in new_maps]),
        ir.ArrayAttr.get([parallel] * len(space)),
    )
    new_block = generic.regions[0].blocks.append(*([f32] * (len(inputs) + 1)))
    mapping = {}
    with ir.InsertionPoint(new_block):
        for body_op in body:
            clone = body_op.clone(ip=ir.InsertionPoint(new_block))
            for i, operand in enumerate(clone.operands):
                if isinstance(operand, ir.BlockArgument) and operand.owner == block:
                    clone.operands[i] = new_block.arguments[inputs.index(operand.arg_number)]
                elif isinstance(operand, ir.OpResult) and operand.owner.operation in mapping:
                    clone.operands[i] = mapping[operand.owner.operation].results[operand.result_number]
            mapping[body_op] = clone
        if isinstance(value, ir.BlockArgument):
            result = new_block.arguments[inputs.index(value.arg_number)]
        else:
            result = mapping[value.owner.operation].results[value.result_number]
        linalg.YieldOp([result])
    return generic.results[0], space


def _transposed(value, dims, order):
    """``value`` (indexed by loop ``dims``) with its dims permuted into ``order``."""
    if dims == order:
        return value
    t = _shaped(value)
    perm = [dims.index(d) for d in order]
    empty = _mlir.tensor.empty([t.shape[p] for p in perm], t.element_type)
    return _mlir.linalg.transpose(value, outs=[empty], permutation=perm).results[0]


def _group_ranges(groups):
    starts = [sum(groups[:i]) for i in range(len(groups))]
    return [list(range(s, s + g)) for s, g in zip(starts, groups)]


def _group_sizes(shape, groups):
    return [math.prod(shape[d] for d in r) for r in _group_ranges(groups)]


def _collapsed(value, groups):
    """``value`` with consecutive dims merged, ``groups`` of them at a time."""
    t = _shaped(value)
    if len(groups) == t.rank:
        return value
    collapsed = ir.RankedTensorType.get(_group_sizes(list(t.shape), groups), t.element_type)
    return _mlir.tensor.collapse_shape(collapsed, value, _reassociation(_group_ranges(groups)))


def _contraction_body(op):
    """(x, y) with the body computing ``acc + x * y`` (f32), else None."""
    block = op.regions[0].blocks[0]
    ops = list(block.operations)
    yielded = ops[-1].operands[0] if len(ops[-1].operands) == 1 else None
    add = yielded.owner if isinstance(yielded, ir.OpResult) else None
    if add is None or add.name != "arith.addf":
        return None
    acc = block.arguments[len(block.arguments) - 1]
    lhs, rhs = add.operands
    product = rhs if lhs == acc else lhs if rhs == acc else None
    mul = product.owner if isinstance(product, ir.OpResult) else None
    if mul is None or mul.name != "arith.mulf" or mul.operation.block != block:
        return None
    if len(list(product.uses)) != 1 or len(list(acc.uses)) != 1:
        return None
    return block, mul.operands[0], mul.operands[1]


def generic_contractions_to_matmul(module: ir.Module) -> int:
    """Rewrite f32 ``linalg.generic`` contractions (``acc + x * y`` over projected
    permutations, as ONNX MatMul / Gemm / Einsum convert) as ``linalg.matmul`` or
    ``batch_matmul`` on transposed, collapsed operands.

    They get the packed micro-kernel instead of the generic strategy, which vectorizes
    the whole reduction of each output element (slow, and it unrolls into hundreds of
    thousands of scalar ops). Element-wise work fused into an operand (GELU, the
    softmax division) becomes an element-wise generic of its own. Returns how many
    contractions were rewritten.
    """
    linalg, tensor = _mlir.linalg, _mlir.tensor
    count = 0
    for op in _linalg_ops(module):
        if op.name != "linalg.generic" or len(op.results) != 1:
            continue
        out = _shaped(op.results[0])
        iterators = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
        if out is None or not _is_f32(out) or all("parallel" in it for it in iterators):
            continue
        if any(_shaped(v) is None or not _is_f32(_shaped(v)) for v in op.operands):
            continue
        maps = _generic_maps(op)
        if any(_map_dims(m) is None for m in maps):
            continue
        body = _contraction_body(op)
        if body is None:
            continue
        block, x_value, y_value = body
        c_dims = _map_dims(maps[-1])
        reduction = {d for d, it in enumerate(iterators) if "parallel" not in it}
        if reduction & set(c_dims):
            continue
        # Check the dims before creating anything.
        operand_dims = []
        for v in (x_value, y_value):
            found = _slice_of(v, block)
            if found is None or not found[0] or max(found[0]) >= len(op.operands) - 1:
                break
            operand_dims.append({d for a in found[0] for d in _map_dims(maps[a])})
        if len(operand_dims) != 2:
            continue
        xs, ys, cs = operand_dims[0], operand_dims[1], set(c_dims)
        k_dims = xs & ys - cs
        if k_dims != reduction or (xs | ys) != set(range(len(iterators))) or not cs <= (xs | ys):
            continue
        b_dims = [d for d in c_dims if d in xs and d in ys]
        m_dims = [d for d in c_dims if d in xs and d not in ys]
        n_dims = [d for d in c_dims if d in ys and d not in xs]
        if not m_dims or not n_dims:
            continue
        with ir.InsertionPoint(op), op.location:
            x, x_dims = _materialize_operand(op, x_value, maps, block)
            y, y_dims = _materialize_operand(op, y_value, maps, block)
            k_order = [d for d in x_dims if d in k_dims]
            sizes = dict(zip(c_dims, out.shape))
            sizes.update(zip(x_dims, _shaped(x).shape))
            sizes.update(zip(y_dims, _shaped(y).shape))
            nb, nm, nn, nk = len(b_dims), len(m_dims), len(n_dims), len(k_order)
            if math.prod(sizes[d] for d in b_dims) > 1:
                build, a_groups, b_groups, c_groups = linalg.batch_matmul, [nb, nm, nk], [nb, nk, nn], [nb, nm, nn]
            else:  # unit batch dims join M (and K for B)
                build, a_groups, b_groups, c_groups = linalg.matmul, [nb + nm, nk], [nb + nk, nn], [nb + nm, nn]
            a = _collapsed(_transposed(x, x_dims, b_dims + m_dims + k_order), a_groups)
            b = _collapsed(_transposed(y, y_dims, b_dims + k_order + n_dims), b_groups)
            mnk = b_dims + m_dims + n_dims
            init = op.operands[-1]
            init_op = init.owner if isinstance(init, ir.OpResult) else None
            if init_op is not None and init_op.name == "linalg.fill":
                empty = tensor.empty(_group_sizes([sizes[d] for d in mnk], c_groups), out.element_type)
                c = linalg.fill(init_op.operands[0], outs=[empty])
            else:
                c = _collapsed(_transposed(init, c_dims, mnk), c_groups)
            mm = build(a, b, outs=[c])
            if len(c_groups) != len(mnk):
                expanded = ir.RankedTensorType.get([sizes[d] for d in mnk], out.element_type)
                mm = tensor.expand_shape(expanded, mm, _reassociation(_group_ranges(c_groups)), [], [sizes[d] for d in mnk])
            result = _transposed(mm, mnk, c_dims)
        op.results[0].replace_all_uses_with(result)
        op.erase()
        count += 1
    return count


def _reassociation(groups):
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IntegerType.get_signless(64), d) for d in g]) for g in groups])


def split_strided_convolutions(module: ir.Module) -> int:
    """A ``conv_2d_nchw_fchw`` with horizontal stride S > 1 -> S convolutions of
    horizontal stride 1, one per phase of the input columns.

    Phase p reads the columns ``S*w + p`` (copied once into a contiguous tensor) with
    the filter taps ``kw = p, p + S, ...``; the phases accumulate into the same result
    (the first one into the original init). Vector loads along the output width are
    then contiguous instead of gathers. Returns how many convolutions were split.
    """
    linalg, tensor = _mlir.linalg, _mlir.tensor
    count = 0
    for op in _linalg_ops(module):
        if op.name != "linalg.conv_2d_nchw_fchw":
            continue
        x_t, w_t = _shaped(op.operands[0]), _shaped(op.operands[1])
        out_t = _shaped(op.results[0]) if op.results else None
        if x_t is None or w_t is None or out_t is None or not (_is_f32(out_t) and _is_f32(x_t) and _is_f32(w_t)):
            continue
        (sh, sw), (dh, dw) = _conv_params(op)
        n, f, oh, ow = out_t.shape
        _, c, kh, kw = w_t.shape
        if sw == 1 or dw != 1 or kw == 1:
            continue
        f32 = out_t.element_type
        h = x_t.shape[2]
        result = op.operands[2]
        with ir.InsertionPoint(op), op.location:
            for phase in range(min(sw, kw)):
                taps = len(range(phase, kw, sw))
                width = ow + taps - 1
                sliced_t = ir.RankedTensorType.get([n, c, h, width], f32)
                view = tensor.extract_slice(sliced_t, op.operands[0], [], [], [], [0, 0, 0, phase], [n, c, h, width], [1, 1, 1, sw])
                x_phase = linalg.copy(view, outs=[tensor.empty([n, c, h, width], f32)])
                w_phase_t = ir.RankedTensorType.get([f, c, kh, taps], f32)
                w_phase = tensor.extract_slice(w_phase_t, op.operands[1], [], [], [], [0, 0, 0, phase], [f, c, kh, taps], [1, 1, 1, sw])
                result = linalg.conv_2d_nchw_fchw(x_phase, w_phase, outs=[result], strides=[sh, 1], dilations=[dh, 1])
        op.results[0].replace_all_uses_with(result)
        op.erase()
        count += 1
    return count


def _static_pad(pad_op):
    low = _dense_i64(pad_op, "static_low")
    high = _dense_i64(pad_op, "static_high")
    if low is None or high is None or any(v == ir.ShapedType.get_dynamic_size() for v in low + high):
        return None
    return low, high


def _dense_i64(op, name):
    if name not in op.attributes:
        return None
    return list(ir.DenseI64ArrayAttr(op.attributes[name]))


def _pad_value(pad_op):
    """The padding value of a tensor.pad when it is defined outside its region."""
    block = pad_op.regions[0].blocks[0]
    terminator = list(block.operations)[-1]
    value = terminator.operands[0]
    if isinstance(value, ir.BlockArgument) and value.owner == block:
        return None
    if isinstance(value, ir.OpResult) and value.owner.parent == pad_op:
        return None
    return value


def _make_pad(source, low, high, value):
    tensor = _mlir.tensor
    t = ir.RankedTensorType(source.type)
    shape = [d + lo + hi for d, lo, hi in zip(t.shape, low, high)]
    result = ir.RankedTensorType.get(shape, t.element_type)
    padded = tensor.pad(result, source, [], [], low, high)
    pad_op = padded.owner
    block = pad_op.regions[0].blocks.append(*([ir.IndexType.get()] * t.rank))
    with ir.InsertionPoint(block):
        tensor.YieldOp(value)
    return padded

class Planner:
    def __init__(self, target: Target, threads: int):
        self.target = target
        self.threads = max(1, int(threads))
        self.script = Script()
        self.kernels: list[Kernel] = []
        self.strategies: dict = {}
        self._next = 0
        self._cleanup = False

    def cleanup(self):
        """Canonicalize and hoist the accumulators of the micro-kernels emitted so far.

        Deferred to ``finish``: done once over the whole function after every kernel is
        tiled and vectorized (per kernel, the greedy rewrites over the whole function
        made the schedule quadratic in the size of the model).
        """
        self._cleanup = True

    def finish(self):
        if not self._cleanup:
            return
        s = self.script
        func = s.match_func()
        s.canonicalize(func)
        s.hoist_accumulators(func)
        s.canonicalize(func)

    def add_kernel(self, kernel: Kernel):
        self.kernels.append(kernel)
        self.strategies[kernel.tag] = kernel.strategy

    def new_tag(self, op) -> str:
        tag = f"k{self._next}"
        self._next += 1
        op.attributes[TAG] = ir.StringAttr.get(tag)
        return tag

    # -- matmul and batch_matmul -------------------------------------------------
    def matmul(self, op, batch: bool, epilogue=None) -> bool:
        """Schedule a matmul / batch_matmul; returns whether ``epilogue`` was fused.

        ``epilogue`` is an element-wise linalg.generic consuming the result: it becomes
        the root of the tiling, the matmul tile is computed inside its register tile and
        the epilogue applies to the accumulators before the single store.
        """
        s = self.script
        a, b = _shaped(op.operands[0]), _shaped(op.operands[1])
        c = _shaped(op.results[0])
        if a is None or b is None or c is None or not _has_default_maps(op):
            self.generic(op)
            return False
        shape = list(c.shape)
        bsz = shape[0] if batch else 1
        m, n = shape[-2], shape[-1]
        k = a.shape[-1]
        tag = self.new_tag(op)
        mr, nr, pm, pn = _register_tile_mn(m, n, self.target)
        nb = 1 if batch else 0
        details = dict(register_tile=(mr, nr), padded=(pm, pn) != (m, n))
        if (pm, pn) != (m, n):
            epilogue = None
        h = s.match([op.name], tag=tag)
        h, isolated = self._isolate_operands(op, h, [0, 1, 2])
        if isolated:
            details["materialized_operands"] = True

        if (pm, pn) != (m, n):
            # Pad the whole op once to multiples of the register tile: every tile is then
            # full and static (the fill folds into a fill of the padded shape).
            mult = [1] * nb + [mr, nr, 1]
            h = s.pad(h, dims=list(range(nb + 3)), nofold=[0, 0, 0], multiple_of=mult)
            s.canonicalize(s.match_func())
            h = s.match([op.name], tag=tag)
            # Materialize the padded operands now, so that tiling does not fuse the pads
            # (the pad of a zero-filled accumulator folded into a bigger fill).
            init = op.operands[2]
            init_is_fill = isinstance(init, ir.OpResult) and init.owner.name == "linalg.fill"
            for index, padded in ((0, pm != m), (1, pn != n), (2, not init_is_fill)):
                if padded:
                    s.bufferize_to_allocation(s.producer_of(h, index))
                    h = s.match([op.name], tag=tag)

        split = None
        if self.threads > 1:
            tiles = [pm // mr, pn // nr]
            if batch:
                tiles = [bsz] + tiles
            # Split the dim whose tiles divide evenly among the threads (static tiles in
            # every thread), preferring N (each thread packs its own B panels), then M,
            # then the batch; else the one with most tiles.
            order = [len(tiles) - 1, len(tiles) - 2] + ([0] if batch else [])
            dim = _even_split(tiles, order, self.threads)
            if dim is None:
                # Uneven chunks would make the tiles of the last thread dynamic, which
                # the vectorizer cannot handle unmasked: stay on one thread.
                details["threads"] = 1
            else:
                split = [0] * (nb + 2)
                split[dim] = tiles[dim] // self.threads * (([1] if batch else []) + [mr, nr])[dim]

        init = op.operands[2]
        fill = s.producer_of(h, 2) if isinstance(init, ir.OpResult) and init.owner.name == "linalg.fill" else None
        root = h
        if epilogue is not None:
            etag = self.new_tag(epilogue)
            root = s.match([epilogue.name], tag=etag)
            details["epilogue"] = etag
            self.strategies[etag] = "epilogue"
        if split is not None:
            sizes = split if epilogue is not None else split + [0]
            root, forall = s.tile_forall(root, sizes)
            if epilogue is not None:
                _, forall = s.fuse_into(h, forall)
            if fill is not None:
                s.fuse_into(fill, forall)
            details["forall"] = sizes

        # Register tiles: n outer, m inner (the packed B panel is reused across m); the
        # fill (and, under an epilogue, the matmul) are fused into them.
        sizes = ([1] if batch else []) + [mr, nr]
        inter = ([0] if batch else []) + [nb + 1, nb + 0]
        if epilogue is None:
            sizes, inter = sizes + [0], inter + [nb + 2]
        root, loops = s.fuse(root, sizes, inter)
        h = root if epilogue is None else s.match([op.name], within=loops[0], tag=tag)
        if (pm // mr) >= 4 and k >= 16:
            # Pack the K x NR panel of B into a contiguous buffer (a nofold pad hoisted
            # out of the m loop): without it, rows of B that are a multiple of 4 KiB
            # apart all land in the same L1 sets (~3x slower on 768 x 3072).
            # (Packing whole K x NC blocks with hoist_pad by two loops copies twice and
            # still walks strip by strip: measured slower.)
            nofold = [0, 1, 0]
            padded = s.pad(h, dims=[nb + 1], nofold=nofold)
            bpad = s.producer_of(padded, 1)
            s.hoist_pad(bpad, 1)
            h = padded
            details["packed_b"] = (k, nr)
        h, kloop = s.tile_for(h, [0] * (nb + 2) + [1])
        # Four k steps per loop iteration (~+8% on AVX-512: fewer loop-carried
        # dependencies on the pointers, longer runs of FMAs).
        unroll = next((u for u in (4, 2) if k % u == 0 and k > u), 1)
        if unroll > 1:
            s.emit(f"transform.loop.unroll {kloop[0]} {{factor = {unroll}}} : !transform.any_op")
            h = s.match([op.name], tag=tag, within=loops[0])
            details["k_unroll"] = unroll
        s.vectorize(h, contraction=True)
        fills = s.match(["linalg.fill"], within=loops[0])
        self._vectorize_fills(fills)
        if epilogue is not None:
            s.vectorize(s.match([epilogue.name], within=loops[0], tag=etag))
        self.cleanup()
        self.add_kernel(Kernel(tag, op.name, (bsz, m, n, k) if batch else (m, n, k), "matmul", details))
        return epilogue is not None

    def _isolate_operands(self, op, handle: str, operands):
        """Keep ``structured.fuse`` from fusing (and recomputing per tile) the producers
        of these operands: a tensor.pad, or a linalg op that was not tiled before, is
        materialized in a buffer of its own first. Returns (handle to ``op``, whether
        anything was materialized)."""
        s = self.script
        changed = False
        for index in operands:
            value = op.operands[index]
            producer = value.owner if isinstance(value, ir.OpResult) else None
            if producer is None:
                continue
            name = producer.name
            strategy = self.strategies.get(ir.StringAttr(producer.attributes[TAG]).value) if TAG in producer.attributes else None
            tiled = strategy not in (None, "loops")
            if name == "tensor.pad" or (name.startswith("linalg.") and name != "linalg.fill" and not tiled):
                s.bufferize_to_allocation(s.producer_of(handle, index))
                handle = s.match([op.name], tag=ir.StringAttr(op.attributes[TAG]).value)
                changed = True
        return handle, changed

    def _vectorize_fills(self, fills):
        """Vectorize the (static, register-tile sized) fills fused into micro-kernels."""
        s = self.script
        arg = s.begin_suppressed(fills)
        s.vectorize(arg)
        s.end_suppressed()

    # -- conv_2d_nchw_fchw ----------------------------------------------------------
    def conv(self, op):
        s = self.script
        inp, w = _shaped(op.operands[0]), _shaped(op.operands[1])
        out = _shaped(op.results[0])
        if inp is None or w is None or out is None:
            return self.generic(op)
        nb, f, oh, ow = out.shape
        _, c, kh, kw = w.shape
        tag = self.new_tag(op)
        fr, wv, padded = _conv_vector_tile(ow, f, self.target)
        if padded != ow:  # pad_convolutions did not apply (e.g. not enough input)
            return self.generic(op)
        details = dict(register_tile=(fr, wv))
        h = s.match([op.name], tag=tag)
        # Materialize the zero-padded input once: tiling would otherwise fuse the pad
        # into every tile as a (dynamic, scalar) pad of a slice.
        h, isolated = self._isolate_operands(op, h, [0, 1, 2])
        if isolated:
            details["padded_input"] = True
        init = op.operands[2]
        fill = s.producer_of(h, 2) if isinstance(init, ir.OpResult) and init.owner.name == "linalg.fill" else None
        if self.threads > 1:
            # Output channels first (each thread reads half of the weights), then rows,
            # then images; only even splits (static tiles in every thread).
            tiles = [nb, f // fr, oh]
            dim = _even_split(tiles, [1, 2, 0], self.threads)
            if dim is None:
                details["threads"] = 1
            else:
                sizes = [0, 0, 0, 0, 0, 0, 0]
                sizes[dim] = tiles[dim] // self.threads * [1, fr, 1][dim]
                h, forall = s.tile_forall(h, sizes)
                if fill is not None:
                    s.fuse_into(fill, forall)
                details["forall"] = sizes
        # Register tile: FR output channels x one row x WV columns; f outer so that the
        # weights of a channel block stay in cache while the rows stream.
        h, loops = s.fuse(h, [1, fr, 1, wv, 0, 0, 0], [0, 1, 2, 3])
        # Reductions one step at a time, c outermost: the 3x3 window of one input plane
        # is reused from L1 by the kh / kw steps.
        h, red = s.tile_for(h, [0, 0, 0, 0, 1, 1, 1])
        # Unroll the window (kw, and kh for windows up to 3x3): one straight run of
        # FMA groups per input channel instead of two short loops (~+10%).
        unrolled = []
        if 1 < kw <= 8:
            unrolled.append((red[2], kw))
        if 1 < kh and kh * kw <= 9:
            unrolled.append((red[1], kh))
        for loop, trip in unrolled:
            s.emit(f"transform.loop.unroll {loop} {{factor = {trip}}} : !transform.any_op")
        if unrolled:
            h = s.match([op.name], tag=tag, within=loops[0])
            details["unrolled"] = [trip for _, trip in unrolled]
        h = s.decompose(h)  # conv_2d with unit OH/KH -> conv_1d_ncw_fcw
        s.vectorize(h)
        fills = s.match(["linalg.fill"], within=loops[0])
        self._vectorize_fills(fills)
        # On this kernel's loops only (before the hoisting of ``finish``; the matmuls'
        # contractions must not see them).
        s.patterns(loops[0], ["vector.reduction_to_contract", "vector.transfer_permutation_patterns"])
        self.cleanup()
        self.add_kernel(Kernel(tag, op.name, tuple(out.shape) + (c, kh, kw), "conv2d", details))

    # -- everything else --------------------------------------------------------------
    def generic(self, op):
        """Rows of vectors: tile every parallel dim but the innermost to 1 and vectorize."""
        s = self.script
        if not op.results and not op.operands:
            return
        if not op.results:
            return  # already on buffers
        out = _shaped(op.results[0])
        if out is None:
            return
        try:
            iterators = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
        except (KeyError, ValueError):
            iterators = None
        loop_ranges = self._static_loop_ranges(op)
        if loop_ranges is None:
            return
        if iterators is None:
            iterators = ["#linalg.iterator_type<parallel>"] * len(loop_ranges)
        parallel = ["parallel" in it for it in iterators]
        tag = self.new_tag(op)
        rank = len(loop_ranges)
        if rank == 0 or _touches_i1(op) or _reverses_access(op):
            # Nothing to tile (a 0-d fill); bool tensors: memrefs of i1 hold a byte per
            # element but LLVM loads / stores vectors of i1 as packed bits; backward
            # accesses (negative Slice steps): tiling computes wrong operand slices.
            self.add_kernel(Kernel(tag, op.name, tuple(loop_ranges), "loops", {}))
            return
        lanes = self.target.lanes(_element_bits(out))
        sizes = [1 if p else 0 for p in parallel]
        vsizes = [1 if p else r for p, r in zip(parallel, loop_ranges)]
        inner = rank - 1
        if parallel[inner]:
            width = min(loop_ranges[inner], 4 * lanes) if loop_ranges[inner] > 0 else 1
            sizes[inner] = width
            vsizes[inner] = width
        reduction_elems = math.prod(r for p, r in zip(parallel, loop_ranges) if not p)
        vector_elems = math.prod(vsizes)
        h = s.match([op.name], tag=tag)
        details = {}
        if self.threads > 1 and math.prod(loop_ranges) >= 1 << 15:
            # The outermost parallel dim with a chunk for every thread (not the unit
            # batch dim of a single image, which would leave the op on one thread).
            dims = [i for i, p in enumerate(parallel) if p and loop_ranges[i] >= self.threads]
            if dims:
                outer = dims[0]
                fs = [0] * rank
                fs[outer] = math.ceil(loop_ranges[outer] / self.threads)
                arg = s.begin_suppressed(h)
                s.tile_forall(arg, fs)
                s.end_suppressed()
                h = s.match([op.name], tag=tag)
                details["forall"] = fs
        if any(sizes) and vector_elems <= 4096 and reduction_elems <= 4096:
            arg = s.begin_suppressed(h)
            t, _ = s.tile_for(arg, sizes)
            s.vectorize(t, vsizes)
            s.end_suppressed()
            details["vector"] = vsizes
            strategy = "vectorized"
        elif not any(sizes) and vector_elems <= 4096:
            arg = s.begin_suppressed(h)
            s.vectorize(arg, vsizes)
            s.end_suppressed()
            strategy = "vectorized"
        else:
            strategy = "loops"
        self.add_kernel(Kernel(tag, op.name, tuple(loop_ranges), strategy, details))

    def _static_loop_ranges(self, op):
        """Static iteration-domain extents of a linalg op (from its operand shapes and maps)."""
        try:
            maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
        except (KeyError, ValueError, TypeError):
            maps = None
        operands = list(op.operands)
        if maps is None:
            # Named ops without maps: fill / copy / transpose / broadcast iterate over
            # their result; so do element-wise ops whose operands all have its shape.
            t = _shaped(op.results[0]) if op.results else None
            if t is None:
                return None
            if op.name in ("linalg.fill", "linalg.copy", "linalg.transpose", "linalg.broadcast"):
                return list(t.shape)
            shapes = {tuple(_shaped(v).shape) for v in operands if _shaped(v) is not None}
            if shapes == {tuple(t.shape)}:
                return list(t.shape)
            return None
        n = maps[0].n_dims
        ranges = [None] * n
        for value, amap in zip(operands, maps):
            t = _shaped(value)
            if t is None:
                try:
                    ir.RankedTensorType(value.type)
                    return None  # dynamic
                except ValueError:
                    continue  # scalar operand
            for size, expr in zip(t.shape, amap.results):
                if isinstance(expr, ir.AffineDimExpr):
                    ranges[ir.AffineDimExpr(expr).position] = size
        if any(r is None for r in ranges):
            return None
        return ranges


def _linalg_ops(module: ir.Module):
    ops = []

    def visit(op):
        name = op.name
        if name.startswith("linalg.") and name != "linalg.yield" and name != "linalg.index":
            ops.append(op)
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return ops


def _elementwise_consumer(op):
    """The element-wise linalg.generic that is the only user of ``op``'s result, if any.

    It must iterate over exactly the result's shape (all loops parallel), read the
    result with the identity map and the other inputs with projected permutations
    (e.g. a broadcast bias).
    """
    if len(op.results) != 1:
        return None
    result = op.results[0]
    uses = list(result.uses)
    if len(uses) != 1:
        return None
    user = uses[0].owner
    if user.name != "linalg.generic" or len(user.results) != 1:
        return None
    out = _shaped(result)
    uout = _shaped(user.results[0])
    if out is None or uout is None or tuple(out.shape) != tuple(uout.shape) or not _is_f32(uout):
        return None
    try:
        iterators = [str(a) for a in ir.ArrayAttr(user.attributes["iterator_types"])]
        maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(user.attributes["indexing_maps"])]
    except (KeyError, ValueError):
        return None
    if any("parallel" not in it for it in iterators) or len(iterators) != len(out.shape):
        return None
    identity = ir.AffineMap.get_identity(len(out.shape))
    operands = list(user.operands)
    for index, (value, amap) in enumerate(zip(operands, maps)):
        if value == result:
            if amap != identity or index >= len(operands) - 1:
                return None
        elif not amap.is_projected_permutation:
            return None
    if maps[-1] != identity:
        return None
    return user


def plan(module: ir.Module, target: Target, threads: int = 1):
    """Tag the linalg ops of ``module`` and return (transform script text, [Kernel])."""
    planner = Planner(target, threads)
    ops = _linalg_ops(module)
    from .matvec import MARK, schedule_matvec

    contractions = [op for op in ops if op.name in CONTRACTIONS or MARK in op.attributes]
    # Fills that initialize a contraction's accumulator are fused into its tiles.
    fused_fills = set()
    for op in contractions:
        init = op.operands[2]
        owner = init.owner if isinstance(init, ir.OpResult) else None
        if owner is not None and owner.name == "linalg.fill":
            fused_fills.add(owner)
    # Program order: the producers of a contraction's operands are tiled before it (so
    # that structured.fuse, which fuses producers greedily, only finds the fill), and
    # an element-wise consumer is known to be an epilogue before it is reached.
    consumed = []
    for op in ops:
        if MARK in op.attributes:
            schedule_matvec(planner, op)
        elif op.name in CONTRACTIONS:
            out = _shaped(op.results[0]) if op.results else None
            if out is None or not _is_f32(out):
                planner.generic(op)
            elif op.name in ("linalg.matmul", "linalg.batch_matmul"):
                epilogue = _elementwise_consumer(op)
                if planner.matmul(op, batch=op.name == "linalg.batch_matmul", epilogue=epilogue):
                    consumed.append(epilogue)
            else:
                planner.conv(op)
        elif op not in fused_fills and op not in consumed:
            planner.generic(op)
    planner.finish()
    return planner.script.text(), planner.kernels


# --------------------------------------------------------------------------- memrefs


def post_bufferization_script(target: Target, copies, threads: int = 1) -> str:
    """Vectorize copies, hoist accumulators on buffers, lower vector masks.

    ``copies`` lists ``(tag, static shape)`` of the ``linalg.copy`` ops on memrefs that
    bufferization left (packing buffers, padded operands, results copied out): each is
    tiled to rows and vectorized, masked for the remainder of a row; big ones are
    first split among the threads.
    """
    s = Script()
    lanes = target.lanes(32)
    for tag, shape in copies:
        h = s.match(["linalg.copy"], tag=tag)
        arg = s.begin_suppressed(h)
        width = min(shape[-1], 8 * lanes)
        sizes = [1] * (len(shape) - 1) + [width]
        t = arg
        if threads > 1 and math.prod(shape) >= 1 << 15:
            outer = [d for d in range(len(shape) - 1) if shape[d] >= threads]
            if outer:
                split = [0] * len(shape)
                split[outer[0]] = math.ceil(shape[outer[0]] / threads)
                t, _ = s.tile_forall(t, split)
        if len(shape) > 1 or width < shape[-1]:
            t, _ = s.tile_for(t, sizes)
        s.vectorize(t, sizes)
        s.end_suppressed()
    func = s.match_func()
    hoisted = s.fresh("func")
    s.emit(f"{hoisted} = transform.structured.hoist_redundant_vector_transfers {func} : (!transform.any_op) -> !transform.any_op")
    func = hoisted
    # Masked transfers (row remainders) become transfers with a mask operand before the
    # deallocation pipeline canonicalizes: vector.mask regions must hold one op only.
    s.patterns(func, ["vector.lower_masked_transfers", "vector.lower_masks"])
    return s.text("__dnnf_vectorize_buffers")


VECTOR_LOWERING = (
    'vector.lower_contraction lowering_strategy = "outerproduct"',
    "vector.transfer_permutation_patterns",
    'vector.reorder_multi_reduction_dims lowering_strategy = "innerparallel"',
    'vector.multi_reduction_flattening lowering_strategy = "innerparallel"',
    'vector.multi_reduction_unrolling lowering_strategy = "innerparallel"',
    "vector.lower_masked_transfers",
    "vector.lower_transfer max_transfer_rank = 1",
    "vector.lower_outerproduct",
    "vector.lower_broadcast",
    'vector.lower_transpose lowering_strategy = "eltwise"',
    "vector.lower_shape_cast",
)


def vector_lowering_script() -> str:
    """vector.contract -> outer products -> FMAs; n-D transfers -> 1-D loads/stores.

    No canonicalization may run between this and the LLVM conversion: it would fold
    the rows of an accumulator back into one ``vector.from_elements`` of scalars.
    """
    s = Script()
    func = s.match_func()
    s.patterns(func, VECTOR_LOWERING)
    return s.text("__dnnf_lower_vectors")


__all__ = ["CONTRACTIONS", "Kernel", "Script", "TAG", "plan", "post_bufferization_script", "vector_lowering_script"]
