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
"""

from math import prod

import numpy as np

from .. import _mlir
from .._mlir import arith, ir
from ..ecg import ECGOp, from_mlir
from ..ecg.shapes import normalize_axis
from ..linalg_builders import affine_map, element_of, generic
from ..transforms.pass_base import ModulePass


class LoweringError(Exception):
    """An ECG op this pass cannot lower; reported at ``location``."""

    def __init__(self, message: str, location=None):
        super().__init__(message)
        self.location = location


class Unsupported(Exception):
    """Raised by a lowering function for a configuration it does not handle."""


# mnemonic -> lower(op, args) -> list of result values
LOWERINGS: dict = {}


def lowers(*mnemonics):
    """Register the decorated function as the lowering of ``mnemonics``."""

    def register(function):
        for mnemonic in mnemonics:
            LOWERINGS[mnemonic] = function
        return function

    return register


# ======================================================================
# Building blocks: types, constants, scalar arithmetic
# ======================================================================


def _linalg():
    return _mlir.linalg


def _tensor():
    return _mlir.tensor


def _math():
    return _mlir.math


def tensor_type(shape, element) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(shape), element)


def shape_of(value) -> tuple:
    return tuple(ir.RankedTensorType(value.type).shape)


def is_float(element) -> bool:
    return isinstance(element, ir.FloatType)


def is_bool(element) -> bool:
    return isinstance(element, ir.IntegerType) and element.width == 1


def int_range(element) -> tuple:
    width = element.width
    return (0, 1) if width == 1 else (-(1 << (width - 1)), (1 << (width - 1)) - 1)


def constant(element, value):
    """A scalar arith.constant of ``element`` type (floats rounded, ints clamped to its range)."""
    if is_float(element):
        attr = ir.FloatAttr.get(element, float(value))
    elif isinstance(element, ir.IndexType):
        attr = ir.IntegerAttr.get(element, int(value))
    else:
        low, high = int_range(element)
        number = int(bool(value)) if element.width == 1 else min(max(int(value), low), high)
        attr = ir.IntegerAttr.get(element, number)
    return arith.ConstantOp(element, attr).result


def index(value: int):
    return constant(ir.IndexType.get(), value)


def lowest(element):
    """The identity of max (a Python number): -inf, or the integer type's minimum."""
    return float("-inf") if is_float(element) else int_range(element)[0]


def highest(element):
    """The identity of min: inf, or the integer type's maximum."""
    return float("inf") if is_float(element) else int_range(element)[1]


# Scalar arithmetic on values of one element type (float or signless integer).
def add(a, b):
    return arith.addf(a, b) if is_float(a.type) else arith.addi(a, b)


def sub(a, b):
    return arith.subf(a, b) if is_float(a.type) else arith.subi(a, b)


def mul(a, b):
    return arith.mulf(a, b) if is_float(a.type) else arith.muli(a, b)


def div(a, b):
    """True division for floats, truncation toward zero for integers (ONNX Div)."""
    return arith.divf(a, b) if is_float(a.type) else arith.divsi(a, b)


def maximum(a, b):
    """max(a, b); NaN-propagating for floats like numpy.maximum."""
    if is_float(a.type):
        return arith.maximumf(a, b)
    return arith.ori(a, b) if is_bool(a.type) else arith.maxsi(a, b)


def minimum(a, b):
    if is_float(a.type):
        return arith.minimumf(a, b)
    return arith.andi(a, b) if is_bool(a.type) else arith.minsi(a, b)


_FLOAT_PREDICATES = {"eq": "OEQ", "ne": "UNE", "lt": "OLT", "le": "OLE", "gt": "OGT", "ge": "OGE"}
_INT_PREDICATES = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}


def compare(predicate: str, a, b):
    """a <predicate> b as i1: ordered for floats (NaN compares false, except 'ne')."""
    if is_float(a.type):
        return arith.cmpf(getattr(arith.CmpFPredicate, _FLOAT_PREDICATES[predicate]), a, b)
    return arith.cmpi(getattr(arith.CmpIPredicate, _INT_PREDICATES[predicate]), a, b)


def select(condition, a, b):
    return arith.select(condition, a, b)


def cast(value, to):
    """numpy ``astype`` for one scalar: float/int/bool conversions."""
    source = value.type
    if source == to:
        return value
    if is_float(source) and is_float(to):
        return arith.extf(to, value) if to.width > source.width else arith.truncf(to, value)
    if is_float(source):
        if is_bool(to):  # nonzero (NaN included) is True
            return arith.cmpf(arith.CmpFPredicate.UNE, value, constant(source, 0.0))
        return arith.fptosi(to, value)
    if is_float(to):
        return arith.uitofp(to, value) if is_bool(source) else arith.sitofp(to, value)
    if is_bool(to):
        return arith.cmpi(arith.CmpIPredicate.ne, value, constant(source, 0))
    if to.width > source.width:
        return arith.extui(to, value) if is_bool(source) else arith.extsi(to, value)
    return arith.trunci(to, value)


def clamp(value, low, high):
    return minimum(maximum(value, low), high)


# ======================================================================
# Building blocks: tensors
# ======================================================================


def empty(shape, element):
    return _tensor().empty(list(shape), element)


def filled(shape, element, value):
    """A tensor of ``shape`` filled with the scalar ``value`` (a Python number or a Value)."""
    scalar = value if isinstance(value, ir.Value) else constant(element, value)
    return _linalg().fill(scalar, outs=[empty(shape, element)])


def broadcast_map(shape, out_shape) -> ir.AffineMap:
    """numpy broadcasting as an indexing map: ``shape`` aligned right, size-1 dims read index 0."""
    rank = len(out_shape)
    exprs = []
    for i, size in enumerate(shape):
        dim = rank - len(shape) + i
        exprs.append(ir.AffineConstantExpr.get(0) if size == 1 and out_shape[dim] != 1 else dim)
    return affine_map(rank, exprs)


def elementwise(inputs, out_shape, out_element, body):
    """out = body(*inputs) elementwise with numpy broadcasting of the inputs to ``out_shape``."""
    maps = [broadcast_map(shape_of(v), out_shape) for v in inputs]
    maps.append(affine_map(len(out_shape), range(len(out_shape))))
    init = empty(out_shape, out_element)
    return generic(inputs, maps, [init], lambda *scalars: body(*scalars[: len(inputs)]))[0]


def map_values(value, out_element, body):
    """Apply ``body`` to each element of ``value``."""
    return elementwise([value], shape_of(value), out_element, body)


def reduce(value, dims, init, combine):
    """linalg.reduce over ``dims`` from the scalar ``init``; ``combine(element, accumulator)``."""
    linalg = _linalg()
    shape = shape_of(value)
    element = element_of(value)
    dims = sorted(dims)
    out_shape = [d for i, d in enumerate(shape) if i not in dims]
    accumulator = filled(out_shape, element, init)
    op = linalg.ReduceOp([accumulator.type], [value], [accumulator], dims)
    block = op.regions[0].blocks.append(element, element)
    with ir.InsertionPoint(block):
        linalg.YieldOp([combine(block.arguments[0], block.arguments[1])])
    return op.results[0]


