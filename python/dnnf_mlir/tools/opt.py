"""dnnf-opt: an mlir-opt for the ECG dialect.

Reads MLIR (a file or stdin), runs a pass pipeline that mixes ECG passes and
upstream MLIR passes, prints the result. Follows mlir-opt's conventions:
``-o``, ``--pass-pipeline``, one flag per pass, ``--split-input-file``,
``--verify-diagnostics``, ``--mlir-print-ir-after-all``.

``--list-rewrite-rules[=FAMILY,...]`` prints the ecg-rewrite rule catalogue
instead: the rule count per family, then each rule with its before and after forms
and its FLOPs before and after on the rule's example instance.
"""

import argparse
import re
import sys

from ..context import make_context
from .._mlir import MLIRError
from ..asm import module_to_bytecode, module_to_text, parse, read_source, write_bytes
from ..lowering import pipeline_text
from ..transforms.pipeline import PipelineError, build_pass_manager
from ..transforms.registry import PASS_TABLE
from .common import LOCATION, ToolError, print_diagnostic, run_tool

SPLIT_MARKER = re.compile(r"^// -----\s*$", re.M)


def _pass_help() -> str:
    lines = ["ECG passes (usable as --NAME[=OPTIONS] or inside --pass-pipeline):"]
    for name, entry in sorted(PASS_TABLE.items()):
        lines.append(f"  --{name:<28} {entry.summary}")
        for option in entry.options:
            default = f"'{option.default}'" if option.default == "" else option.default
            lines.append(f"      {option.name + '=<' + option.type.__name__ + '>':<26} {option.help} (default: {default})")
    lines.append("Any upstream MLIR pass is accepted too, as a flag (--canonicalize) or in --pass-pipeline.")
    return "\n".join(lines)


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dnnf-opt",
        description="Run ECG and MLIR passes over MLIR input.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_pass_help(),
    )
    parser.add_argument("input", nargs="?", default="-", help="input file ('-' for stdin)")
    parser.add_argument("-o", dest="output", default="-", help="output file ('-' for stdout)")
    parser.add_argument("--pass-pipeline", help="textual pipeline, e.g. 'builtin.module(ecg-op-stats,canonicalize)'")
    parser.add_argument(
        "--pass-pipeline-file", metavar="FILE", help="the pipeline of a .pipeline file ('//' comment lines), e.g. lowering/cpu/to-llvm.pipeline"
    )
    parser.add_argument("--split-input-file", action="store_true", help="split the input at '// -----' lines")
    parser.add_argument("--verify-diagnostics", action="store_true", help="check diagnostics against expected-* comments")
    parser.add_argument("--mlir-print-ir-after-all", action="store_true", help="print the IR after every pass (stderr)")
    parser.add_argument("--mlir-print-debuginfo", action="store_true", help="print locations")
    parser.add_argument("--mlir-elide-elementsattrs-if-larger", type=int, help="elide constants above this size")
    parser.add_argument("--emit-bytecode", action="store_true", help="write MLIR bytecode")
    parser.add_argument(
        "--list-rewrite-rules",
        nargs="?",
        const="all",
        metavar="FAMILY",
        help="list the ecg-rewrite rules (of FAMILY: associative, distributive, commutative, strength; "
        "',' separates several) with their FLOPs before -> after on an example, then exit",
    )
    return parser


def list_rewrite_rules(selection: str) -> str:
    """The text ``--list-rewrite-rules[=selection]`` prints: 'family: count' lines and
    'total: N', then one line per rule."""
    from ..rewriting.listing import FAMILIES, family_counts, rule_rows

    families = list(FAMILIES) if selection == "all" else [f.strip() for f in selection.split(",") if f.strip()]
    unknown = [f for f in families if f not in FAMILIES]
    if unknown or not families:
        raise ToolError(
            f"--list-rewrite-rules: unknown rule family '{','.join(unknown) or selection}' "
            f"(families: {', '.join(FAMILIES)})"
        )
    counts = family_counts()
    lines = [f"{family}: {counts[family]}" for family in families]
    lines.append(f"total: {sum(counts[family] for family in families)}")
    rows = rule_rows(set(families))
    width = max((len(row.name) for row in rows), default=0)
    for row in rows:
        lines.append(
            f"{row.family:<12} {row.name:<{width}}  {row.before} -> {row.after}  [FLOPs {row.flops_change}]"
        )
    return "\n".join(lines) + "\n"


def pass_flags_to_pipeline(flags: list) -> str:
    """['--canonicalize', '--ecg-op-stats=output=x'] -> 'canonicalize,ecg-op-stats{output=x}'."""
    elements = []
    for flag in flags:
        if not flag.startswith("-"):
            raise ToolError(f"unexpected argument '{flag}'")
        name, _, options = flag.lstrip("-").partition("=")
        elements.append(f"{name}{{{options}}}" if options else name)
    return ",".join(elements)


# argparse takes an argument holding a space for a positional one, so a pass flag with
# several options (``--canonicalize="max-iterations=5 region-simplify=normal"``, as
# mlir-opt takes them) would be read as the input file: its spaces are held as this
# character through the parse.
HELD_SPACE = "\x00"


