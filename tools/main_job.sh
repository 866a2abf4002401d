#!/usr/bin/env bash
# Set up, then compile a real model (ResNet-50 with random weights unless another judged
# model is named) and show what happened to it:
#  1. import it into ECG, verify it with dnnf-opt and summarise it (ops by mapping type,
#     FLOPs, intermediate bytes); run the reference interpreter against onnxruntime, then
#     again on the graph rewritten by ecg-rewrite (its statistics before -> after);
#  2. compile it for this machine and for AArch64 (dnnf-compile, which rewrites the graph,
#     then fuses it -- ecg-fuse, DNNFusion's planner, its yellow cells measured on this
#     machine into the profiling database -- and says what both did; the plan is drawn in
#     build/MODEL.fusion.svg, manifest.json has the details), run both -- the host
#     library through dnnf_mlir.InferenceSession, which finds it in the compile cache, the
#     AArch64 one under qemu-aarch64 through its C runner -- and check them against onnxruntime;
#     then time every kernel of the host code against this machine's roofline (FMA peak
#     and STREAM bandwidth, measured once and cached) and draw the plan with those times;
#  3. compile it for Vulkan (SPIR-V kernels, every one through spirv-val, and the Vulkan
#     runtime in its library), run it on the Vulkan device found (lavapipe, on the CPU,
#     here), check it against onnxruntime and show each dispatch's GPU time; then the same
#     for OpenCL (OpenCL C kernels built by the OpenCL platform found: PoCL, on the CPU, here, compiled
#     for its device profile: convolutions channel-blocked, NC4HW4);
#  4. benchmark the host code against onnxruntime on 1 and 2 threads (dnnf-bench), with
#     DNNFusion's planner, TVM's fixed patterns and no fusion side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
. .venv/bin/activate
model=${1:-resnet50}
models=$(python -c "import sys; sys.path.insert(0, 'tools'); import gen_models; print(gen_models.DEFAULT_DIR)")
mkdir -p build
python tools/gen_models.py --out "$models" --only "$model"
onnx="$models/$model.onnx"

echo "== 1. import, verify, interpret"
dnnf-translate --import-onnx "$onnx" --emit-bytecode -o "build/$model.mlirbc" --time
dnnf-opt "build/$model.mlirbc" --ecg-op-stats=output="build/$model.stats.json" --emit-bytecode -o /dev/null
echo "dnnf-opt: build/$model.mlirbc verifies; statistics in build/$model.stats.json"
dnnf-run "build/$model.mlirbc" --reference "$onnx" --interpret --check --summary
echo "-- after ecg-rewrite"
dnnf-run "build/$model.mlirbc" --reference "$onnx" --interpret --check --summary --rewrite

echo "== 2. compile for the host and for AArch64, run, check"
dnnf-compile "$onnx" --target host --profile -o "build/$model-host" --fusion-svg "build/$model.fusion.svg"
echo "the fusion plan: build/$model.fusion.svg"
python tools/run_session.py "$onnx" --threads 1 --profile --repeat 10   # dnnf-compile's options: a cache hit
echo "-- where the time goes: every kernel against this machine's roofline (dnnf-roofline)"
dnnf-compile "$onnx" --target host --profile --profile-kernels -o "build/$model-host-profiled" -q
dnnf-run "build/$model-host-profiled" --profile --repeat 10 --profile-svg "build/$model.profile.svg" \
    --profile-json "build/$model.trace.json"
echo "the plan with each kernel's time: build/$model.profile.svg; a Chrome trace: build/$model.trace.json"
dnnf-compile "$onnx" --target aarch64 -o "build/$model-aarch64"
dnnf-run "build/$model-aarch64" --check

echo "== 3. compile for Vulkan and OpenCL, run on the devices found, check"
dnnf-compile "$onnx" --target vulkan --device lavapipe -o "build/$model-vulkan"
dnnf-run "build/$model-vulkan" --check --repeat 2
echo "-- for OpenCL"
dnnf-compile "$onnx" --target opencl --device pocl -o "build/$model-opencl"
dnnf-run "build/$model-opencl" --check --repeat 2

echo "== 4. benchmark against onnxruntime"
dnnf-bench "$onnx" --threads 1,2 --profile --json "build/$model.bench.json"
