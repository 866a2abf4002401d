"""The lowering table of convert-ecg-to-linalg, kept apart from the pass that reads it.

Each family module registers its lowerings here with ``@lowers(...)`` and raises
``Unsupported`` for a configuration it does not handle; the pass (``pass_.py``)
imports the families, so they register, and looks every op up in ``LOWERINGS``.
Families import only this module, never the pass: no import cycle.
"""


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
