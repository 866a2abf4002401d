"""lit configuration for the dnnf-mlir regression suite (run: lit test/)."""

import os
import shutil
import sys

import lit.formats

config.name = "dnnf-mlir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".onnxtxt", ".py", ".test"]
# test/python is the pytest suite; lit runs everything else.
config.excludes = ["Inputs", "lit.cfg.py", "python"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.test_source_root, "..", "build", "lit")

bin_dir = os.path.dirname(sys.executable)
config.environment["PATH"] = os.pathsep.join([bin_dir, config.environment.get("PATH", os.environ["PATH"])])
# The compiler's own settings reach the tests, e.g. DNNF_CPU=x86-64-v3 for the pinned
# run of tools/run_tests.sh (tests that check instructions name their CPU themselves).
config.environment.update({k: v for k, v in os.environ.items() if k.startswith("DNNF_")})
# Compiles measure fusion candidates into a profiling database of the test run's own,
# not the user's (its answers do not depend on what the user compiled before).
config.environment["DNNF_PROFILE_DB"] = os.path.join(config.test_exec_root, "fusion-profile.sqlite3")
# Likewise a compile cache of its own, emptied for every run: each run compiles afresh.
config.environment["DNNF_CACHE_DIR"] = os.path.join(config.test_exec_root, "compile-cache")
shutil.rmtree(config.environment["DNNF_CACHE_DIR"], ignore_errors=True)
# A checkout tested with another checkout's .venv puts its python/ first on PYTHONPATH.
if "PYTHONPATH" in os.environ:
    config.environment["PYTHONPATH"] = os.environ["PYTHONPATH"]
config.substitutions.append(("%PYTHON", sys.executable))
# The declarative half of lowering (pipelines, transform libraries) that the compiler reads.
config.substitutions.append(("%lowering", os.path.join(os.path.dirname(__file__), "..", "lowering")))
filecheck = shutil.which("FileCheck-22") or shutil.which("filecheck", path=bin_dir) or "filecheck"
config.substitutions.append(("FileCheck", filecheck))