def _common_groups(source, target):
    """Reassociations of ``source`` and ``target`` into their finest common shape, or None.

    Returns (source groups, target groups): group k of each side multiplies to the
    same size, so a collapse_shape of ``source`` then an expand_shape gives ``target``.
    Runs of size-1 dimensions join a neighbouring group.
    """
    if 0 in source or 0 in target:
        return None
    pairs, i, j = [], 0, 0
    while i < len(source) or j < len(target):
        left, right = [], []
        left_size = right_size = 1
        if i < len(source):
            left, left_size, i = [i], source[i], i + 1
        if j < len(target):
            right, right_size, j = [j], target[j], j + 1
        while left_size != right_size:
            if left_size < right_size:
                if i == len(source):
                    return None
                left.append(i)
                left_size *= source[i]
                i += 1
            else:
                if j == len(target):
                    return None
                right.append(j)
                right_size *= target[j]
                j += 1
        pairs.append((left, right))
    # a group empty on one side holds only 1s on the other: merge it with a neighbour
    merged, pending = [], ([], [])
    for left, right in pairs:
        left, right = pending[0] + left, pending[1] + right
        if not left or not right:
            if merged:
                merged[-1] = (merged[-1][0] + left, merged[-1][1] + right)
                pending = ([], [])
            else:
                pending = (left, right)
            continue
        merged.append((left, right))
        pending = ([], [])
    return [left for left, _ in merged], [right for _, right in merged]


def _reassociation(groups) -> ir.ArrayAttr:
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in g]) for g in groups])


def collapse(value, groups):
    shape = shape_of(value)
    target = [prod(shape[d] for d in g) for g in groups]
    return _tensor().collapse_shape(tensor_type(target, element_of(value)), value, _reassociation(groups))


def expand(value, groups, shape):
    return _tensor().expand_shape(tensor_type(shape, element_of(value)), value, _reassociation(groups), [], list(shape))


def reshape(value, shape):
    """Row-major reshape: collapse_shape to the shapes' finest common shape, then expand_shape
    (either one alone when the other is the identity)."""
    source, shape = shape_of(value), tuple(shape)
    if source == shape:
        return value
    groups = _common_groups(source, shape)
    if groups is None:  # zero-sized dimensions: through a 1-d tensor
        flat = collapse(value, [list(range(len(source)))])
        return expand(flat, [list(range(len(shape)))], shape)
    source_groups, target_groups = groups
    if len(source_groups) != len(source):
        value = collapse(value, source_groups)
    if len(target_groups) != len(shape):
        value = expand(value, target_groups, shape)
    return value


def broadcast_along(value, shape, added):
    """linalg.broadcast of ``value`` to ``shape``, inserting the dimensions ``added``."""
    return _linalg().broadcast(value, outs=[empty(shape, element_of(value))], dimensions=list(added)).results[0]


def broadcast_to(value, shape):
    """numpy.broadcast_to, materialized: drop stretched size-1 dims, then linalg.broadcast."""
    source, shape = shape_of(value), tuple(shape)
    if source == shape:
        return value
    offset = len(shape) - len(source)
    kept = [offset + i for i, d in enumerate(source) if d == shape[offset + i]]
    value = reshape(value, [shape[d] for d in kept])
    return broadcast_along(value, shape, [d for d in range(len(shape)) if d not in kept])


def transpose(value, perm):
    perm = [int(p) for p in perm]
    if perm == sorted(perm):
        return value
    shape = shape_of(value)
    init = empty([shape[p] for p in perm], element_of(value))
    return _linalg().transpose(value, outs=[init], permutation=perm).results[0]


def extract_slice(value, offsets, sizes, strides=None):
    strides = strides or [1] * len(sizes)
    result = tensor_type(sizes, element_of(value))
    return _tensor().extract_slice(result, value, [], [], [], list(offsets), list(sizes), list(strides))


def pad(value, low, high, scalar):
    """tensor.pad with the constant ``scalar`` (a Python number)."""
    if not any(low) and not any(high):
        return value
    tensor = _tensor()
    element = element_of(value)
    shape = [d + lo + hi for d, lo, hi in zip(shape_of(value), low, high)]
    op = tensor.PadOp(tensor_type(shape, element), value, [], [], list(low), list(high))
    block = op.regions[0].blocks.append(*[ir.IndexType.get()] * len(shape))
    with ir.InsertionPoint(block):
        tensor.YieldOp(constant(element, scalar))
    return op.result


def loop_indices(rank):
    return [_linalg().IndexOp(d).result for d in range(rank)]


def gather_generic(inputs, maps, out_shape, element, body):
    """An output-driven generic: ``body(indices, *scalars)`` computes each element (it may
    ``tensor.extract`` from captured tensors at computed indices)."""
    maps = list(maps) + [affine_map(len(out_shape), range(len(out_shape)))]

    def wrapped(*scalars):
        return body(loop_indices(len(out_shape)), *scalars[: len(inputs)])

    return generic(inputs, maps, [empty(out_shape, element)], wrapped)[0]


def extract(value, indices):
    return _tensor().extract(value, list(indices))


# ======================================================================
# constant and fused
# ======================================================================


@lowers("constant")
def lower_constant(op, args):
    return [arith.ConstantOp(op.operation.results[0].type, op.operation.attributes["value"]).result]


# ======================================================================
# Elementwise: unary ops, ``body(x, attrs)`` per element
# ======================================================================


def _expm1(x):
    return _math().expm1(x)


def _gelu(x, attrs):
    math, e = _math(), x.type
    half, one = constant(e, 0.5), constant(e, 1.0)
    if attrs["approximate"] == "tanh":
        cube = mul(mul(x, x), x)
        inner = mul(constant(e, np.sqrt(2 / np.pi)), add(x, mul(constant(e, 0.044715), cube)))
        return mul(mul(half, x), add(one, math.tanh(inner)))
    return mul(mul(half, x), add(one, math.erf(div(x, constant(e, np.sqrt(2))))))


def _sign(x, attrs):
    e = x.type
    zero = constant(e, 0)
    negative = select(compare("lt", x, zero), constant(e, -1), zero if not is_float(e) else x)
    return select(compare("gt", x, zero), constant(e, 1), negative)


def _softplus(x, attrs):
    """log(1 + e**x) computed like numpy.logaddexp(0, x): max(x, 0) + log1p(e**-|x|)."""
    math, e = _math(), x.type
    return add(maximum(x, constant(e, 0.0)), math.log1p(math.exp(arith.negf(math.absf(x)))))


def _like(x, value):
    """A constant of ``x``'s type."""
    return constant(x.type, value)


