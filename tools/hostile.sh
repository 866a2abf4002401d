#!/usr/bin/env bash
# The hostile-input campaign: bash tools/hostile.sh [N] [options of python -m dnnf_mlir.hostile]
# N random mutations (default 100) plus the hand-made cases, through every dnnf tool.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
[ -d "$here/.venv" ] && . "$here/.venv/bin/activate"
export PYTHONPATH="$here/python${PYTHONPATH:+:$PYTHONPATH}"
exec nice -n 10 python -m dnnf_mlir.hostile "$@"
