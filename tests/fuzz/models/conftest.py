"""The build's Python package (build/python, or $BRT_BUILD_DIR/python) and
these modules on sys.path, as fuzz.py's workers have them."""
import os
import pathlib
import sys

import pytest

MODELS = pathlib.Path(__file__).resolve().parent
BUILD = pathlib.Path(os.environ.get("BRT_BUILD_DIR", MODELS.parents[2] / "build"))
sys.path[:0] = [str(MODELS), str(BUILD / "python")]
os.environ.setdefault("BRT_BIN_DIR", str(BUILD / "bin"))


def require(module):
    """Imports `module`; where it is missing, skips -- except in CI
    (CI=true), whose bootstrap installs it, where that is a failure."""
    import importlib
    try:
        return importlib.import_module(module)
    except ImportError as e:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{module} is not installed, and scripts/bootstrap.sh installs it in CI: {e}", pytrace=False)
        pytest.skip(f"{module} is not installed (scripts/bootstrap.sh installs it)")
