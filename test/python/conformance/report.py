"""Print ONNX backend conformance counts for DnnfBackend.

    python test/python/conformance/report.py [--cases] [--filter SUBSTRING]

Runs every covered node test case in-process exactly as ``test_onnx_backend.py``
does and prints passed / failed / excluded / not covered, a table per covered
ONNX operator (cases whose graph uses it), the exclusions with their reasons and
the uncovered cases grouped by the operator they lack; then the same counts for
each set of small real models (``model_cases.py``).
"""

import argparse
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import model_cases  # noqa: E402
import node_cases  # noqa: E402
from dnnf_mlir.frontend.onnx_converters import CONVERTERS  # noqa: E402
from dnnf_mlir.frontend.onnx_importer import OnnxImportError  # noqa: E402


def _first_line(error: Exception) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return f"{type(error).__name__}: {' | '.join(lines[:3])}"[:240]


def run(filter_text: str = "") -> dict:
    """name -> (status, ops, detail); status: passed, failed, excluded, stale-exclusion (an excluded case
    the importer accepts: a failure), deviation (matches onnxruntime, see ``DEVIATIONS``) or uncovered."""
    results = {}
    for name, (kind, case, detail) in sorted(node_cases.classify().items()):
        if filter_text not in name:
            continue
        ops = node_cases.op_types(case.model)
        if kind == "uncovered":
            results[name] = ("uncovered", ops, detail)
            continue
        try:
            node_cases.run_case(case, against_onnxruntime=kind == "deviation")
        except OnnxImportError as error:
            results[name] = ("excluded", ops, detail) if kind == "excluded" else ("failed", ops, _first_line(error))
            continue
        except Exception as error:  # noqa: BLE001 (a mismatch or a crash: both are failures)
            results[name] = ("failed", ops, _first_line(error))
            continue
        results[name] = {"excluded": ("stale-exclusion", ops, detail), "deviation": ("deviation", ops, detail),
                         "looser": ("passed", ops, detail)}.get(kind, ("passed", ops, None))
    return results


def run_models(filter_text: str = "") -> dict:
    """set -> {name: (status, reason or error)}: passed, failed, excluded or stale-exclusion."""
    results = {}
    for kind in model_cases.SETS:
        results[kind] = {}
        for name, (status, case, reason) in sorted(model_cases.classify(kind).items()):
            if filter_text not in name:
                continue
            try:
                node_cases.run_case(case)
            except Exception as error:  # noqa: BLE001 (an import error, a mismatch or a crash)
                rejected = status == "excluded" and isinstance(error, OnnxImportError)
                results[kind][name] = ("excluded", reason) if rejected else ("failed", _first_line(error))
                continue
            results[kind][name] = ("stale-exclusion", reason) if status == "excluded" else ("passed", None)
    return results


def print_models(results: dict, cases: bool) -> bool:
    """Print the counts per set and each exclusion; True when a case failed."""
    bad = False
    for kind, cases_of_set in results.items():
        counts = Counter(status for status, _ in cases_of_set.values())
        print(f"\n{kind}: {len(cases_of_set)} models, {counts['passed']} passed, "
              f"{counts['failed'] + counts['stale-exclusion']} failed, {counts['excluded']} excluded")
        for pattern, reason in model_cases.EXCLUDED.items():
            hits = sum(1 for status, r in cases_of_set.values() if status == "excluded" and r == reason)
            if hits:
                print(f"  {hits:>4}  {pattern}: {reason}")
        for name, (status, detail) in cases_of_set.items():
            if status in ("failed", "stale-exclusion"):
                bad = True
                if cases:
                    print(f"  {status}: {name}: {detail}")
    return bad


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", action="store_true", help="also list every failed case with its error")
    parser.add_argument("--filter", default="", help="only cases whose name contains this")
    args = parser.parse_args(argv)

    start = time.time()
    results = run(args.filter)
    elapsed = time.time() - start
    counts = Counter(status for status, _, _ in results.values())
    cases = node_cases.classify()
    bound = sum(1 for n, (s, _, _) in results.items() if s == "passed" and node_cases.constant_inputs(cases[n][1].model))

    per_op = defaultdict(Counter)
    for status, ops, _ in results.values():
        if status != "uncovered":
            for op in ops:
                per_op[op][status] += 1
    print(f"{'covered ONNX op':<24}{'cases':>7}{'passed':>8}{'failed':>8}{'excluded':>10}{'deviation':>11}")
    for op in sorted(CONVERTERS):
        c = per_op.get(op, Counter())
        failed = c["failed"] + c["stale-exclusion"]
        print(f"{op:<24}{sum(c.values()):>7}{c['passed']:>8}{failed:>8}{c['excluded']:>10}{c['deviation']:>11}")

    missing = Counter()
    for status, _, detail in results.values():
        if status == "uncovered":
            missing.update(detail)
    print("\nnot covered (cases per missing op type; a case may lack several):")
    print("  " + ", ".join(f"{op} {n}" for op, n in sorted(missing.items(), key=lambda item: (-item[1], item[0]))))

    print("\nexclusions:")
    for pattern, reason in node_cases.EXCLUDED.items():
        hits = [n for n, (s, _, _) in results.items() if s in ("excluded", "stale-exclusion") and node_cases.excluded_reason(n) == reason]
        print(f"  {len(hits):>4}  {pattern}: {reason}")
    for pattern, (atol, reason) in node_cases.LOOSER_ATOL.items():
        hits = [n for n, (s, _, d) in results.items() if s == "passed" and d == reason]
        print(f"  {len(hits):>4}  {pattern}: passed with atol {atol:g}: {reason}")
    for pattern, reason in node_cases.DEVIATIONS.items():
        hits = [n for n, (s, _, _) in results.items() if s == "deviation" and node_cases.excluded_reason(n, node_cases.DEVIATIONS) == reason]
        print(f"  {len(hits):>4}  {pattern}: checked against onnxruntime: {reason}")

    bad = {n: d for n, (s, _, d) in results.items() if s in ("failed", "stale-exclusion")}
    if bad and args.cases:
        print("\nfailed:")
        for name, detail in bad.items():
            print(f"  {name}: {detail}")

    total = len(results)
    print(
        f"\nONNX {__import__('onnx').__version__} node tests: {total} cases, {len(CONVERTERS)} covered op types\n"
        f"  passed       {counts['passed']:>5}  ({bound} with shape-like graph inputs bound as constants)\n"
        f"  failed       {counts['failed'] + counts['stale-exclusion']:>5}"
        + (f"  ({counts['stale-exclusion']} excluded but no longer rejected)" if counts["stale-exclusion"] else "")
        + f"\n  excluded     {counts['excluded']:>5}"
        + (f"  (+{counts['deviation']} matching onnxruntime, not ONNX's reference)" if counts["deviation"] else "")
        + "\n"
        f"  not covered  {counts['uncovered']:>5}\n"
        f"  ({elapsed:.0f} s)"
    )
    models_bad = print_models(run_models(args.filter), args.cases)
    return 1 if bad or models_bad else 0


if __name__ == "__main__":
    sys.exit(main())
