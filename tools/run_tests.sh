#!/usr/bin/env bash
# Set up, then run the whole test suite: lit (MLIR-style regression tests) and pytest
# (ops, dialect, ONNX conformance, the 14 judged models, six more from
# tools/gen_extra_models.py). The judged models are derived once into
# ~/.cache/dnnf-mlir/models-KEY (or $DNNF_MODELS); the first run takes ~5 min more.
#
# Then the code generator's CPU-sensitive tests run again with the host CPU pinned to
# another x86 level than this machine's (DNNF_CPU), so that a test passing on one kind
# of CPU only fails here first: x86-64-v3 (AVX2) on an AVX-512 machine, which still runs
# its code; x86-64-v4 (AVX-512) on any other, compile-only (test/python/conftest.py
# skips running code this CPU cannot run, and lit runs only the tests that compile).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
. .venv/bin/activate
unset DNNF_CPU
# The models the tests read, made before pytest's workers start (so none races another to write them).
python tools/gen_models.py
python tools/gen_extra_models.py
lit -sv test
# A pytest worker per core, up to 4 (most tests run one single-threaded compiler or
# interpreter at a time; a model's compilation takes up to 3 GiB).
workers=$(( $(nproc) < 4 ? $(nproc) : 4 ))
# --durations: the slowest tests in the log, where CI time is looked for first.
python -m pytest -q -n "$workers" --dist worksteal --durations=30 test/python "$@"

if [ "$(uname -m)" = x86_64 ]; then
  read -r level runs_here < <(python - <<'EOF'
from dnnf_mlir.codegen import get_target
level = "x86-64-v3" if "avx512f" in get_target("host", "native").features else "x86-64-v4"
print(level, "no" if get_target("host", level).missing_features() else "yes")
EOF
)
  echo "== the code generator's tests again, pinned to DNNF_CPU=$level (its code runs here: $runs_here)"
  export DNNF_CPU=$level
  # Not again what no host CPU decides: AArch64 code, GPU kernels, and the loops harness of
  # the end-to-end conversion tests (MLIR's ExecutionEngine compiles for this machine).
  other_targets="gpu|aarch64|vulkan|opencl"
  if [ "$runs_here" = yes ]; then
    lit -sv --filter-out "$other_targets" test/Codegen test/Lowering test/tools
  else
    lit -sv --filter-out "$other_targets" test/Codegen
  fi
  python -m pytest -q -n "$workers" --dist worksteal test/python/codegen test/python/compiler/test_compiler.py \
    test/python/conversion -k "not aarch64 and not gpu and not end_to_end" "$@"
fi
