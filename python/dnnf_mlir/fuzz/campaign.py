"""A fuzzing campaign: N graphs over worker processes, with a progress bar and a summary.

Each worker runs the Hypothesis property "every batch of graphs checks clean" in
rounds of ``ROUND`` batches, each round with its own seed. The first failure of a
kind it has not seen is shrunk by Hypothesis (whose list shrinking also drops the
batch's innocent graphs) and the failing graph is saved as ``<kind>-<digest>.onnx``
in the output directory, a complete reproducer (``python -m dnnf_mlir.fuzz replay``);
further failures of a kind already seen are counted, and the first few saved
unshrunk. Unsupported ops and variants (a clean refusal of the code generator) are
counted, never saved. The graphs are checked on the host (``differential``) or on a
GPU target (``gpu``).

A worker that dies (a crash in compiled code or in MLIR) or stops reporting for
``HANG_SECONDS`` is replaced; the batch it was checking, which it wrote down before
starting, is replayed one graph per subprocess to find the graph that crashes.
"""

from __future__ import annotations

import collections
import hashlib
import multiprocessing
import os
import pickle
import queue
import subprocess
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, seed, settings

from .gpu import check_cases_on
from .graph import Case
from .strategies import batches

ROUND = 25  # batches per Hypothesis run
BATCH = 12  # graphs per batch at most (one module, one JIT compilation)
GPU_BATCH = 1  # on a GPU target each graph is compiled alone: shrinking starts from the failing one
HANG_SECONDS = 600  # a batch, or the shrinking of a failure, that takes longer is a hang
UNSHRUNK_SAVED = 3  # failures of a kind already seen that are still saved (unshrunk)


class Found(Exception):
    """Raised by the property on a failure of the kind being shrunk."""


def save_case(case: Case, directory: Path, kind: str) -> Path:
    data = case.to_bytes()
    slug = "".join(c if c.isalnum() else "-" for c in kind).strip("-")[:60]
    path = Path(directory) / f"{slug}-{hashlib.sha256(data).hexdigest()[:10]}.onnx"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


class Worker:
    """One worker process: rounds of the property until ``done`` reaches ``total``."""

    def __init__(self, index: int, base_seed: int, total, done, messages, outdir: Path, families: tuple, target: str):
        self.index, self.base_seed, self.total, self.done = index, base_seed, total, done
        self.families, self.compile_target = families, target
        self.messages, self.outdir = messages, outdir
        self.inflight = outdir / f"inflight-{index}.pickle"
        self.known = collections.Counter()  # signature -> graphs failing so
        self.target = None  # the signature being shrunk
        self.smallest = None  # (case, failure) of the last failing example of the target

    def run(self):
        round_ = 0
        while self.done.value < self.total:
            self.target = None
            settings_ = settings(max_examples=ROUND, database=None, deadline=None, derandomize=False,
                                 suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
                                 phases=(Phase.generate, Phase.shrink))
            size = BATCH if self.compile_target == "host" else GPU_BATCH
            test = seed(hash((self.base_seed, self.index, round_)) % 2**32)(settings_(given(batches(size, families=self.families))(self.check)))
            try:
                test()
            except Exception as error:  # Found, once shrunk; or Hypothesis saying the failure was flaky
                if self.smallest is None:
                    raise
                case, failure = self.smallest
                note = "" if isinstance(error, Found) else f" ({type(error).__name__} while shrinking)"
                path = save_case(case, self.outdir, failure.signature)
                self.messages.put(("saved", self.index, failure.signature, str(path), failure.detail + note))
                self.smallest = None
            round_ += 1
        self.messages.put(("exit", self.index))

    def check(self, cases: list) -> None:
        if self.done.value >= self.total and self.target is None:
            return
        self.inflight.write_bytes(pickle.dumps([c.to_bytes() for c in cases]))
        cpu = time.process_time()
        failures = check_cases_on(self.compile_target, cases)
        cpu = time.process_time() - cpu
        self.inflight.unlink()
        if self.target is not None:  # shrinking: the target failure must remain
            for failure in failures:
                if failure.signature == self.target:
                    self.smallest = (cases[failure.case], failure)
                    raise Found(self.target)
            return
        with self.done.get_lock():
            self.done.value += len(cases)
        ops = collections.Counter(op for case in cases for op in case.op_types())
        outcomes = sorted({(f.case, f.kind, f.signature) for f in failures})
        self.messages.put(("batch", self.index, len(cases), ops, [(kind, signature) for _, kind, signature in outcomes], cpu))
        for index, kind, signature in outcomes:
            if kind == "unsupported":
                continue
            self.known[signature] += 1
            if self.known[signature] == 1:
                self.target = signature
                self.smallest = (cases[index], next(f for f in failures if f.signature == signature))
                raise Found(signature)
            if self.known[signature] <= UNSHRUNK_SAVED:
                path = save_case(cases[index], self.outdir / "unshrunk", signature)
                self.messages.put(("saved", self.index, signature, str(path), "unshrunk"))


