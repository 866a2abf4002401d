"""Checking what ``InferenceSession.run`` is fed, before any of it reaches C.

The compiled code trusts its buffers: sizes, element types and layout are fixed when
it is compiled. So every feed is checked against the model's declared inputs here,
and a mistake is an ``InvalidArgument`` naming the input and what it should be:
an unknown or missing name, another element type, another rank, a fixed dimension
of another size, or one symbolic dimension given two sizes (``sequence`` of
``input_ids`` and ``attention_mask``). Arrays that are not C-contiguous or aligned
are copied; read-only ones are fine as they are (the code never writes its inputs).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


class InvalidArgument(ValueError):
    """A feed or output name that does not fit the model; the message says what it expected."""


def _names(args) -> str:
    return ", ".join(f"'{a.name}'" for a in args)


def _described(arg) -> str:
    shape = "any shape" if not arg.ranked else "[" + ", ".join(repr(d) if d is not None else "?" for d in arg.shape) + "]"
    return f"{arg.type} {shape}"


def check_feeds(inputs: list, feeds) -> tuple:
    """``(arrays, shapes)``: the feeds in the order of ``inputs`` (``NodeArg``), ready for
    the C entry point, and the shape of each by name."""
    if not isinstance(feeds, Mapping):
        raise InvalidArgument(f"feeds must map input names to arrays, got {type(feeds).__name__}")
    unknown = [name for name in feeds if name not in {a.name for a in inputs}]
    if unknown:
        raise InvalidArgument(f"the model has no input '{unknown[0]}'; its inputs are {_names(inputs)}")
    missing = [a for a in inputs if a.name not in feeds]
    if missing:
        raise InvalidArgument(f"input '{missing[0].name}' is missing from the feeds: expected {_described(missing[0])}")
    arrays, shapes, symbols = [], {}, {}
    for arg in inputs:
        array = np.asarray(feeds[arg.name])
        if array.dtype != arg.dtype:
            raise InvalidArgument(f"input '{arg.name}' must be {arg.type} ({arg.dtype.name}), got {array.dtype.name}")
        if arg.ranked and array.ndim != len(arg.shape):
            raise InvalidArgument(f"input '{arg.name}' must have rank {len(arg.shape)} ({_described(arg)}), "
                                  f"got shape {list(array.shape)}")
        for axis, (want, got) in enumerate(zip(arg.shape, array.shape) if arg.ranked else ()):
            if isinstance(want, int) and want != got:
                raise InvalidArgument(f"input '{arg.name}' axis {axis} must be {want} ({_described(arg)}), "
                                      f"got shape {list(array.shape)}")
            if isinstance(want, str):
                seen = symbols.setdefault(want, (got, arg.name))
                if seen[0] != got:
                    raise InvalidArgument(f"input '{arg.name}' axis {axis} is {got}, but dimension '{want}' "
                                          f"is {seen[0]} in input '{seen[1]}'")
        arrays.append(np.require(array, requirements=["C", "A"]))
        shapes[arg.name] = tuple(int(d) for d in array.shape)
    return arrays, shapes


def output_indices(outputs: list, names) -> list:
    """Positions of the asked outputs among ``outputs`` (``NodeArg``); all for None."""
    if names is None:
        return list(range(len(outputs)))
    position = {a.name: i for i, a in enumerate(outputs)}
    for name in names:
        if name not in position:
            raise InvalidArgument(f"the model has no output '{name}'; its outputs are {_names(outputs)}")
    return [position[name] for name in names]


__all__ = ["InvalidArgument", "check_feeds", "output_indices"]
