"""The rule catalogue: every rewrite rule, built once from the ops' declared properties.

Each family module adds its rules with ``add_rules(catalogue)``; most rules are
generated from ``Algebra`` declarations, so an op that declares a property gets
the rules that follow from it without new rule code.
"""

from functools import cache

from ..rules import Catalogue
from . import associative, commutative, distributive, strength


@cache
def catalogue() -> Catalogue:
    rules = Catalogue()
    for family in (associative, distributive, commutative, strength):
        family.add_rules(rules)
    return rules
