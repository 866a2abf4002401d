#!/usr/bin/env bash
# Create .venv (if needed) and install dnnf-mlir with its test and model-export extras.
set -euo pipefail
cd "$(dirname "$0")/.."
# Native toolchain for the code generation targets: llc-22 (LLVM IR -> objects), the
# OpenMP runtime (multi-threaded code), CMake and a C compiler (building the model
# libraries), qemu-user and the AArch64 cross toolchain (running AArch64 code here),
# Graphviz (drawing fusion plans: dnnf-compile --fusion-svg), the Vulkan loader and headers with
# Mesa's lavapipe (a Vulkan device on the CPU, which runs the Vulkan target's kernels here) and
# spirv-tools (spirv-val checks every SPIR-V binary), the OpenCL ICD loader and headers with
# PoCL (an OpenCL device on the CPU, which builds and runs the OpenCL target's kernels here)
# and clinfo. apt's unprivileged sandbox user cannot
# write /dev/null in some containers, hence APT::Sandbox::User=root.
packages="llvm-22 clang-22 libomp-22-dev cmake gcc qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross graphviz
  mesa-vulkan-drivers libvulkan-dev spirv-tools pocl-opencl-icd ocl-icd-opencl-dev clinfo"
if ! dpkg -s $packages >/dev/null 2>&1; then
  apt-get -o APT::Sandbox::User=root -o Acquire::Retries=5 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o APT::Sandbox::User=root -o Acquire::Retries=5 install -y -qq $packages >/dev/null
fi
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
. .venv/bin/activate
# A download cut off mid-wheel (CI once lost torch-mlir's 80 MB at 59 MB) is resumed and,
# failing that, the whole install retried: pip skips what is already installed.
export PIP_RESUME_RETRIES=20 PIP_RETRIES=10
pip_install() {
  local attempt
  for attempt in 1 2 3; do
    pip install -q --disable-pip-version-check "$@" && return 0
    echo "pip install $* failed (attempt $attempt of 3)" >&2
    sleep $(( attempt * 10 ))
  done
  return 1
}
pip_install --upgrade pip
# torch 2.13.0 (CPU) must be installed before transformers so that no CUDA build is pulled in.
pip_install torch==2.13.0
pip_install -e '.[test,models]'
# IREE, dnnf-bench --target vulkan's peer on the same Vulkan device (dnnf_mlir/tools/iree_peer.py).
pip_install iree-base-compiler==3.13.0 iree-base-runtime==3.13.0
