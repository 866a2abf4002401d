"""Which scheme ``dnnf-winograd`` (mode auto) gives a convolution: the one ``dnnf-tune``
measured faster on this CPU and thread count when the profiling database holds it,
else the rule of ``winograd_cost.py``.

A measurement is found by the convolution's signature (``convolution_signature``): the
shapes of its padded input, filters and output, and the ops around it in its kernel --
what initializes the accumulator (a bias broadcast or zeros) and the element-wise
chain after it (ReLU, a residual add), which the two schemes apply differently.
dnnf-tune computes it on the same linalg form, so a compile and a tuning run agree on
the key.
"""

from __future__ import annotations

from .._mlir import ir
from ..fusion.profile_db import ProfileDatabase, SchemeKey
from .linalg_queries import elementwise_consumer, static_tensor_type
from .winograd_cost import prefers_winograd


def _kind(op) -> str:
    """An op's name; for a ``linalg.generic`` the ops of its body (what it computes)."""
    if op.name != "linalg.generic":
        return op.name
    body = [o.name for o in op.regions[0].blocks[0].operations if o.name != "linalg.yield"]
    return "generic(" + ",".join(body) + ")"


def _epilogue(conv) -> list:
    """The kinds of the chain of element-wise ops after ``conv`` that its output tile
    can apply (``elementwise_consumer``: a bias, ReLU, a residual add)."""
    kinds, op = [], elementwise_consumer(conv)
    while op is not None:
        kinds.append(_kind(op))
        op = elementwise_consumer(op)
    return kinds


def convolution_signature(conv) -> str:
    """``1x64x58x58 * 64x64x3x3 -> 1x64x56x56; init generic(); epilogue generic(arith.maximumf)``:
    what a scheme's time depends on, read from the linalg convolution ``conv``."""
    x, w, y = (static_tensor_type(v) for v in (conv.operands[0], conv.operands[1], conv.results[0]))
    shapes = " * ".join("x".join(map(str, t.shape)) for t in (x, w))
    init = conv.operands[2]
    init_kind = _kind(init.owner) if isinstance(init, ir.OpResult) else "argument"
    with conv.context:  # the epilogue's maps are built in it
        epilogue = " ".join(_epilogue(conv)) or "none"
    return f"{shapes} -> {'x'.join(map(str, y.shape))}; init {init_kind}; epilogue {epilogue}"


class SchemeChooser:
    """Decides Winograd or direct per convolution, counting which source decided."""

    def __init__(self, database: ProfileDatabase | None, target: str, cpu: str, threads: int):
        self.database, self.target, self.cpu, self.threads = database, target, cpu, threads
        self.decided_by = {"measurement": 0, "rule": 0}

    def winograd(self, conv) -> bool:
        """Whether ``conv`` (a 3x3 stride-1 ``linalg.conv_2d_nchw_fchw``) is to be Winograd."""
        if self.database is not None:
            key = SchemeKey(convolution_signature(conv), self.target, self.cpu, self.threads)
            timing = self.database.lookup_scheme(key)
            if timing is not None:
                self.decided_by["measurement"] += 1
                return timing.winograd
        self.decided_by["rule"] += 1
        x_t, out_t = static_tensor_type(conv.operands[0]), static_tensor_type(conv.results[0])
        n, c = x_t.shape[:2]
        k, oh, ow = out_t.shape[1:]
        return prefers_winograd(n, c, k, oh, ow, self.threads)


__all__ = ["SchemeChooser", "convolution_signature"]