def _hard_swish(x, attrs):
    return mul(x, clamp(add(div(x, _like(x, 6.0)), _like(x, 0.5)), _like(x, 0.0), _like(x, 1.0)))


def _hard_sigmoid(x, attrs):
    return clamp(add(mul(_like(x, attrs["alpha"]), x), _like(x, attrs["beta"])), _like(x, 0.0), _like(x, 1.0))


def _elu(x, attrs):
    return select(compare("lt", x, _like(x, 0.0)), mul(_like(x, attrs["alpha"]), _expm1(x)), x)


def _selu(x, attrs):
    negative = mul(_like(x, attrs["alpha"]), _expm1(x))
    return mul(_like(x, attrs["gamma"]), select(compare("le", x, _like(x, 0.0)), negative, x))


def _sigmoid(x, attrs):
    return arith.divf(_like(x, 1.0), arith.addf(_like(x, 1.0), _math().exp(arith.negf(x))))


UNARY = {
    "abs": lambda x, a: _math().absf(x) if is_float(x.type) else _math().absi(x),
    "neg": lambda x, a: arith.negf(x) if is_float(x.type) else arith.subi(_like(x, 0), x),
    "exp": lambda x, a: _math().exp(x),
    "log": lambda x, a: _math().log(x),
    "sqrt": lambda x, a: _math().sqrt(x),
    "reciprocal": lambda x, a: arith.divf(_like(x, 1.0), x),
    "relu": lambda x, a: maximum(x, _like(x, 0)),
    "square": lambda x, a: mul(x, x),
    "sigmoid": _sigmoid,
    "tanh": lambda x, a: _math().tanh(x),
    "erf": lambda x, a: _math().erf(x),
    "floor": lambda x, a: _math().floor(x),
    "ceil": lambda x, a: _math().ceil(x),
    "round": lambda x, a: _math().roundeven(x),
    "sign": _sign,
    "sin": lambda x, a: _math().sin(x),
    "cos": lambda x, a: _math().cos(x),
    "softplus": _softplus,
    "softsign": lambda x, a: div(x, add(_like(x, 1.0), _math().absf(x))),
    "not": lambda x, a: arith.xori(x, _like(x, 1)),
    "hard_swish": _hard_swish,
    "hard_sigmoid": _hard_sigmoid,
    "leaky_relu": lambda x, a: select(compare("lt", x, _like(x, 0.0)), mul(_like(x, a["alpha"]), x), x),
    "elu": _elu,
    "selu": _selu,
    "gelu": _gelu,
}


@lowers(*UNARY)
def lower_unary(op, args):
    body = UNARY[op.mnemonic]
    attrs = op.attrs
    (result,) = op.operation.results
    return [map_values(args[0], ir.RankedTensorType(result.type).element_type, lambda x: body(x, attrs))]


@lowers("cast")
def lower_cast(op, args):
    to = ir.RankedTensorType(op.operation.results[0].type).element_type
    return [map_values(args[0], to, lambda x: cast(x, to))]


@lowers("clip")
def lower_clip(op, args):
    attrs = op.attrs
    return [map_values(args[0], element_of(args[0]), lambda x: minimum(
        maximum(x, constant(x.type, attrs["min"])), constant(x.type, attrs["max"])
    ))]


# ======================================================================
# Elementwise: binary and ternary ops (numpy broadcasting)
# ======================================================================


def _pow(x, y, attrs):
    return _math().powf(x, y) if is_float(x.type) else _math().ipowi(x, y)


def _mod(x, y, attrs):
    """fmod=1: remainder with the sign of x; fmod=0: with the sign of y (floored)."""
    remainder = arith.remf(x, y) if is_float(x.type) else arith.remsi(x, y)
    if attrs["fmod"]:
        return remainder
    zero = constant(x.type, 0)
    differ = arith.xori(compare("lt", remainder, zero), compare("lt", y, zero))
    adjust = arith.andi(compare("ne", remainder, zero), differ)
    return select(adjust, add(remainder, y), remainder)


BINARY = {
    "add": lambda x, y, a: add(x, y),
    "sub": lambda x, y, a: sub(x, y),
    "mul": lambda x, y, a: mul(x, y),
    "div": lambda x, y, a: div(x, y),
    "pow": _pow,
    "max": lambda x, y, a: maximum(x, y),
    "min": lambda x, y, a: minimum(x, y),
    "mod": _mod,
    "prelu": lambda x, y, a: select(compare("lt", x, constant(x.type, 0)), mul(y, x), x),
    "equal": lambda x, y, a: compare("eq", x, y),
    "less": lambda x, y, a: compare("lt", x, y),
    "less_or_equal": lambda x, y, a: compare("le", x, y),
    "greater": lambda x, y, a: compare("gt", x, y),
    "greater_or_equal": lambda x, y, a: compare("ge", x, y),
    "and": lambda x, y, a: arith.andi(x, y),
    "or": lambda x, y, a: arith.ori(x, y),
    "xor": lambda x, y, a: arith.xori(x, y),
}


@lowers(*BINARY)
def lower_binary(op, args):
    body = BINARY[op.mnemonic]
    attrs = op.attrs
    (spec,) = op.result_specs
    element = ir.RankedTensorType(op.operation.results[0].type).element_type
    return [elementwise(args, spec.shape, element, lambda x, y: body(x, y, attrs))]


@lowers("bit_shift")
def lower_bit_shift(op, args):
    """Unsigned elements are shifted as signless ones (unrealized casts, which vanish
    in the LLVM lowering). Amounts out of [0, width) are poison in LLVM: a select gives
    numpy's 0 instead, and a signed right shift clamps the amount (as unsigned) to
    width - 1, which leaves the sign fill."""
    (spec,) = op.result_specs
    direction, signed, width = op.attrs["direction"], spec.dtype.kind == "i", spec.dtype.itemsize * 8
    element, signless = element_of(args[0]), ir.IntegerType.get_signless(width)

    def as_type(value, to):
        if signed:
            return value
        return ir.Operation.create("builtin.unrealized_conversion_cast", results=[to], operands=[value]).result

    def body(x, y):
        x, y = as_type(x, signless), as_type(y, signless)
        if direction == "RIGHT" and signed:
            return arith.shrsi(x, arith.minui(y, constant(signless, width - 1)))
        shifted = arith.shli(x, y) if direction == "LEFT" else arith.shrui(x, y)
        in_range = arith.cmpi(arith.CmpIPredicate.ult, y, constant(signless, width))
        return as_type(select(in_range, shifted, constant(signless, 0)), element)

    return [elementwise(args, spec.shape, element, body)]


@lowers("where")
def lower_where(op, args):
    (spec,) = op.result_specs
    return [elementwise(args, spec.shape, element_of(args[1]), select)]


