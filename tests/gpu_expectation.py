"""Whether a CUDA test that cannot run may skip: only where no GPU is visible.

BRT_EXPECT_GPU=1 or 0 decides when set (scripts/gpu_suite.sh sets 1 where
nvidia-smi sees a GPU); otherwise the NVIDIA driver's device files do. The C++
tests use the same rule (tests/unit/test_util.cc).
"""
import os
import pathlib

import pytest


def gpu_expected():
    if "BRT_EXPECT_GPU" in os.environ:
        return os.environ["BRT_EXPECT_GPU"] == "1"
    gpus = pathlib.Path("/proc/driver/nvidia/gpus")
    return pathlib.Path("/dev/nvidia0").exists() or (gpus.is_dir() and any(gpus.iterdir()))


def skip_or_fail(why):
    """Skips the test where no GPU is visible; fails it, saying why, where one is."""
    if gpu_expected():
        pytest.fail(f"a GPU is visible (BRT_EXPECT_GPU or /dev/nvidia0) but {why}", pytrace=False)
    pytest.skip(f"no usable CUDA device: {why}")
