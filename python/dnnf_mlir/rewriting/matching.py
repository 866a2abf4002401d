"""Matching rule patterns against ECG IR, costing a rewrite, and building it.

A match binds a pattern's variables to values and its nodes to ops, trying both
operand orders of commutative ops (that is the commutative swap the paper applies
before an associative rule). Costs are FLOPs first and bytes read second, both
estimated from types before anything is built: the template's ops are inferred
with the op classes' own ``infer``/``count_flops``, and an op whose operands are
all constants costs nothing because it is folded into a new constant.
"""

import ctypes
from dataclasses import dataclass

import numpy as np

from .._mlir import ir
from ..ecg import OPS, TensorSpec, from_mlir
from ..ecg.attributes import Elements
from .terms import Lit, N, Ref, Var, leaves

# A folded constant may not be larger than this many elements unless it is no larger
# than the constants it was computed from: folding must not blow up the weights.
MAX_GROWN_CONSTANT = 1 << 16


# The bindings hash an Operation by its contents: the hash changes when an operand is
# replaced, so ops that rewrites touch are kept in dicts and sets by their address.
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype, _capsule_name.argtypes = ctypes.c_char_p, [ctypes.py_object]


def op_key(op) -> int:
    """The address of the MLIR operation: a key that stays the same while it lives."""
    capsule = op._CAPIPtr
    return _capsule_pointer(capsule, _capsule_name(capsule))


def owner_op(value):
    """The op producing ``value``, or None for a block argument."""
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def is_constant(value) -> bool:
    owner = owner_op(value)
    return owner is not None and owner.name == "ecg.constant"


def constant_array(value) -> np.ndarray:
    return Elements.from_attr(owner_op(value).attributes["value"])


def _splat_equals(value, number) -> bool:
    if not is_constant(value):
        return False
    attr = ir.DenseElementsAttr(owner_op(value).attributes["value"])
    return attr.is_splat and bool(np.all(Elements.from_attr(attr) == number))


_KINDS = {
    "any": lambda value: True,
    "const": is_constant,
    "scalar": lambda value: is_constant(value) and from_mlir(value.type).numel == 1,
}


@dataclass
class Match:
    """One way a rule's pattern fits the IR at ``root``."""

    rule: object
    root: ir.Operation
    values: dict  # variable name -> ir.Value
    ops: dict  # node name -> ir.Operation
    matched: tuple  # every op the pattern's nodes matched, root first

    def spec(self, name) -> TensorSpec:
        """The type of a variable or of a named node's result."""
        if name in self.values:
            return from_mlir(self.values[name].type)
        return from_mlir(self.ops[name].results[0].type)

    def attrs(self, name) -> dict:
        return self.ops[name].opview.attrs

    def array(self, name) -> np.ndarray:
        return constant_array(self.values[name])


def match_pattern(pattern: N, root: ir.Operation, rule):
    """Every Match of ``pattern`` rooted at ``root`` (root must already have the pattern's op)."""
    for values, ops, matched in _match_node(pattern, root, {}, {}, ()):
        yield Match(rule, root, values, ops, matched)


def _match_node(node: N, op: ir.Operation, values, ops, matched):
    if op.name != "ecg." + node.op or len(op.operands) != len(node.operands):
        return
    if node.attrs:
        attrs = op.opview.attrs
        if any(attrs[k] != v for k, v in node.attrs):
            return
    if node.name is not None:
        if node.name in ops and ops[node.name] != op:
            return
        ops = {**ops, node.name: op}
    matched = matched + (op,)
    operands = list(op.operands)
    orders = [operands]
    if len(operands) == 2 and OPS[node.op].ALGEBRA.commutative and node.operands[0] != node.operands[1]:
        orders.append(operands[::-1])
    for order in orders:
        yield from _match_operands(node.operands, order, values, ops, matched)


def _match_operands(terms, values_in, values, ops, matched):
    if not terms:
        yield values, ops, matched
        return
    term, value = terms[0], values_in[0]
    for bound in _match_term(term, value, values, ops, matched):
        yield from _match_operands(terms[1:], values_in[1:], *bound)


def _match_term(term, value, values, ops, matched):
    if isinstance(term, Var):
        if term.name in values:
            if values[term.name] == value:
                yield values, ops, matched
        elif _KINDS[term.kind](value):
            yield {**values, term.name: value}, ops, matched
    elif isinstance(term, Lit):
        if _splat_equals(value, term.value):
            yield values, ops, matched
    else:
        op = owner_op(value)
        if op is not None:
            yield from _match_node(term, op, values, ops, matched)


# ----- costing -----


@dataclass(frozen=True)
class Cost:
    flops: int
    bytes_read: int

    def __sub__(self, other):
        return Gain(self.flops - other.flops, self.bytes_read - other.bytes_read)


@dataclass(frozen=True, order=True)
class Gain:
    """What a rewrite saves: FLOPs, then bytes read (the tie-breaker)."""

    flops: int
    bytes_read: int

    def __bool__(self):
        return (self.flops, self.bytes_read) > (0, 0)

    @property
    def neutral(self) -> bool:
        return self.flops == 0 and self.bytes_read == 0


def op_cost(op: ir.Operation) -> Cost:
    view = op.opview
    if all(is_constant(v) for v in op.operands):
        return Cost(0, 0)
    return Cost(view.flops(), sum(from_mlir(v.type).nbytes for v in op.operands))