@lowers("batch_normalization")
def lower_batch_normalization(op, args):
    """scale*(x-mean)/sqrt(var+eps)+bias with the per-channel parameters read along axis 1."""
    x = args[0]
    shape, element = shape_of(x), element_of(x)
    rank = len(shape)
    epsilon = op.attrs["epsilon"]
    identity = affine_map(rank, range(rank))
    channel = affine_map(rank, [1])

    def body(x, scale, bias, mean, var, _out):
        factor = arith.divf(scale, _math().sqrt(arith.addf(var, constant(element, epsilon))))
        return arith.addf(arith.mulf(arith.subf(x, mean), factor), bias)

    return generic(args, [identity] + [channel] * 4 + [identity], [empty(shape, element)], body)


# ======================================================================
# Matrix products
# ======================================================================


def _zeros(shape, element):
    return filled(shape, element, 0)


def matmul2d(a, b, init=None, transpose_a=False, transpose_b=False):
    """linalg.matmul (with transposed indexing maps for A^T / B^T) accumulating into ``init``."""
    linalg = _linalg()
    m = shape_of(a)[1 if transpose_a else 0]
    n = shape_of(b)[0 if transpose_b else 1]
    init = _zeros((m, n), element_of(a)) if init is None else init
    if not transpose_a and not transpose_b:
        return linalg.matmul(a, b, outs=[init])
    d_m, d_n, d_k = (ir.AffineDimExpr.get(i) for i in range(3))
    maps = [
        ir.AffineMap.get(3, 0, [d_k, d_m] if transpose_a else [d_m, d_k]),
        ir.AffineMap.get(3, 0, [d_n, d_k] if transpose_b else [d_k, d_n]),
        ir.AffineMap.get(3, 0, [d_m, d_n]),
    ]
    return linalg.matmul(a, b, outs=[init], indexing_maps=maps)


@lowers("gemm")
def lower_gemm(op, args):
    """alpha * A' @ B' + beta * C: C*beta broadcast is the matmul's accumulator when alpha is 1."""
    attrs = op.attrs
    a, b = args[:2]
    (spec,) = op.result_specs
    element = element_of(a)
    alpha, beta = attrs["alpha"], attrs["beta"]
    c = args[2] if len(args) == 3 and beta != 0.0 else None
    if c is not None and beta != 1.0:
        c = map_values(c, element, lambda v: mul(v, constant(element, beta)))
    if c is not None and alpha == 1.0:
        init = broadcast_to(c, spec.shape)
        return [matmul2d(a, b, init, bool(attrs["transA"]), bool(attrs["transB"]))]
    y = matmul2d(a, b, None, bool(attrs["transA"]), bool(attrs["transB"]))
    if alpha != 1.0:
        y = map_values(y, element, lambda v: mul(v, constant(element, alpha)))
    if c is not None:
        y = elementwise([y, c], spec.shape, element, add)
    return [y]


@lowers("mat_mul")
def lower_mat_mul(op, args):
    """numpy matmul: 2-D -> matmul; rhs 2-D -> lhs rows folded into one matmul; otherwise
    the batch dimensions are broadcast, folded into one and fed to batch_matmul."""
    linalg = _linalg()
    a, b = args
    (spec,) = op.result_specs
    element = element_of(a)
    a_shape, b_shape = shape_of(a), shape_of(b)
    if len(a_shape) == 1:
        a = reshape(a, (1,) + a_shape)
    if len(b_shape) == 1:
        b = reshape(b, b_shape + (1,))
    a_shape, b_shape = shape_of(a), shape_of(b)
    m, k, n = a_shape[-2], a_shape[-1], b_shape[-1]
    batch = tuple(np.broadcast_shapes(a_shape[:-2], b_shape[:-2]))
    if not batch:
        y = matmul2d(a, b)
    elif len(b_shape) == 2:
        rows = prod(a_shape[:-1])
        y = matmul2d(reshape(a, (rows, k)), b)
    else:
        count = prod(batch)
        a3 = reshape(broadcast_to(a, batch + (m, k)), (count, m, k))
        b3 = reshape(broadcast_to(b, batch + (k, n)), (count, k, n))
        y = linalg.batch_matmul(a3, b3, outs=[_zeros((count, m, n), element)])
    return [reshape(y, spec.shape)]


# ======================================================================
# Convolution and pooling
# ======================================================================

_CONVS = {1: "conv_1d_ncw_fcw", 2: "conv_2d_nchw_fchw", 3: "conv_3d_ncdhw_fcdhw"}
_DEPTHWISE = {1: "depthwise_conv_1d_ncw_cw", 2: "depthwise_conv_2d_nchw_chw", 3: "depthwise_conv_3d_ncdhw_cdhw"}


def _int_list(values):
    """strides/dilations for the op-DSL builders: plain ints."""
    return [int(v) for v in values]


