"""The conformance run (generate.py) as a test: brt never gives a wrong
answer, every program brt-compile accepts for --target=cpu loads on the CPU
provider and runs, and docs/ops_coverage.md is what the generator writes.
Refusals are allowed: the table lists them."""
import difflib
import os
import sys

import pytest

pytest.importorskip("jax")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate  # noqa: E402

TABLE = os.path.join(generate.ROOT, "docs", "ops_coverage.md")
REGENERATE = "python3 tests/conformance/generate.py --table docs/ops_coverage.md"


@pytest.fixture(scope="module")
def run():
    try:
        generate.brt.find_tool()
    except FileNotFoundError as e:
        pytest.skip(str(e))
    programs, table, seconds = generate.conformance(say=lambda *a, **k: None)
    print(f"conformance: {len(programs)} programs in {seconds['total']:.0f} s")
    return programs, table


def failed(programs, status):
    return "\n".join(f"{p.describe()}: {p.message}" for p in programs if p.status == status)


def test_no_wrong_answers(run):
    programs, _ = run
    assert not failed(programs, "mismatch"), "brt's result differs from JAX's:\n" + failed(programs, "mismatch")


def test_what_compiles_loads(run):
    programs, _ = run
    compiled = [p for p in programs if p.status in ("passed", "mismatch", "run_error", "load_refused")]
    assert compiled, "no program compiled"
    refused = failed(programs, "load_refused")
    assert not refused, f"brt-compile --target=cpu wrote these, the CPU provider does not load them:\n{refused}"


def test_what_loads_runs(run):
    programs, _ = run
    assert not failed(programs, "run_error"), "loaded but failed running:\n" + failed(programs, "run_error")
    assert not failed(programs, "crash"), "brt-compile crashed:\n" + failed(programs, "crash")


def test_table_is_up_to_date(run):
    _, table = run
    with open(TABLE) as f:
        written = f.read()
    now = generate.render(generate.CASES, table)
    diff = list(difflib.unified_diff(written.splitlines(), now.splitlines(), "docs/ops_coverage.md", "now", n=0,
                                     lineterm=""))
    assert not diff, (f"docs/ops_coverage.md is not what the conformance run gives now: run `{REGENERATE}` and "
                      "commit it. The difference:\n" + "\n".join(diff[:40]))