def dead_ops(match: Match, gone=frozenset()) -> list:
    """The matched ops the rewrite leaves without users (the root and single-use interior ops).

    Users in ``gone`` (``op_key``s of ops an uncommitted rewrite already replaced) do not count.
    """
    kept = {owner_op(v) for v in match.values.values()} | {match.ops[name] for name in leaves(match.rule.rhs, Ref)}
    kept.discard(None)
    dead = [match.root]
    candidates = [op for op in dict.fromkeys(match.matched[1:]) if op not in kept]
    changed = True
    while changed:
        changed = False
        for op in candidates:
            if op in dead:
                continue
            users = [use.owner for result in op.results for use in result.uses]
            users = [user for user in users if op_key(user) not in gone]
            if users and all(user in dead for user in users):
                dead.append(op)
                changed = True
    return dead


@dataclass(frozen=True)
class _Planned:
    spec: TensorSpec
    constant: bool


def estimate(match: Match, gone=frozenset()):
    """The Gain of applying the match, or None when the template does not type-check."""
    cost = [0, 0]
    try:
        planned = _plan(match.rule.rhs, match, cost, root_dtype(match))
    except ValueError:  # VerificationError and UnsupportedTypeError: the types do not fit
        return None
    if planned.spec != from_mlir(match.root.results[0].type):
        return None
    removed = Cost(0, 0)
    for op in dead_ops(match, gone):
        c = op_cost(op)
        removed = Cost(removed.flops + c.flops, removed.bytes_read + c.bytes_read)
    return removed - Cost(*cost)


def _plan(term, match, cost, like_dtype):
    if isinstance(term, (Var, Ref)):
        value = _bound(term, match)
        return _Planned(from_mlir(value.type), is_constant(value))
    if isinstance(term, Lit):
        return _Planned(TensorSpec((), like_dtype), True)
    planned = _operands(term, lambda o, dtype: _plan(o, match, cost, dtype), lambda p: p.spec.dtype, like_dtype)
    cls = OPS[term.op]
    specs = [p.spec for p in planned]
    attrs = cls.complete_attrs(specs, template_attrs(term, match))
    (spec,) = cls.infer(specs, attrs)
    constant = all(p.constant for p in planned) and _foldable(spec, specs)
    if not constant:
        cost[0] += cls.count_flops(specs, [spec], attrs)
        cost[1] += sum(s.nbytes for s in specs)
    return _Planned(spec, constant)


def template_attrs(node: N, match: Match) -> dict:
    attrs = dict(match.attrs(node.like)) if node.like else {}
    for name, value in node.attrs:
        attrs[name] = value(match) if callable(value) else value
    return attrs


def _foldable(result: TensorSpec, operands) -> bool:
    return result.numel <= max([MAX_GROWN_CONSTANT] + [s.numel for s in operands])


# ----- building -----


def _bound(term, match: Match) -> ir.Value:
    return match.values[term.name] if isinstance(term, Var) else match.ops[term.name].results[0]


def root_dtype(match: Match):
    return from_mlir(match.root.results[0].type).dtype


def build(term, match: Match, created: list, like_dtype=None) -> ir.Value:
    """Create the template's ops at the current insertion point, appending them to
    ``created``; return the template's value. A literal takes the element type of its
    neighbours (the root's, when it has none)."""
    like_dtype = root_dtype(match) if like_dtype is None else like_dtype
    if isinstance(term, (Var, Ref)):
        return _bound(term, match)
    if isinstance(term, Lit):
        return make_constant(np.array(term.number(match), dtype=like_dtype), created)
    values = _operands(term, lambda o, dtype: build(o, match, created, dtype), lambda v: from_mlir(v.type).dtype, like_dtype)
    return create(term.op, values, template_attrs(term, match), created)


def _operands(node: N, visit, dtype_of, like_dtype) -> list:
    """``visit(operand, dtype)`` for each operand of a template node, the literals last:
    a literal takes the element type of its first other operand (else ``like_dtype``)."""
    done = [None if isinstance(o, Lit) else visit(o, like_dtype) for o in node.operands]
    dtype = next((dtype_of(d) for d in done if d is not None), like_dtype)
    return [visit(o, dtype) if d is None else d for d, o in zip(done, node.operands)]


def create(mnemonic: str, operands, attrs: dict, created: list) -> ir.Value:
    """Build an ECG op, or the constant it folds to when all its operands are constants."""
    cls = OPS[mnemonic]
    attrs = cls.complete_attrs([from_mlir(v.type) for v in operands], attrs)
    folded = fold(cls, operands, attrs)
    if folded is not None:
        return make_constant(folded, created)
    op = cls.build(list(operands), attrs).operation
    created.append(op)
    return op.results[0]


def fold(cls, operands, attrs):
    """The value of op class ``cls`` over constant ``operands``, or None when it does not fold."""
    if not operands or not all(is_constant(v) for v in operands):
        return None
    specs = [from_mlir(v.type) for v in operands]
    results = cls.infer(specs, attrs)
    if len(results) != 1 or not _foldable(results[0], specs):
        return None
    (array,) = cls.reference([constant_array(v) for v in operands], attrs, results)
    return np.asarray(array, dtype=results[0].dtype)


def make_constant(array: np.ndarray, created: list) -> ir.Value:
    op = OPS["constant"].build([], {"value": np.require(array, requirements="C")}).operation
    created.append(op)
    return op.results[0]
