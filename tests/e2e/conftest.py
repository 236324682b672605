import os
import pathlib
import subprocess

import numpy as np
import pytest

BUILD = pathlib.Path(os.environ.get("BRT_BUILD_DIR", pathlib.Path(__file__).resolve().parents[2] / "build"))


@pytest.fixture(scope="session")
def build_dir():
    if not (BUILD / "bin" / "brt-run").exists():
        pytest.fail(f"brt-run not found under {BUILD}; build first or set BRT_BUILD_DIR")
    return BUILD


@pytest.fixture(scope="session")
def mlp_dir(build_dir, tmp_path_factory):
    d = tmp_path_factory.mktemp("mlp")
    subprocess.run([str(build_dir / "tests" / "make_mlp"), str(d)], check=True, capture_output=True)
    return d


@pytest.fixture(scope="session")
def have_compiler():
    """Skips where brt-compile is not built (BRT_BUILD_COMPILER_BRIDGE=OFF)."""
    import brt
    try:
        brt.find_tool()
    except FileNotFoundError as e:
        pytest.skip(str(e))


def nvrtc_built_in():
    """Whether brt-compile can generate CUDA kernels (ctest says; BRT_HAVE_NVRTC=0 without a CUDA toolkit)."""
    return os.environ.get("BRT_HAVE_NVRTC", "1") != "0"


@pytest.fixture
def nvrtc():
    if not nvrtc_built_in():
        pytest.skip("brt-compile was built without NVRTC (no CUDA toolkit): --target=cuda is refused "
                    "(test_cuda_target_is_refused_without_nvrtc)")


def brt_run(build_dir, *args):
    return subprocess.run([str(build_dir / "bin" / "brt-run"), *map(str, args)], capture_output=True, text=True)


def target_env(build_dir, target):
    """(device, env) for brt-run on `target`: "cpu", or "emulated_cuda", the
    CUDA provider's own kernels on the host through BRT_PROVIDER_PATH
    (skipped where they are not built)."""
    if target != "emulated_cuda":
        return target, None
    emulated = build_dir / "tests" / "emulated_cuda"
    if not nvrtc_built_in() or not (emulated / "libbrt_provider_cuda.so").exists():
        pytest.skip("no emulated CUDA provider (built only where a CUDA toolkit is found)")
    return "cuda", dict(os.environ, BRT_PROVIDER_PATH=str(emulated))


def run_on_npy(build_dir, path, args, tmp_path, device, env=None):
    """Runs executable `path` with brt-run on `args` (saved as .npy); its outputs, in order."""
    inputs = []
    for i, a in enumerate(args):
        inputs.append(tmp_path / f"in{i}.npy")
        np.save(inputs[-1], np.asarray(a))
    out = tmp_path / "out"
    r = subprocess.run([str(build_dir / "bin" / "brt-run"), str(path), "--inputs", *map(str, inputs), "--out",
                        str(out), "--provider", device], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    return [np.load(p) for p in sorted(out.glob("out*.npy"), key=lambda p: int(p.stem[3:]))]
