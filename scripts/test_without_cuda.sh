#!/usr/bin/env bash
# scripts/test.sh on this machine as if it had no CUDA toolkit: in a private
# mount namespace /usr/local/cuda's target is hidden under an empty tmpfs, so
# nvcc, NVRTC, cuBLASLt and cuDNN cannot be found; builds into build-nocuda/.
# Needs root (unshare -m).
set -euo pipefail
cd "$(dirname "$0")/.."
cuda=$(readlink -f /usr/local/cuda)
exec unshare -m bash -c "mount -t tmpfs none '$cuda' && BRT_BUILD_DIR=build-nocuda scripts/test.sh"
