"""The ``ecg`` dialect module the bindings import when they wrap an ecg op.

The bindings look for ``<search prefix>.<dialect namespace>`` before wrapping an op
in its OpView class; they retry a module they cannot find on every wrap, which made
each ``value.owner`` cost an import attempt (17 us, 40 times the wrap itself). The
op classes register themselves when ``dnnf_mlir.ecg`` is imported.
"""

from ..ecg import *  # noqa: F401,F403
