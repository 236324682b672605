import os
import pathlib
import subprocess
import sys

import pytest

BUILD = pathlib.Path(os.environ.get("BRT_BUILD_DIR", pathlib.Path(__file__).resolve().parents[2] / "build"))
sys.path.insert(0, str(BUILD / "python"))


@pytest.fixture(scope="session")
def mlp_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("mlp")
    subprocess.run([str(BUILD / "tests" / "make_mlp"), str(d)], check=True, capture_output=True)
    return d


def require(module):
    """Imports `module`; where it is missing, skips the test file -- except in
    CI (CI=true), whose bootstrap installs it, where that is a failure."""
    import importlib
    try:
        return importlib.import_module(module)
    except ImportError as e:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{module} is not installed, and scripts/bootstrap.sh installs it in CI: {e}",
                        pytrace=False)
        pytest.skip(f"{module} is not installed (scripts/bootstrap.sh installs it)", allow_module_level=True)


@pytest.fixture(scope="session")
def have_compiler():
    """Skips where brt-compile is not built (BRT_BUILD_COMPILER_BRIDGE=OFF)."""
    import brt
    try:
        brt.find_tool()
    except FileNotFoundError as e:
        pytest.skip(str(e))
