"""Small helpers that several op modules share: attribute values as ints, element
counts, broadcasting, and the commutation lists of the op families' algebras.

They live here rather than in one op module so that no op module imports another.
"""

import math

from ..properties import UNARY_ELEMENTWISE, Algebra

# Moving elements around commutes with applying a function to each of them:
# f(move(x)) == move(f(x)) for every unary elementwise f.
COMMUTES_WITH_UNARY = Algebra(commutes_with=(UNARY_ELEMENTWISE,))
# Non-decreasing elementwise ops g: max(g(x)) == g(max(x)), and likewise for min.
MONOTONE = ("relu", "exp", "sigmoid", "tanh", "erf", "floor", "ceil", "round", "softplus", "clip")
# Linear elementwise ops g: sum(g(x)) == g(sum(x)), and likewise for means.
LINEAR = ("neg",)


def int_list(values) -> list:
    """``values`` (a sequence of integers of any kind) as a list of Python ints."""
    return [int(v) for v in values]


def shape_numel(shape) -> int:
    """The number of elements of a tensor of ``shape``."""
    return int(math.prod(int(d) for d in shape))


def broadcasts_to(shape, target) -> bool:
    """Whether ``shape`` broadcasts unidirectionally to ``target``."""
    if len(shape) > len(target):
        return False
    return all(d in (1, t) for d, t in zip(shape[::-1], target[::-1]))
