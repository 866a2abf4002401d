"""The kernel plan: which schedule each linalg op of a module gets.

Words as the code uses them: a *kernel* is what runs as one unit, one kernel function
(an ``ecg.fused`` block or an unfused ECG op, made a function by
``ecg-outline-kernels``); a *schedule* is how one linalg op inside it is tiled,
packed and vectorized; an *entry point* is a C function of a compiled library
(``dnnf_load``, ``dnnf_run``). A schedule writer (a backend's, e.g. ``cpu/``) tags the
op it schedules (``new_tag``), appends its transforms to the one ``Script`` of the
module, and records what it decided as an ``OpSchedule`` (reported by ``lower`` and
``python -m dnnf_mlir.codegen --emit=schedules``). ``Planner`` holds that state and
the steps several schedules share, whatever the target; a backend may extend it
(``cpu/cpu_planner.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .._mlir import ir
from .linalg_queries import accumulator_fill
from .transform_script import TAG, Script


@dataclass
class OpSchedule:
    """What was decided for one tagged op (reported by ``plan`` for inspection)."""

    tag: str
    op: str
    shape: tuple
    strategy: str
    details: dict = field(default_factory=dict)
    function: str = ""  # the kernel function holding the op (set by the target's plan)


class Planner:
    """The script being written for one module, the schedules decided so far, the target."""

    def __init__(self, target, threads: int):
        self.target = target
        self.threads = max(1, int(threads))
        self.script = Script()
        self.schedules: list[OpSchedule] = []
        self.strategies: dict = {}
        self._next = 0
        self._tagged: dict = {}  # op -> its tag
        self._isolated: set = set()  # producers materialized by ``isolate_operands``

    def add_schedule(self, schedule: OpSchedule):
        """Record what was decided for one op (its strategy is what later ops see of it)."""
        self.schedules.append(schedule)
        self.strategies[schedule.tag] = schedule.strategy

    def new_tag(self, op) -> str:
        """Tag ``op`` for ``Script.match``: ``k0``, ``k1``, ... in program order. An op
        tagged before keeps its tag (a loop that ops are fused into before their own
        schedules run, ``cpu/attention.py``, matches them by it too)."""
        if op in self._tagged:
            return self._tagged[op]
        tag = f"k{self._next}"
        self._next += 1
        op.attributes[TAG] = ir.StringAttr.get(tag)
        self._tagged[op] = tag
        return tag

    def isolate_operands(self, op, handle: str, operands):
        """Keep ``structured.fuse`` from fusing (and recomputing per tile) the producers
        of these operands: a tensor.pad, or a linalg op that was not tiled before, is
        materialized in a buffer of its own first, once when several ops read it (two
        convolutions of one padded input). Returns (handle to ``op``, whether anything
        was materialized)."""
        s = self.script
        changed = False
        for index in operands:
            value = op.operands[index]
            producer = value.owner if isinstance(value, ir.OpResult) else None
            if producer is None or producer in self._isolated:
                continue
            name = producer.name
            strategy = self.strategies.get(ir.StringAttr(producer.attributes[TAG]).value) if TAG in producer.attributes else None
            tiled = strategy not in (None, "loops")
            if name == "tensor.pad" or (name.startswith("linalg.") and name != "linalg.fill" and not tiled):
                s.bufferize_to_allocation(s.producer_of(handle, index))
                self._isolated.add(producer)
                handle = s.match([op.name], tag=ir.StringAttr(op.attributes[TAG]).value)
                changed = True
        return handle, changed

    def contraction_root(self, op, handle: str, epilogue, details: dict):
        """(tiling root, accumulator fill, epilogue tag) of the contraction ``op``
        (``handle``): its element-wise ``epilogue``, tagged and recorded in ``details``,
        when it has one, else the op itself; the handle of the ``linalg.fill`` that
        initializes its accumulator, if one does (fused into its tiles)."""
        s = self.script
        fill = s.producer_of(handle, 2) if accumulator_fill(op) is not None else None
        if epilogue is None:
            return handle, fill, None
        tag = self.new_tag(epilogue)
        details["epilogue"] = tag
        self.strategies[tag] = "epilogue"
        return s.match([epilogue.name], tag=tag), fill, tag

    def vectorize_fills(self, fills):
        """Vectorize the (static, register-tile sized) fills fused into micro-kernels."""
        s = self.script
        arg = s.begin_suppressed(fills)
        s.vectorize(arg)
        s.end_nested()


__all__ = ["OpSchedule", "Planner"]