@lowers("conv")
def lower_conv(op, args):
    """Pad (tensor.pad), then conv_*_nchw_fchw / depthwise_conv_*_nchw_chw /
    conv_2d_ngchw_gfchw into zeros; the bias is an element-wise add after it, which
    the code generator fuses into the convolution's tiles as it fuses any epilogue (a
    broadcast bias as the accumulator's initial value was a kernel of its own)."""
    linalg = _linalg()
    attrs = op.attrs
    x, w = args[:2]
    specs = op.operand_specs
    (spec,) = op.result_specs
    n, c = specs[0].shape[:2]
    m = specs[1].shape[0]
    kernel = specs[1].shape[2:]
    spatial = len(kernel)
    group = attrs["group"]
    element = element_of(x)
    depthwise = group > 1 and group == c and m == c
    if spatial not in _CONVS:
        raise Unsupported(f"{spatial}-d convolution")
    if group > 1 and not depthwise and spatial != 2:
        raise Unsupported(f"grouped {spatial}-d convolution (group {group}) other than depthwise")
    begins, ends, outs = type(op).geometry(specs, attrs)
    x = pad(x, [0, 0] + list(begins), [0, 0] + list(ends), 0.0)
    options = {"strides": _int_list(attrs["strides"]), "dilations": _int_list(attrs["dilations"])}
    if depthwise:
        w = reshape(w, (m,) + tuple(kernel))
        y = getattr(linalg, _DEPTHWISE[spatial])(x, w, outs=[_zeros(spec.shape, element)], **options)
    elif group == 1:
        y = getattr(linalg, _CONVS[spatial])(x, w, outs=[_zeros(spec.shape, element)], **options)
    else:
        padded = shape_of(x)
        xg = reshape(x, (n, group, c // group) + padded[2:])
        wg = reshape(w, (group, m // group) + tuple(specs[1].shape[1:]))
        init = _zeros((n, group, m // group, *outs), element)
        y = reshape(linalg.conv_2d_ngchw_gfchw(xg, wg, outs=[init], **options), spec.shape)
    if len(args) == 3:
        bias = reshape(args[2], (m,) + (1,) * spatial)
        y = elementwise([y, bias], spec.shape, element, add)
    return [y]


_POOLS = {("max", 1): "pooling_ncw_max", ("max", 2): "pooling_nchw_max",
          ("sum", 1): "pooling_ncw_sum", ("sum", 2): "pooling_nchw_sum"}


def _extra_end(in_sizes, begins, ends, kernel, strides, dilations, outs):
    """Padding past ``ends`` the last windows read in ceil mode (as kernels._extra_end)."""
    return [
        max(0, (o - 1) * s + (k - 1) * d + 1 - (i + b + e))
        for i, b, e, k, s, d, o in zip(in_sizes, begins, ends, kernel, strides, dilations, outs)
    ]


def _pool(kind, x, attrs, begins, ends, outs, pad_value, init_value):
    linalg = _linalg()
    shape = shape_of(x)
    kernel = list(attrs["kernel_shape"])
    spatial = len(kernel)
    name = _POOLS.get((kind, spatial))
    if name is None:
        raise Unsupported(f"{spatial}-d pooling")
    extra = _extra_end(shape[2:], begins, ends, kernel, attrs["strides"], attrs["dilations"], outs)
    x = pad(x, [0, 0] + list(begins), [0, 0] + [e + a for e, a in zip(ends, extra)], pad_value)
    element = element_of(x)
    out_shape = list(shape[:2]) + list(outs)
    init = filled(out_shape, element, init_value)
    window = empty(kernel, element)
    options = {"strides": _int_list(attrs["strides"]), "dilations": _int_list(attrs["dilations"])}
    return getattr(linalg, name)(x, window, outs=[init], **options), extra


@lowers("max_pool")
def lower_max_pool(op, args):
    """Pad with the lowest value (it never wins), then pooling_*_max."""
    attrs = op.attrs
    (spec,) = op.operand_specs
    begins, ends, outs = type(op).geometry(spec, attrs)
    low = lowest(element_of(args[0]))
    y, _ = _pool("max", args[0], attrs, begins, ends, outs, low, low)
    return [y]


@lowers("average_pool")
def lower_average_pool(op, args):
    """Zero-pad, pooling_*_sum, divide by the count of the window's counted positions."""
    attrs = op.attrs
    (spec,) = op.operand_specs
    begins, ends, outs = type(op).geometry(spec, attrs)
    total, extra = _pool("sum", args[0], attrs, begins, ends, outs, 0.0, 0.0)
    element = element_of(total)
    divisor = np.ones((), dtype=np.float64)
    for dim, (size, b, e, a, k, s, d, o) in enumerate(zip(
        spec.shape[2:], begins, ends, extra, attrs["kernel_shape"], attrs["strides"], attrs["dilations"], outs
    )):
        valid = np.zeros(b + size + e + a)
        if attrs["count_include_pad"]:
            valid[: b + size + e] = 1
        else:
            valid[b : b + size] = 1
        counts = sum(valid[t * d : t * d + s * (o - 1) + 1 : s] for t in range(k))
        shape = [1] * len(outs)
        shape[dim] = o
        divisor = divisor * counts.reshape(shape)
    if np.all(divisor == divisor.flat[0]):
        count = float(divisor.flat[0])
        return [map_values(total, element, lambda v: arith.divf(v, constant(element, count)))]
    dtype = from_mlir(total.type).dtype
    counts = np.ascontiguousarray(divisor.astype(dtype))
    attr = ir.DenseElementsAttr.get(counts, type=tensor_type(counts.shape, element))
    divisor_tensor = arith.ConstantOp(attr.type, attr).result
    return [elementwise([total, divisor_tensor], shape_of(total), element, arith.divf)]


def _global_pool(x, combine, init, finish):
    shape = shape_of(x)
    dims = list(range(2, len(shape)))
    reduced = reduce(x, dims, init, combine)
    if finish is not None:
        reduced = map_values(reduced, element_of(x), finish)
    return reshape(reduced, shape[:2] + (1,) * len(dims))


@lowers("global_average_pool")
def lower_global_average_pool(op, args):
    x = args[0]
    element = element_of(x)
    count = prod(shape_of(x)[2:])
    return [_global_pool(x, add, 0.0, lambda v: arith.divf(v, constant(element, count)))]


@lowers("global_max_pool")
def lower_global_max_pool(op, args):
    return [_global_pool(args[0], maximum, lowest(element_of(args[0])), None)]


@lowers("lrn")
def lower_lrn(op, args):
    """x / (bias + alpha/size * sum of squares over a channel window)^beta: the window sum is a
    reduction generic over the zero-padded squares."""
    attrs = op.attrs
    x = args[0]
    shape, element = shape_of(x), element_of(x)
    rank = len(shape)
    size = attrs["size"]
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    square = map_values(x, element, lambda v: arith.mulf(v, v))
    padded = pad(square, [0, before] + [0] * (rank - 2), [0, after] + [0] * (rank - 2), 0.0)
    # loops: (d0 .. d{rank-1}, window)
    window_dim = rank
    in_exprs = [ir.AffineDimExpr.get(0), ir.AffineDimExpr.get(1) + ir.AffineDimExpr.get(window_dim)]
    in_exprs += [ir.AffineDimExpr.get(d) for d in range(2, rank)]
    maps = [
        ir.AffineMap.get(rank + 1, 0, in_exprs),
        affine_map(rank + 1, [window_dim]),
        affine_map(rank + 1, range(rank)),
    ]
    window = empty([size], element)
    sums = generic(
        [padded, window], maps, [_zeros(shape, element)], lambda v, _w, acc: arith.addf(acc, v),
        ["parallel"] * rank + ["reduction"],
    )[0]
    alpha, beta, bias = attrs["alpha"], attrs["beta"], attrs["bias"]

    def normalize(v, s):
        scaled = arith.addf(constant(element, bias), arith.mulf(constant(element, alpha / size), s))
        return arith.divf(v, _math().powf(scaled, constant(element, beta)))

    return [elementwise([x, sums], shape, element, normalize)]


# ======================================================================
# Softmax, normalizations, reductions
# ======================================================================


def _without(rank, axes) -> ir.AffineMap:
    """The map from a rank-``rank`` iteration space to a tensor that dropped ``axes``."""
    return affine_map(rank, [d for d in range(rank) if d not in axes])


def _identity(rank):
    return affine_map(rank, range(rank))


def _combine_reduced(x, reduced, axes, element, body):
    """body(x_element, reduced_element) over x's shape, ``reduced`` lacking ``axes``."""
    shape = shape_of(x)
    rank = len(shape)
    maps = [_identity(rank), _without(rank, axes), _identity(rank)]
    return generic([x, reduced], maps, [empty(shape, element)], lambda a, r, _o: body(a, r))[0]


@lowers("softmax", "log_softmax")
def lower_softmax(op, args):
    """shifted = x - max(x); softmax: e**shifted / sum(e**shifted); log_softmax: shifted - log(sum)."""
    x = args[0]
    shape, element = shape_of(x), element_of(x)
    if not shape:
        raise Unsupported("softmax of a rank-0 tensor")
    axis = normalize_axis(op.attrs["axis"], len(shape))
    peak = reduce(x, [axis], float("-inf"), maximum)
    shifted = _combine_reduced(x, peak, [axis], element, arith.subf)
    exps = map_values(shifted, element, _math().exp)
    total = reduce(exps, [axis], 0.0, arith.addf)
    if op.mnemonic == "softmax":
        return [_combine_reduced(exps, total, [axis], element, arith.divf)]
    return [_combine_reduced(shifted, total, [axis], element, lambda s, t: arith.subf(s, _math().log(t)))]


def _mean_and_centered(x, axes, element):
    """(centered x, var) over ``axes``: mean = sum/n, var = sum(centered**2)/n."""
    shape = shape_of(x)
    count = prod(shape[a] for a in axes)
    total = reduce(x, axes, 0.0, arith.addf)
    mean = map_values(total, element, lambda v: arith.divf(v, constant(element, count)))
    centered = _combine_reduced(x, mean, axes, element, arith.subf)
    squares = map_values(centered, element, lambda v: arith.mulf(v, v))
    var = map_values(
        reduce(squares, axes, 0.0, arith.addf), element, lambda v: arith.divf(v, constant(element, count))
    )
    return centered, var


def _float_type(dtype_name: str):
    return {"f16": ir.F16Type, "f32": ir.F32Type, "f64": ir.F64Type}[dtype_name].get()


@lowers("layer_normalization")
def lower_layer_normalization(op, args):
    """Normalize over the axes from ``axis`` in the stash type (f32, or f64 for stash_type 11),
    convert back, then * scale (+ bias) broadcast from the right."""
    attrs = op.attrs
    x = args[0]
    shape, element = shape_of(x), element_of(x)
    rank = len(shape)
    axis = normalize_axis(attrs["axis"], rank)
    axes = list(range(axis, rank))
    compute = _float_type("f64" if attrs["stash_type"] == 11 or element == _float_type("f64") else "f32")
    xc = x if compute == element else map_values(x, compute, lambda v: cast(v, compute))
    centered, var = _mean_and_centered(xc, axes, compute)
    epsilon = attrs["epsilon"]
    normed = _combine_reduced(
        centered, var, axes, element,
        lambda c, v: cast(arith.divf(c, _math().sqrt(arith.addf(v, constant(compute, epsilon)))), element),
    )
    y = elementwise([normed, args[1]], shape, element, arith.mulf)
    if len(args) == 3:
        y = elementwise([y, args[2]], shape, element, arith.addf)
    return [y]


@lowers("instance_normalization")
def lower_instance_normalization(op, args):
    """Normalize each (n, c) over the spatial dimensions, then * scale + bias per channel."""
    x, scale, bias = args
    shape, element = shape_of(x), element_of(x)
    rank = len(shape)
    compute = _float_type("f32") if element == _float_type("f16") else element
    xc = x if compute == element else map_values(x, compute, lambda v: cast(v, compute))
    axes = list(range(2, rank))
    centered, var = _mean_and_centered(xc, axes, compute)
    epsilon = op.attrs["epsilon"]
    maps = [_identity(rank), _without(rank, axes), affine_map(rank, [1]), affine_map(rank, [1]), _identity(rank)]

    def body(c, v, s, b, _o):
        y = arith.divf(c, _math().sqrt(arith.addf(v, constant(compute, epsilon))))
        return cast(arith.addf(arith.mulf(y, cast(s, compute)), cast(b, compute)), element)

    return generic([centered, var, scale, bias], maps, [empty(shape, element)], body)


# Reductions: (element map before, identity, combine, finish(accumulator, count) or None).
def _square(v):
    return mul(v, v)


REDUCTIONS = {
    "reduce_sum": (None, 0, add, None),
    "reduce_mean": (None, 0, add, lambda v, n: arith.divf(v, constant(v.type, n))),
    "reduce_max": (None, "lowest", maximum, None),
    "reduce_min": (None, "highest", minimum, None),
    "reduce_prod": (None, 1, mul, None),
    "reduce_l1": (lambda v: _math().absf(v) if is_float(v.type) else _math().absi(v), 0, add, None),
    "reduce_l2": (_square, 0, add, lambda v, n: _math().sqrt(v)),
    "reduce_sum_square": (_square, 0, add, None),
    "reduce_log_sum": (None, 0, add, lambda v, n: _math().log(v)),
}


def _identity_value(element, init):
    if init == "lowest":
        return lowest(element)
    if init == "highest":
        return highest(element)
    return init


@lowers(*REDUCTIONS)
def lower_reduce(op, args):
    """linalg.reduce over the axes (after the element map), finish, then reshape for keepdims."""
    x = args[0]
    shape, element = shape_of(x), element_of(x)
    (spec,) = op.result_specs
    before, init, combine, finish = REDUCTIONS[op.mnemonic]
    axes = type(op).reduced_axes(len(shape), op.attrs)
    count = prod(shape[a] for a in axes)
    if before is not None:
        x = map_values(x, element, before)
    if axes:
        x = reduce(x, axes, _identity_value(element, init), lambda v, acc: combine(acc, v))
    if finish is not None:
        x = map_values(x, element, lambda v: finish(v, count))
    return [reshape(x, spec.shape)]


@lowers("reduce_log_sum_exp")
def lower_reduce_log_sum_exp(op, args):
    """log(sum(e**(x - peak))) + peak with peak = max (0 where not finite), as the reference."""
    math = _math()
    x = args[0]
    shape, element = shape_of(x), element_of(x)
    (spec,) = op.result_specs
    axes = type(op).reduced_axes(len(shape), op.attrs)

    def finite_or_zero(p):
        finite = arith.cmpf(arith.CmpFPredicate.ONE, math.absf(p), constant(element, float("inf")))
        return select(finite, p, constant(element, 0.0))

    if not axes:
        def whole(v):
            p = finite_or_zero(v)
            return arith.addf(math.log(math.exp(arith.subf(v, p))), p)

        return [reshape(map_values(x, element, whole), spec.shape)]
    peak = map_values(reduce(x, axes, float("-inf"), maximum), element, finite_or_zero)
    exps = _combine_reduced(x, peak, axes, element, lambda v, p: math.exp(arith.subf(v, p)))
    total = reduce(exps, axes, 0.0, arith.addf)
    y = elementwise([total, peak], shape_of(total), element, lambda t, p: arith.addf(math.log(t), p))
    return [reshape(y, spec.shape)]


@lowers("arg_max", "arg_min")
def lower_arg_reduce(op, args):
    """A two-output reduction generic carrying (best value, its index); strict comparison keeps
    the first index, non-strict (select_last_index) the last."""
    x = args[0]
    shape, element = shape_of(x), element_of(x)
    rank = len(shape)
    attrs = op.attrs
    (spec,) = op.result_specs
    axis = normalize_axis(attrs["axis"], rank)
    reduced = [d for i, d in enumerate(shape) if i != axis]
    i64 = ir.IntegerType.get_signless(64)
    is_max = op.mnemonic == "arg_max"
    start = _identity_value(element, "lowest" if is_max else "highest")
    best = filled(reduced, element, start)
    where = _zeros(reduced, i64)
    strict = "gt" if is_max else "lt"
    loose = "ge" if is_max else "le"
    predicate = loose if attrs["select_last_index"] else strict

    def body(v, acc, acc_index):
        position = arith.index_cast(i64, _linalg().IndexOp(axis).result)
        better = compare(predicate, v, acc)
        # the first element always replaces the initial value
        first = arith.cmpi(arith.CmpIPredicate.eq, position, constant(i64, 0))
        take = arith.ori(better, first)
        return [select(take, v, acc), select(take, position, acc_index)]

    maps = [_identity(rank), _without(rank, [axis]), _without(rank, [axis])]
    iterators = ["reduction" if d == axis else "parallel" for d in range(rank)]
    _, indices = generic([x], maps, [best, where], body, iterators)
    return [reshape(indices, spec.shape)]


# ======================================================================
# Data movement
# ======================================================================


@lowers("reshape", "flatten", "squeeze", "unsqueeze")
def lower_reshape(op, args):
    (spec,) = op.result_specs
    return [reshape(args[0], spec.shape)]


@lowers("transpose")
def lower_transpose(op, args):
    return [transpose(args[0], op.attrs["perm"])]


@lowers("slice")
def lower_slice(op, args):
    """tensor.extract_slice for positive steps; a generic reading start + step*i otherwise."""
    x = args[0]
    shape = shape_of(x)
    (spec,) = op.result_specs
    attrs = op.attrs
    offsets, strides = [0] * len(shape), [1] * len(shape)
    for start, axis, step in zip(attrs["starts"], attrs["axes"], attrs["steps"]):
        offsets[axis], strides[axis] = start, step
    if all(s > 0 for s in strides) or 0 in spec.shape:
        return [extract_slice(x, offsets, spec.shape, [abs(s) for s in strides])]
    rank = len(shape)
    exprs = [
        ir.AffineConstantExpr.get(o) + ir.AffineDimExpr.get(d) * s for d, (o, s) in enumerate(zip(offsets, strides))
    ]
    maps = [ir.AffineMap.get(rank, 0, exprs), _identity(rank)]
    return generic([x], maps, [empty(spec.shape, element_of(x))], lambda v, _o: v)


@lowers("concat")
def lower_concat(op, args):
    (spec,) = op.result_specs
    axis = normalize_axis(op.attrs["axis"], spec.rank)
    result = op.operation.results[0].type
    return [_tensor().concat(result, axis, list(args))]


@lowers("split")
def lower_split(op, args):
    x = args[0]
    shape = shape_of(x)
    axis = normalize_axis(op.attrs["axis"], len(shape))
    results, start = [], 0
    for spec in op.result_specs:
        offsets = [0] * len(shape)
        offsets[axis] = start
        results.append(extract_slice(x, offsets, spec.shape))
        start += spec.shape[axis]
    return results


@lowers("pad")
def lower_pad(op, args):
    """Crop (extract_slice) for negative pads, then tensor.pad (constant) or a generic that
    reads the clamped (edge), mirrored (reflect) or wrapped index."""
    x = args[0]
    attrs = op.attrs
    (spec,) = op.result_specs
    plan = type(op)._plan(shape_of(x), attrs)
    shape = shape_of(x)
    kept = [d - cb - ce for d, (cb, ce, _, _) in zip(shape, plan)]
    if any(cb or ce for cb, ce, _, _ in plan):
        x = extract_slice(x, [cb for cb, _, _, _ in plan], kept)
    low = [pb for _, _, pb, _ in plan]
    high = [pe for _, _, _, pe in plan]
    mode = attrs["mode"]
    if mode == "constant":
        return [pad(x, low, high, attrs["constant_value"])]
    if 0 in spec.shape:
        return [empty(spec.shape, element_of(x))]
    source = x

    def body(indices):
        reads = []
        for i, size, begin in zip(indices, kept, low):
            if size == 1 and mode != "reflect":
                reads.append(index(0))
                continue
            position = arith.subi(i, index(begin))
            if mode == "edge":
                position = arith.minsi(arith.maxsi(position, index(0)), index(size - 1))
            elif mode == "wrap":
                position = arith.remsi(arith.addi(arith.remsi(position, index(size)), index(size)), index(size))
            else:  # reflect: pads are smaller than the size, one mirror suffices
                position = _math().absi(position)
                over = arith.cmpi(arith.CmpIPredicate.sge, position, index(size))
                position = select(over, arith.subi(index(2 * (size - 1)), position), position)
            reads.append(position)
        return extract(source, reads)

    return [gather_generic([], [], spec.shape, element_of(x), body)]


@lowers("expand")
def lower_expand(op, args):
    (spec,) = op.result_specs
    return [broadcast_to(args[0], spec.shape)]


@lowers("tile")
def lower_tile(op, args):
    """Broadcast to (r0, d0, r1, d1, ...) then collapse pairs: the repeats are outer."""
    x = args[0]
    shape = shape_of(x)
    (spec,) = op.result_specs
    repeats = op.attrs["repeats"]
    interleaved = []
    for r, d in zip(repeats, shape):
        interleaved += [r, d]
    expanded = reshape(x, [v for pair in zip([1] * len(shape), shape) for v in pair])
    return [reshape(broadcast_to(expanded, interleaved), spec.shape)]


def _normalized_index(raw, size):
    """An index from an i32/i64 tensor element, negative values counting from the end."""
    position = arith.index_cast(ir.IndexType.get(), raw)
    negative = arith.cmpi(arith.CmpIPredicate.slt, position, index(0))
    return select(negative, arith.addi(position, index(size)), position)


@lowers("gather")
def lower_gather(op, args):
    """out[pre, idx..., post] = data[pre, indices[idx...], post]: a generic over the output
    reading the index tensor and extracting from ``data``."""
    data, indices = args
    (spec,) = op.result_specs
    data_shape, index_shape = shape_of(data), shape_of(indices)
    axis = normalize_axis(op.attrs["axis"], len(data_shape))
    rank = len(spec.shape)
    index_map = affine_map(rank, range(axis, axis + len(index_shape)))

    def body(loops, raw):
        position = _normalized_index(raw, data_shape[axis])
        reads = loops[:axis] + [position] + loops[axis + len(index_shape):]
        return extract(data, reads)

    return [gather_generic([indices], [index_map], spec.shape, element_of(data), body)]


@lowers("gather_elements")
def lower_gather_elements(op, args):
    data, indices = args
    (spec,) = op.result_specs
    data_shape = shape_of(data)
    axis = normalize_axis(op.attrs["axis"], len(data_shape))

    def body(loops, raw):
        reads = list(loops)
        reads[axis] = _normalized_index(raw, data_shape[axis])
        return extract(data, reads)

    return [gather_generic([indices], [_identity(spec.rank)], spec.shape, element_of(data), body)]


@lowers("depth_to_space")
def lower_depth_to_space(op, args):
    x = args[0]
    n, c, h, w = shape_of(x)
    b = op.attrs["blocksize"]
    (spec,) = op.result_specs
    if op.attrs["mode"] == "DCR":
        y = transpose(reshape(x, (n, b, b, c // (b * b), h, w)), (0, 3, 4, 1, 5, 2))
    else:
        y = transpose(reshape(x, (n, c // (b * b), b, b, h, w)), (0, 1, 4, 2, 5, 3))
    return [reshape(y, spec.shape)]


@lowers("space_to_depth")
def lower_space_to_depth(op, args):
    x = args[0]
    n, c, h, w = shape_of(x)
    b = op.attrs["blocksize"]
    (spec,) = op.result_specs
    y = transpose(reshape(x, (n, c, h // b, b, w // b, b)), (0, 3, 5, 1, 2, 4))
    return [reshape(y, spec.shape)]


# ======================================================================
# The pass
# ======================================================================


# Ops whose lowering handles unsigned element types itself.
_UNSIGNED_OPS = ("ecg.bit_shift",)


def _unsigned_type(op) -> str | None:
    for value in list(op.operands) + list(op.results):
        type_ = value.type
        if isinstance(type_, ir.ShapedType) or isinstance(type_, ir.RankedTensorType):
            element = ir.ShapedType(type_).element_type
            if isinstance(element, ir.IntegerType) and element.is_unsigned:
                return str(element)
    return None


def _ecg_ops(root) -> list:
    """ECG ops under ``root`` in pre-order, not descending into ecg.fused (inlined whole)."""
    found = []

    def visit(operation):
        for region in operation.regions:
            for block in region.blocks:
                for op in block.operations:
                    name = op.operation.name
                    if name.startswith("ecg."):
                        found.append(op.operation)
                        if name == "ecg.fused":
                            continue
                    visit(op.operation)

    visit(root)
    return found


def _problems(operation) -> list:
    """[(location, message)] for ``operation`` (or the body ops of a fused op) that cannot be lowered."""
    name = operation.name
    if name == "ecg.fused":
        return [
            problem
            for region in operation.regions
            for block in region.blocks
            for inner in block.operations
            if inner.operation.name != "ecg.yield"
            for problem in _problems(inner.operation)
        ]
    if name[len("ecg."):] not in LOWERINGS:
        return [(operation.location, f"failed to legalize operation '{name}': no lowering to linalg in convert-ecg-to-linalg")]
    unsigned = _unsigned_type(operation)
    if unsigned and name not in _UNSIGNED_OPS:
        message = f"failed to legalize operation '{name}': unsigned element type {unsigned} (arith works on signless integers)"
        return [(operation.location, message)]
    return []


def lower_op(operation, args) -> list:
    """The values replacing ``operation``'s results; ops are created before ``operation``."""
    view = operation.opview
    if operation.name == "ecg.fused":
        return _inline_fused(view, args)
    if not isinstance(view, ECGOp):
        raise LoweringError(f"'{operation.name}' is not an ECG op", operation.location)
    try:
        results = LOWERINGS[view.mnemonic](view, list(args))
    except Unsupported as error:
        raise LoweringError(
            f"failed to legalize operation '{operation.name}': {error} is not supported by convert-ecg-to-linalg",
            operation.location,
        ) from None
    except LoweringError:
        raise
    except Exception as error:  # a bug in a lowering: still a diagnostic at the op, not a traceback
        raise LoweringError(
            f"internal error lowering '{operation.name}': {type(error).__name__}: {error}", operation.location
        ) from error
    results = list(results)
    for new, old in zip(results, operation.results):
        if new.type != old.type:
            raise LoweringError(
                f"lowering of '{operation.name}' produced {new.type}, expected {old.type}", operation.location
            )
    return results


def _inline_fused(view, args) -> list:
    """Lower a fused op's body in place of the fused op (block arguments are its operands)."""
    block = view.operation.regions[0].blocks[0]
    values = {arg: value for arg, value in zip(block.arguments, args)}
    for inner in block.operations:
        operation = inner.operation
        operands = [values.get(v, v) for v in operation.operands]
        if operation.name == "ecg.yield":
            return operands
        with operation.location:
            results = lower_op(operation, operands)
        for old, new in zip(operation.results, results):
            values[old] = new
    raise LoweringError("'ecg.fused' body does not end with 'ecg.yield'", view.operation.location)


def convert_module(module_op) -> list:
    """Lower every ECG op under ``module_op`` in place; returns [(location, message)] failures.

    Every op is checked before anything changes; a failure while lowering leaves the
    module partly converted (the pass fails then).
    """
    operations = _ecg_ops(module_op)
    problems = [problem for op in operations for problem in _problems(op)]
    if problems:
        return problems
    for operation in operations:
        args = list(operation.operands)
        try:
            with ir.InsertionPoint(operation), operation.location:
                results = lower_op(operation, args)
        except LoweringError as error:
            return [(error.location or operation.location, str(error))]
        for old, new in zip(operation.results, results):
            old.replace_all_uses_with(new)
        operation.erase()
    return []


class ConversionError(Exception):
    """The module holds ECG ops this conversion cannot lower (raised outside a pass manager)."""

    def __init__(self, failures):
        self.failures = failures
        super().__init__("\n".join(f"{location}: {message}" for location, message in failures))


class ConvertECGToLinalgPass(ModulePass):
    """Rewrites every ECG op into linalg/tensor/arith/math ops on tensors."""

    NAME = "convert-ecg-to-linalg"
    SUMMARY = "Lower ECG ops to linalg, tensor, arith and math ops on tensors"

    def run(self, module):
        failures = convert_module(module)
        if failures:
            raise ConversionError(failures)

    def __call__(self, op, pass_=None):
        operation = op.operation if hasattr(op, "operation") else op
        failures = convert_module(operation)
        if not failures:
            return
        if pass_ is None:
            raise ConversionError(failures)
        for location, message in failures:
            location.emit_error(message)
        pass_.signal_pass_failure()


def convert_ecg_to_linalg(module):
    """Lower ``module`` (an ir.Module or its operation) in place; raises ConversionError."""
    ConvertECGToLinalgPass()(module.operation if hasattr(module, "operation") else module)
    return module


__all__ = [
    "LOWERINGS", "ConvertECGToLinalgPass", "ConversionError", "LoweringError", "convert_ecg_to_linalg",
    "convert_module", "lowers",
]
