"""The kernel tables in docs/ops.md must be exactly what the registries say."""
import pathlib
import subprocess

import pytest

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "ops.md"


@pytest.mark.parametrize("provider,marker", [("cpu", "kernels"), ("cuda", "kernels-cuda"), ("mpi", "kernels-mpi"), ("nccl", "kernels-nccl")])
def test_kernel_table_matches_registry(build_dir, provider, marker):
    if not (build_dir / "lib" / f"libbrt_provider_{provider}.so").exists():
        pytest.skip(f"the {provider} provider is not built here")
    text = DOCS.read_text()
    begin, end = f"<!-- {marker}:begin -->\n", f"<!-- {marker}:end -->"
    documented = text[text.index(begin) + len(begin):text.index(end)].strip()
    listed = subprocess.run([str(build_dir / "bin" / "brt-kernels"), "--markdown", provider], check=True,
                            capture_output=True, text=True).stdout.strip()
    assert documented == listed, \
        f"docs/ops.md is stale: regenerate the {provider} table with `brt-kernels --markdown {provider}`"
