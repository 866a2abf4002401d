"""The pass registry (``dnnf_mlir.transforms.registry``): its table lists every pass,
each entry matches its class, and ``dnnf-opt --help`` lists them all without
importing the conversion or the code generator."""

import importlib
import json
import subprocess
import sys
from pathlib import Path

from dnnf_mlir.transforms import PASSES, ModulePass
from dnnf_mlir.transforms.registry import PASS_TABLE

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "dnnf_mlir"

# dnnf-opt --help through its console-script entry point, in a fresh interpreter.
HELP_SCRIPT = """
import contextlib, io, json, sys
from dnnf_mlir.tools import opt
sys.argv = ["dnnf-opt", "--help"]
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        opt.entry()
    except SystemExit:
        pass
loaded = sorted(m for m in sys.modules if m.startswith(("dnnf_mlir.codegen", "dnnf_mlir.conversion")))
print(json.dumps({"help": out.getvalue(), "loaded": loaded}))
"""


def all_subclasses(cls) -> list:
    return [c for sub in cls.__subclasses__() for c in (sub, *all_subclasses(sub))]


def test_every_entry_loads_its_class():
    for name in PASS_TABLE:
        cls = PASSES[name]  # RegistryError when NAME, SUMMARY or OPTIONS differ from the entry
        assert issubclass(cls, ModulePass) and cls.NAME == name


def test_every_pass_is_in_the_table():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] != "__main__":
            importlib.import_module(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    passes = {cls.NAME: cls for cls in all_subclasses(ModulePass) if cls.NAME}
    assert sorted(passes) == sorted(PASS_TABLE), "a ModulePass with a NAME is missing from PASS_TABLE (or vice versa)"
    assert all(PASSES[name] is cls for name, cls in passes.items())


def test_help_lists_every_pass_without_importing_them():
    result = subprocess.run([sys.executable, "-c", HELP_SCRIPT], capture_output=True, text=True, check=True)
    report = json.loads(result.stdout)
    for name, entry in PASS_TABLE.items():
        assert f"  --{name:<28} {entry.summary}\n" in report["help"]
        for option in entry.options:
            assert f"      {option.name}=<{option.type.__name__}>" in report["help"]
    assert report["loaded"] == [], "dnnf-opt --help imported the conversion or the code generator"
