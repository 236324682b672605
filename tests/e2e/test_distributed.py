"""shard_map programs from JAX on 2 and 4 ranks under mpirun, each rank's
outputs against JAX running the same program on 4 host CPU devices
(distributed_cases.py has the cases)."""
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def mpirun():
    path = shutil.which("mpirun")
    if not path:
        pytest.skip("mpirun not found (scripts/bootstrap.sh installs OpenMPI)")
    return [path, "--oversubscribe", "--allow-run-as-root"]


def python_env(build_dir):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(build_dir / "python"), str(ROOT / "python")])
    env.pop("XLA_FLAGS", None)
    return env


@pytest.mark.parametrize("ranks", [2, 4])
def test_shard_map_programs_match_jax_on_every_rank(build_dir, tmp_path, ranks):
    env = python_env(build_dir)
    script = str(HERE / "distributed_cases.py")
    prepared = subprocess.run([sys.executable, script, "prepare", str(ranks), str(tmp_path)], env=env,
                              capture_output=True, text=True, timeout=600)
    assert prepared.returncode == 0, prepared.stderr[-3000:]
    ran = subprocess.run(mpirun() + ["-np", str(ranks), sys.executable, script, "run", str(tmp_path)],
                         env=env, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    # mpirun may glue the ranks' lines together: find the reports anywhere.
    reports = re.findall(r"rank (\d+)/\d+ (\w+) (result\d+): shape \([^)]*\) rel err \S+ (ok|MISMATCH)", ran.stdout)
    assert reports and all(verdict == "ok" for *_, verdict in reports), ran.stdout
    cases = {case for _, case, _, _ in reports}
    assert {"tp_mlp", "tp_mlp_gspmd", "tp_attention", "dp_gradient", "all_to_all", "ring_permute",
            "pmax"} <= cases
    assert ranks != 4 or "mesh_2d" in cases
    # Every rank reported every result.
    per_rank = {r: {(c, o) for rr, c, o, _ in reports if rr == r} for r, *_ in reports}
    assert len(per_rank) == ranks and len({frozenset(v) for v in per_rank.values()}) == 1
