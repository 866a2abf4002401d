"""Run hostile inputs through the dnnf tools, each run a process of its own (forked by
``forkserver``, as a fresh start would run it), and judge how each ends.

A run is *clean* when it exits 0 (the input happened to be valid), or exits 1 or 2
with its error last on stderr, in one line (``tool: error: ...`` or an MLIR
diagnostic ``file:line:col: error: ...``, or its last note; notices such as an
opset upgrade may come before), and leaves nothing in its output directory or next
to its input. Anything else is a finding: a Python traceback, a crash signal, a
hang (the run outlives ``timeout``), a partial output, an error not in one of the
two forms, or a ``must_fail`` input accepted.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path
from queue import Queue

from .forkserver import ForkServer

# tool -> command for (input file, output directory); which inputs each tool reads.
COMMANDS = {
    "dnnf-translate": lambda src, out: ["dnnf-translate", "--import-onnx", src, "-o", f"{out}/model.mlir"],
    "dnnf-opt": lambda src, out: ["dnnf-opt", src, "-o", f"{out}/model.mlir", "--pass-pipeline=builtin.module("
                                  "ecg-rewrite,ecg-fuse,ecg-outline-kernels,convert-ecg-to-linalg)"],
    "dnnf-run": lambda src, out: ["dnnf-run", src, "--interpret"],
    "dnnf-compile": lambda src, out: ["dnnf-compile", src, "-o", f"{out}/model", "--no-cache", "-q", "--no-profile"],
}
TOOLS_FOR = {".onnx": ("dnnf-translate", "dnnf-run", "dnnf-compile"), ".onnxtxt": ("dnnf-translate", "dnnf-run"),
             ".mlir": ("dnnf-opt", "dnnf-run"), ".mlirbc": ("dnnf-opt", "dnnf-run")}
_ERROR_LINE = re.compile(r"^(dnnf-[a-z]+: error: |.+:\d+:\d+: (error|note|warning): |.+: (error|note): )")
_FINDINGS = ("traceback", "crash", "hang", "partial-output", "unclear-error", "accepted-invalid")


@dataclass
class Outcome:
    case: str
    tool: str
    verdict: str  # "accepted", "clean-error" or one of _FINDINGS
    detail: str = ""


def judge(returncode: int | None, stderr: str, leftovers: list, must_fail: bool) -> tuple:
    """(verdict, detail) of one finished run; ``returncode`` None means it timed out."""
    last = next((line for line in reversed(stderr.splitlines()) if line.strip()), "")
    if returncode is None:
        return "hang", last
    if "Traceback (most recent call last)" in stderr:
        return "traceback", last
    if returncode < 0:
        return "crash", f"signal {signal.Signals(-returncode).name}: {last}"
    if returncode == 0:
        return ("accepted-invalid", "exit 0") if must_fail else ("accepted", "")
    if leftovers:
        return "partial-output", f"left {', '.join(leftovers)}"
    lines = [line for line in stderr.splitlines() if line.strip()]
    if returncode not in (1, 2) or not _ERROR_LINE.match(last):
        return "unclear-error", f"exit {returncode}: {' | '.join(lines)[:300]}"
    return "clean-error", last


@cache
def script_entry(tool: str) -> str:
    """``module:function`` that the console script ``tool`` runs."""
    try:
        return entry_points(group="console_scripts")[tool].value
    except KeyError:
        raise RuntimeError(f"{tool} is not installed in this Python (tools/setup.sh installs it)") from None


def run_one(case, tool: str, root: Path, timeout: float, server: ForkServer) -> Outcome:
    """``tool`` on ``case`` in a scratch directory of its own, its output directory empty."""
    work = Path(tempfile.mkdtemp(prefix=f"{tool}-", dir=root))
    source = work / f"input{case.suffix}"
    source.write_bytes(case.data)
    out = work / "out"
    out.mkdir()
    returncode, stderr = server.run(script_entry(tool), COMMANDS[tool](str(source), str(out)), str(work), timeout)
    leftovers = sorted(p.name for p in out.iterdir()) + sorted(p.name for p in work.iterdir() if p not in (source, out))
    verdict, detail = judge(returncode, stderr, leftovers, case.must_fail)
    shutil.rmtree(work, ignore_errors=True)
    return Outcome(case.name, tool, verdict, detail)


@dataclass
class Summary:
    outcomes: list = field(default_factory=list)

    def counts(self) -> dict:
        """tool -> Counter of verdicts, with "tried"."""
        table = {}
        for outcome in self.outcomes:
            row = table.setdefault(outcome.tool, Counter())
            row["tried"] += 1
            row[outcome.verdict] += 1
        return table

    @property
    def findings(self) -> list:
        return [o for o in self.outcomes if o.verdict in _FINDINGS]

    def report(self) -> str:
        lines = [f"{'tool':<15}{'tried':>7}{'accepted':>10}{'clean err':>11}{'findings':>10}"]
        for tool, row in sorted(self.counts().items()):
            found = sum(row[k] for k in _FINDINGS)
            lines.append(f"{tool:<15}{row['tried']:>7}{row['accepted']:>10}{row['clean-error']:>11}{found:>10}")
        kinds = Counter(o.verdict for o in self.findings)
        lines.append("findings: " + (", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "none"))
        lines += [f"  {o.verdict}: {o.tool} on {o.case}: {o.detail}" for o in self.findings]
        return "\n".join(lines)


def run_campaign(cases, jobs: int = 2, timeout: float = 120.0, tools=None, keep: Path | None = None) -> Summary:
    """Every case through every tool that reads its kind of file (``TOOLS_FOR``), ``jobs``
    runs at a time; the inputs of findings are copied into ``keep``."""
    runs = [(case, tool) for case in cases for tool in TOOLS_FOR[case.suffix] if tools is None or tool in tools]
    with tempfile.TemporaryDirectory(prefix="dnnf-hostile-") as root, ThreadPoolExecutor(jobs) as pool:
        servers = Queue()
        for _ in range(jobs):
            servers.put(ForkServer(tool_environment(Path(root) / "compile-cache")))

        def run(case, tool):
            server = servers.get()
            try:
                return run_one(case, tool, Path(root), timeout, server)
            finally:
                servers.put(server)

        try:
            outcomes = list(pool.map(lambda pair: run(*pair), runs))
        finally:
            for _ in range(jobs):
                servers.get().close()
    summary = Summary(outcomes)
    if keep is not None and summary.findings:
        keep.mkdir(parents=True, exist_ok=True)
        by_name = {case.name: case for case in cases}
        for outcome in summary.findings:
            case = by_name[outcome.case]
            (keep / f"{case.name}{case.suffix}").write_bytes(case.data)
    return summary


def tool_environment(cache_dir: Path) -> dict:
    """The environment of the tools' processes: this checkout's package first on the
    Python path, this Python's scripts first on PATH, a compile cache of their own."""
    env = dict(os.environ, DNNF_CACHE_DIR=str(cache_dir))
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
    env["PATH"] = os.pathsep.join(p for p in (str(Path(sys.executable).parent), env.get("PATH", "")) if p)
    return env
