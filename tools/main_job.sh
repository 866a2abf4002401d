#!/usr/bin/env bash
# Set up, then import a real model (ResNet-50 with random weights), verify it with
# dnnf-opt, run it with the reference interpreter against onnxruntime and summarise it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
. .venv/bin/activate
model=${1:-resnet50}
python tools/gen_models.py --out build/models --only "$model"
dnnf-translate --import-onnx "build/models/$model.onnx" --emit-bytecode -o "build/models/$model.mlirbc" --time
dnnf-opt "build/models/$model.mlirbc" --ecg-op-stats=output="build/models/$model.stats.json" --emit-bytecode -o /dev/null
echo "dnnf-opt: verified; statistics in build/models/$model.stats.json"
dnnf-run "build/models/$model.mlirbc" --reference "build/models/$model.onnx" --interpret --check --summary