def worker_main(index, base_seed, total, done, messages, outdir, families, target):
    Worker(index, base_seed, total, done, messages, Path(outdir), families, target).run()


def replay_alone(path: Path, timeout: float, target: str = "host") -> str:
    """'' if the graph in ``path`` checks clean on ``target`` in a subprocess, else how it ended."""
    try:
        result = subprocess.run([sys.executable, "-m", "dnnf_mlir.fuzz", "replay", "--target", target, str(path)],
                                capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "hang"
    if result.returncode < 0:
        return f"crash (signal {-result.returncode})"
    return "" if result.returncode == 0 else (result.stdout.strip().splitlines() or ["failed"])[-1]


class Campaign:
    """The parent: starts the workers, draws the progress bar, handles dead workers,
    and keeps the tallies of the summary."""

    def __init__(self, total: int, workers: int, base_seed: int, outdir: Path, families: tuple = (), target: str = "host"):
        self.total, self.workers, self.base_seed, self.outdir = total, workers, base_seed, Path(outdir)
        self.families, self.target = tuple(families), target
        self.cpu_seconds = 0.0  # the workers' CPU time in checks (their share of a shared machine aside)
        self.ops = collections.Counter()
        self.failures = collections.Counter()  # signature -> graphs
        self.unsupported = collections.Counter()
        self.saved = []  # (signature, path, detail)
        self.batches = 0

    def run(self) -> dict:
        from tqdm import tqdm

        self.outdir.mkdir(parents=True, exist_ok=True)
        context = multiprocessing.get_context("spawn")
        done, messages = context.Value("q", 0), context.Queue()
        processes, heard, generation = {}, {}, 0

        def start(index):
            nonlocal generation
            generation += 1
            args = (index, self.base_seed + 1000 * generation, self.total, done, messages, str(self.outdir), self.families, self.target)
            processes[index] = context.Process(target=worker_main, args=args, daemon=True)
            processes[index].start()
            heard[index] = time.monotonic()

        self.done = done
        started = time.monotonic()
        for index in range(self.workers):
            start(index)
        with tqdm(total=self.total, unit="graph", smoothing=0.05) as bar:
            while processes:
                try:
                    while True:  # every message there is, before looking for silent workers
                        message = messages.get(timeout=5)
                        heard[message[1]] = time.monotonic()
                        self.receive(message, bar, processes)
                        if messages.empty():
                            break
                except queue.Empty:
                    pass
                for index, process in list(processes.items()):
                    hung = time.monotonic() - heard[index] > HANG_SECONDS
                    if process.is_alive() and not hung:
                        continue
                    if hung:
                        process.kill()
                    process.join()
                    del processes[index]
                    if process.exitcode != 0 or hung:
                        self.died(index, "hang" if hung else f"exit code {process.exitcode}")
                        heard.update(dict.fromkeys(heard, time.monotonic()))  # died() took that long, not they
                        if done.value < self.total:
                            start(index)
        return self.summary(time.monotonic() - started)

    def receive(self, message, bar, processes) -> None:
        kind, index = message[:2]
        if kind == "batch":
            count, ops, outcomes, cpu = message[2:]
            self.batches += 1
            self.cpu_seconds += cpu
            self.ops.update(ops)
            for outcome, signature in outcomes:
                (self.unsupported if outcome == "unsupported" else self.failures)[signature] += 1
            bar.update(count)
            bar.set_postfix(failures=sum(self.failures.values()), unsupported=sum(self.unsupported.values()))
        elif kind == "saved":
            self.saved.append(message[2:])
            bar.write(f"worker {index}: {message[2]}: {message[4]}\n  saved {message[3]}")
        elif kind == "exit":
            processes[index].join()

    def died(self, index: int, how: str) -> None:
        """Replay the batch of a worker that died, one graph at a time, and save the culprits."""
        inflight = self.outdir / f"inflight-{index}.pickle"
        if not inflight.exists():
            self.failures[f"worker died ({how}) outside a batch"] += 1
            return
        cases = [Case.from_bytes(data) for data in pickle.loads(inflight.read_bytes())]
        inflight.unlink()
        for case in cases:
            path = save_case(case, self.outdir / "suspects", "suspect")
            outcome = replay_alone(path, HANG_SECONDS, self.target)
            if outcome.startswith(("crash", "hang")):
                signature = f"{outcome.split(' ')[0]} of a worker"
                self.failures[signature] += 1
                self.saved.append((signature, str(save_case(case, self.outdir, signature)), outcome))
            os.unlink(path)

    def summary(self, seconds: float) -> dict:
        return {
            "target": self.target, "graphs": self.done.value, "batches": self.batches, "seconds": round(seconds, 1),
            "graphs_per_second": round(self.done.value / max(seconds, 1e-9), 2),
            "cpu_seconds_per_graph": round(self.cpu_seconds / max(self.done.value, 1), 3),
            "ops": dict(self.ops.most_common()), "failures": dict(self.failures.most_common()),
            "unsupported": dict(self.unsupported.most_common()),
            "saved": [{"signature": s, "path": p, "detail": d} for s, p, d in self.saved],
        }


def format_summary(summary: dict) -> str:
    lines = [f"{summary['target']}: {summary['graphs']} graphs in {summary['batches']} batches, {summary['seconds']:.0f} s "
             f"({summary['graphs_per_second']:.2f} graphs/s; {summary['cpu_seconds_per_graph']:.3f} CPU s per graph: "
             f"10,000 graphs take {summary['cpu_seconds_per_graph'] * 10000 / 2 / 60:.0f} min on 2 idle vCPUs)",
             f"ops covered ({len(summary['ops'])}): " + ", ".join(f"{op} {n}" for op, n in summary["ops"].items())]
    for title, key in (("failures", "failures"), ("unsupported (clean refusals, not failures)", "unsupported")):
        lines.append(f"{title}: {sum(summary[key].values())} graphs" + (":" if summary[key] else ""))
        lines += [f"  {n:6d}  {signature}" for signature, n in summary[key].items()]
    if summary["saved"]:
        lines.append("saved:")
        lines += [f"  {s['path']}  ({s['signature']})" for s in summary["saved"]]
    return "\n".join(lines)


def run_campaign(total: int, workers: int = 2, base_seed: int = 0, outdir="build/fuzz", families=(),
                 target: str = "host") -> dict:
    """Check ``total`` graphs on ``target`` (``gpu.TARGETS``) over ``workers`` processes
    (of ``families`` only, if given); the summary (``format_summary`` prints it)."""
    return Campaign(total, workers, base_seed, Path(outdir), families, target).run()


__all__ = ["BATCH", "Campaign", "GPU_BATCH", "ROUND", "format_summary", "replay_alone", "run_campaign", "save_case"]
