"""The kernel table in docs/ops.md must be exactly what the registry says."""
import pathlib
import subprocess

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "ops.md"


def test_kernel_table_matches_registry(build_dir):
    text = DOCS.read_text()
    begin, end = "<!-- kernels:begin -->\n", "<!-- kernels:end -->"
    documented = text[text.index(begin) + len(begin):text.index(end)].strip()
    listed = subprocess.run([str(build_dir / "bin" / "brt-kernels"), "--markdown", "cpu"], check=True,
                            capture_output=True, text=True).stdout.strip()
    assert documented == listed, "docs/ops.md is stale: regenerate the table with `brt-kernels --markdown`"
