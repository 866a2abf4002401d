"""The term language rules are written in: patterns (left-hand sides) and templates.

A rule reads like the paper's tables: ``N("mul", N("exp", A), N("exp", B))`` is
``Exp(A) ⊙ Exp(B)``. Variables match any value (the same name the same value);
``C`` variables match constants only and ``S`` variables scalar constants (one
element, so broadcasting them never changes a shape). ``Lit`` is a literal number:
in a pattern it matches a splat constant of that value, in a template it becomes a
rank-0 constant of its neighbours' element type.
"""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Var:
    """A pattern variable. ``kind``: "any", "const" (an ecg.constant) or "scalar" (a one-element one)."""

    name: str
    kind: str = "any"

    def __str__(self):
        return self.name


@dataclass(frozen=True)
class Ref:
    """In a template: the result of the pattern node bound to ``name``, kept as it is."""

    name: str

    def __str__(self):
        return self.name


@dataclass(frozen=True)
class Lit:
    """A literal number, e.g. the 1 in ``A ⊙ (B + 1)``; in a template it may be a
    callable of the match (an epsilon or beta read from a matched op)."""

    value: object

    def number(self, match) -> float:
        return self.value(match) if callable(self.value) else self.value

    def __str__(self):
        return "…" if callable(self.value) else f"{self.value:g}"


@dataclass(frozen=True)
class N:
    """An ECG op node: ``N(mnemonic, *operands, name=, like=, **attrs)``.

    In a pattern, ``attrs`` constrain the matched op and ``name`` binds it, so that
    conditions and templates can refer to it. In a template, ``like`` names a bound
    op whose attributes the new op copies, and ``attrs`` set (or, as callables of the
    match, compute) attributes.
    """

    op: str
    operands: tuple
    name: str | None = None
    like: str | None = None
    attrs: tuple = field(default=())

    def __init__(self, op, *operands, name=None, like=None, **attrs):
        object.__setattr__(self, "op", op)
        object.__setattr__(self, "operands", tuple(operands))
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "like", like)
        object.__setattr__(self, "attrs", tuple(sorted(attrs.items())))

    def __str__(self):
        args = [str(o) for o in self.operands]
        args += [f"{k}={'…' if callable(v) else v}" for k, v in self.attrs]
        return f"{_TITLE[self.op]}({', '.join(args)})"


def _title(mnemonic: str) -> str:
    return "".join(part.title() for part in mnemonic.split("_"))


class _Titles(dict):
    def __missing__(self, key):
        return _title(key)


# How ops are spelled in the catalogue: the ONNX-style names the paper uses.
_TITLE = _Titles(reciprocal="Recip", mat_mul="MatMul")


def leaves(term, kind) -> set:
    """The names of the ``kind`` (Var or Ref) leaves of ``term``."""
    if isinstance(term, kind):
        return {term.name}
    if isinstance(term, N):
        return set().union(set(), *(leaves(o, kind) for o in term.operands))
    return set()


def mnemonics(term) -> set:
    """The ops ``term`` mentions."""
    if isinstance(term, N):
        return {term.op}.union(*(mnemonics(o) for o in term.operands))
    return set()


def depth(term) -> int:
    """How many op levels ``term`` has: how far up a rewrite can change its matches."""
    return 1 + max((depth(o) for o in term.operands), default=0) if isinstance(term, N) else 0


A, B, C = Var("A"), Var("B"), Var("C")
K1, K2 = Var("K1", "const"), Var("K2", "const")
S1 = Var("S1", "scalar")
