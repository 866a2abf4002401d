"""ECG passes. ``PASSES`` maps each pass argument to its class.

A pass is usable from Python (``OpStatsPass(output="-")(module)``) and from
``dnnf-opt`` (``--ecg-op-stats=output=-`` or inside ``--pass-pipeline``).
"""

from .pass_base import ModulePass, Option, PassError, PASSES
from . import op_stats  # noqa: F401  (registers the pass)
from ..conversion import ecg_to_linalg  # noqa: F401,E402  (registers convert-ecg-to-linalg)
from ..codegen import lower_pass  # noqa: F401,E402  (registers dnnf-lower-to-llvm)
from ..rewriting import pass_  # noqa: F401,E402  (registers ecg-rewrite)
from ..compiler import weights  # noqa: F401,E402  (registers dnnf-externalize-weights)

__all__ = ["ModulePass", "Option", "PassError", "PASSES"]
