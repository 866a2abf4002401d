#!/usr/bin/env bash
# Set up, then import a real model (ResNet-50 with random weights unless another judged
# model is named), verify it with dnnf-opt, run it with the reference interpreter against
# onnxruntime and summarise it: ops by mapping type, FLOPs, intermediate bytes, max error.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
. .venv/bin/activate
model=${1:-resnet50}
models=$(python -c "import sys; sys.path.insert(0, 'tools'); import gen_models; print(gen_models.DEFAULT_DIR)")
mkdir -p build
python tools/gen_models.py --out "$models" --only "$model"
dnnf-translate --import-onnx "$models/$model.onnx" --emit-bytecode -o "build/$model.mlirbc" --time
dnnf-opt "build/$model.mlirbc" --ecg-op-stats=output="build/$model.stats.json" --emit-bytecode -o /dev/null
echo "dnnf-opt: build/$model.mlirbc verifies; statistics in build/$model.stats.json"
dnnf-run "build/$model.mlirbc" --reference "$models/$model.onnx" --interpret --check --summary
