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


def test_coverage_table_matches_the_importer(build_dir):
    """docs/ops.md's StableHLO/CHLO table says "yes" for exactly the ops
    brt-compile --list-ops prints, lists each op once, and counts them right."""
    tool = build_dir / "bin" / "brt-compile"
    if not tool.exists():
        pytest.skip("brt-compile is not built here")
    text = DOCS.read_text()
    begin, end = "<!-- coverage:begin -->\n", "<!-- coverage:end -->"
    rows = [line.split("|") for line in text[text.index(begin) + len(begin):text.index(end)].strip().splitlines()[2:]]
    ops = [r[1].strip().strip("`") for r in rows]
    assert len(ops) == len(set(ops)), "an op is listed twice"
    documented = {op for op, r in zip(ops, rows) if r[2].strip() == "yes"}
    imported = set(subprocess.run([str(tool), "--list-ops"], check=True, capture_output=True, text=True).stdout.split())
    assert f"{len(documented)} of the {len(ops)} are imported" in text, "docs/ops.md's count of imported ops is stale"
    assert documented == imported, (f"docs/ops.md says imported but brt-compile does not: {sorted(documented - imported)}; "
                                    f"brt-compile imports but docs/ops.md does not say so: {sorted(imported - documented)}")
