"""ECG passes. ``PASSES`` maps each pass argument to its class, importing the class
on first use; ``registry.PASS_TABLE`` lists every pass and where it is implemented.

A pass is usable from Python (``OpStatsPass(output="-")(module)``) and from
``dnnf-opt`` (``--ecg-op-stats=output=-`` or inside ``--pass-pipeline``).
"""

from .pass_base import ModulePass, Option, PassError
from .registry import PASSES

__all__ = ["ModulePass", "Option", "PassError", "PASSES"]
