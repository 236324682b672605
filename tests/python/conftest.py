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
