"""ecg-op-stats: report each function's ops by mapping type, FLOPs and result bytes."""

import json
import sys

from ..asm import write_bytes
from ..statistics import module_statistics
from .pass_base import ModulePass
from .registry import described_by_table


@described_by_table
class OpStatsPass(ModulePass):
    """Writes a JSON report (per function and total) without changing the IR."""

    NAME = "ecg-op-stats"

    def run(self, module):
        report = {name: stats.to_json() for name, stats in module_statistics(module).items()}
        text = json.dumps(report, indent=2) + "\n"
        if self.options["output"] == "-":
            sys.stderr.write(text)
        else:
            write_bytes(text.encode(), self.options["output"])