def main(argv=None) -> int:
    parser = make_parser()
    argv = sys.argv[1:] if argv is None else argv
    args, pass_flags = parser.parse_known_args(
        [arg.replace(" ", HELD_SPACE) if arg.startswith("--") else arg for arg in argv])
    for name, value in vars(args).items():
        if isinstance(value, str):
            setattr(args, name, value.replace(HELD_SPACE, " "))
    pass_flags = [flag.replace(HELD_SPACE, " ") for flag in pass_flags]
    if args.list_rewrite_rules is not None:
        if pass_flags or args.pass_pipeline:
            raise ToolError("--list-rewrite-rules cannot be combined with passes")
        write_bytes(list_rewrite_rules(args.list_rewrite_rules).encode(), args.output)
        return 0
    if sum(map(bool, (args.pass_pipeline, args.pass_pipeline_file, pass_flags))) > 1:
        raise ToolError("--pass-pipeline, --pass-pipeline-file and individual pass flags are exclusive")
    if args.pass_pipeline_file:
        args.pass_pipeline = pipeline_text(args.pass_pipeline_file)
    pipeline = args.pass_pipeline or pass_flags_to_pipeline(pass_flags)
    source = read_source(args.input)
    filename = "<stdin>" if args.input == "-" else args.input
    if isinstance(source, bytes) or not args.split_input_file:
        chunks = [(0, source)]
    else:
        chunks = _split(source)
    outputs, failed = [], False
    for line_offset, chunk in chunks:
        output, ok = _process(chunk, line_offset, filename, pipeline, args)
        outputs.append(output)
        failed |= not ok
    if failed or args.verify_diagnostics:
        return 1 if failed else 0
    if args.emit_bytecode:
        data = b"".join(outputs)
    else:
        data = "// -----\n".join(outputs).encode()
    write_bytes(data, args.output)
    return 0


def _split(source: str) -> list:
    chunks, line = [], 0
    for piece in SPLIT_MARKER.split(source):
        chunks.append((line, piece))
        line += piece.count("\n")
    return chunks


def _process(chunk, line_offset: int, filename: str, pipeline: str, args) -> tuple:
    """Parse, run and print one input chunk: (output text or bytes, success)."""
    context = make_context()
    diagnostics = []

    def on_diagnostic(diagnostic):
        diagnostics.append(diagnostic)
        return True

    handler = context.attach_diagnostic_handler(on_diagnostic) if args.verify_diagnostics else None
    output = ""
    try:
        module = parse("\n" * line_offset + chunk if isinstance(chunk, str) else chunk, context)
        if pipeline:
            pm = build_pass_manager(pipeline, context)
            if args.mlir_print_ir_after_all:
                pm.enable_ir_printing(print_after_all=True, large_elements_limit=16)
            pm.run(module.operation)
        else:
            module.operation.verify()
        if args.emit_bytecode:
            output = module_to_bytecode(module)
        else:
            output = module_to_text(
                module, debug_info=args.mlir_print_debuginfo, elide_larger=args.mlir_elide_elementsattrs_if_larger
            )
    except MLIRError as error:
        diagnostics += error.error_diagnostics
        if not error.error_diagnostics:
            print(f"{filename}: error: {error.message}", file=sys.stderr)
            return "", False
    except PipelineError as error:
        raise ToolError(str(error)) from None
    finally:
        if handler:
            handler.detach()
    if args.verify_diagnostics:
        reported = [_diagnostic_record(d) for d in diagnostics]
        return "", _verify_expected(chunk if isinstance(chunk, str) else "", line_offset, reported, filename)
    for diagnostic in diagnostics:
        print_diagnostic(diagnostic, filename)
    return output, not diagnostics


def _diagnostic_record(diagnostic) -> tuple:
    match = LOCATION.search(str(diagnostic.location))
    line = int(match.group("line")) if match else 0
    severity = str(diagnostic.severity).rsplit(".", 1)[-1].lower()
    return (line, severity, diagnostic.message)


_EXPECTED = re.compile(r"expected-(error|warning|remark|note)\s*(@(?:[+-]\d+|above|below))?\s*\{\{(.*?)\}\}")


def _verify_expected(chunk: str, line_offset: int, reported: list, filename: str) -> bool:
    """MLIR's --verify-diagnostics: every expected-* comment matched by a diagnostic and vice versa."""
    expected = []
    for index, line in enumerate(chunk.split("\n")):
        for match in _EXPECTED.finditer(line):
            severity, offset, message = match.groups()
            target = line_offset + index + 1
            if offset in ("@above",):
                target -= 1
            elif offset in ("@below",):
                target += 1
            elif offset:
                target += int(offset[1:])
            expected.append([target, severity, message, False])
    ok = True
    for line, severity, message in reported:
        for item in expected:
            if not item[3] and item[0] == line and item[1] == severity and item[2] in message:
                item[3] = True
                break
        else:
            print(f"{filename}:{line}: error: unexpected {severity}: {message}", file=sys.stderr)
            ok = False
    for line, severity, message, seen in expected:
        if not seen:
            print(f"{filename}:{line}: error: expected {severity} \"{message}\" was not produced", file=sys.stderr)
            ok = False
    return ok


def entry():
    run_tool("dnnf-opt", main)


if __name__ == "__main__":
    entry()
