"""Mapping-type fusion: DNNFusion's planner (Listing 1 over Table 3) and TVM's baseline.

``plan_fusion(function, mode, oracle)`` returns a ``FusionPlan`` (in dnnf mode
Listing 1's blocks, then sibling contractions merged: ``horizontal.py``, then each
attention chain made one block: ``attention.py``), every block within the fusion
limits of the ``target`` the code is for (``constraints.py``); ``outline(plan)``
turns its blocks into ``ecg.fused`` ops; ``fuse_module(module, mode, oracle)`` does
both for every function and returns the statistics report (``stats.fusion_summary``
prints it in one line). The pass is ``ecg-fuse{mode=dnnf|tvm|none target=host}``.
"""

from .oracle import ConservativeOracle, Oracle
from .outline import IR_REMOVABLE, outline
from .pass_ import MODES, fuse_function, fuse_module, plan_fusion
from .plan import Block, FusionPlan
from .stats import fusion_summary, layer_statistics
from .table import Cell, Decision, classify

__all__ = [
    "ConservativeOracle", "Oracle", "IR_REMOVABLE", "outline", "MODES", "fuse_function", "fuse_module",
    "plan_fusion", "Block", "FusionPlan", "fusion_summary", "layer_statistics", "Cell", "Decision", "classify",
]
