"""shard_map programs from JAX on 2 and 4 ranks under mpirun, each rank's
outputs against JAX running the same program on 4 host CPU devices
(distributed_cases.py has the cases)."""
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

import pytest

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def mpirun():
    path = shutil.which("mpirun")
    if not path:
        pytest.skip("mpirun not found (scripts/bootstrap.sh installs OpenMPI)")
    return [path, "--oversubscribe", "--allow-run-as-root"]


def python_env(build_dir, need_extension=True):
    if need_extension and not list((build_dir / "python" / "brt").glob("_brt*.so")):
        pytest.skip("the Python extension is not built here (BRT_BUILD_PYTHON=OFF)")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(build_dir / "python"), str(ROOT / "python")])
    env.pop("XLA_FLAGS", None)
    return env


@pytest.fixture(scope="module")
def prepared(build_dir, tmp_path_factory):
    """prepared(ranks): a directory with the cases compiled for that many ranks
    (JAX and brt-compile only), made once per module."""
    made = {}

    def get(ranks):
        if ranks not in made:
            d = tmp_path_factory.mktemp(f"cases{ranks}")
            r = subprocess.run([sys.executable, str(HERE / "distributed_cases.py"), "prepare", str(ranks), str(d)],
                               env=python_env(build_dir, need_extension=False), capture_output=True, text=True,
                               timeout=600)
            assert r.returncode == 0, r.stderr[-3000:]
            made[ranks] = d
        return made[ranks]

    return get


@pytest.mark.parametrize("ranks", [2, 4])
def test_shard_map_programs_match_jax_on_every_rank(build_dir, prepared, ranks):
    env = python_env(build_dir)
    script = str(HERE / "distributed_cases.py")
    cases = prepared(ranks)
    ran = subprocess.run(mpirun() + ["-np", str(ranks), sys.executable, script, "run", str(cases)],
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


@pytest.mark.parametrize("launcher_keeps_going", [False, True])
def test_a_lost_rank_ends_the_others_with_an_error_naming_it(build_dir, launcher_keeps_going):
    # By default mpirun itself ends the job when a rank dies; with
    # --enable-recovery it leaves the survivors running, and brt's watchdog
    # must end them (each names the lost rank, never hangs).
    cmd = mpirun() + (["--enable-recovery"] if launcher_keeps_going else []) + [
        "-np", "4", str(build_dir / "tests" / "lost_rank")]
    start = time.monotonic()
    ran = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    elapsed = time.monotonic() - start
    out = ran.stdout + ran.stderr
    assert elapsed < 30, out
    assert "finished" not in out, out
    if launcher_keeps_going:
        for rank in range(3):
            assert re.search(rf"rank {rank}, iteration \d+: .*lost rank 3", out), out
    else:
        assert ran.returncode != 0, out
        assert re.search(r"rank 3\b", out), out


def test_brt_run_under_mpirun_reads_and_writes_per_rank_files(build_dir, prepared, tmp_path):
    import numpy as np

    cases = prepared(2)
    x, w1, w2 = (np.load(cases / "tp_mlp.npz")[f"arr_{i}"] for i in range(3))
    want = np.load(cases / "tp_mlp.expected.npz")["arr_0"]
    # tp_mlp's shardings: x and w2 split by rows, w1 by columns, the result by rows.
    for r in range(2):
        rows, cols = slice(r * x.shape[0] // 2, (r + 1) * x.shape[0] // 2), slice(r * 32, (r + 1) * 32)
        np.save(tmp_path / f"x.{r}.npy", x[rows])
        np.save(tmp_path / f"w1.{r}.npy", w1[:, cols])
        np.save(tmp_path / f"w2.{r}.npy", w2[cols, :])
    out = tmp_path / "out"
    ran = subprocess.run(mpirun() + ["-np", "2", str(build_dir / "bin" / "brt-run"), str(cases / "tp_mlp.brtx"),
                                     "--inputs", str(tmp_path / "x.{rank}.npy"), str(tmp_path / "w1.{rank}.npy"),
                                     str(tmp_path / "w2.{rank}.npy"), "--out", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.count("out0 result0") == 1, ran.stdout  # rank 0 only
    for r in range(2):
        got = np.load(out / f"out0.rank{r}.npy")
        expect = want[r * want.shape[0] // 2:(r + 1) * want.shape[0] // 2]
        assert np.linalg.norm(got - expect) / np.linalg.norm(expect) < 1e-5


def test_brt_bench_under_mpirun_prints_once_and_refuses_uneven_runs(build_dir, prepared, tmp_path):
    bench = [str(build_dir / "bin" / "brt-bench"), str(prepared(2) / "tp_mlp.brtx"), "--random-inputs", "1"]
    ran = subprocess.run(mpirun() + ["-np", "2"] + bench + ["--iters", "20", "--json", str(tmp_path / "b.json")],
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.count("rank 0 of 2") == 1 and "rank 1 of 2" not in ran.stdout, ran.stdout
    assert "brt.all_gather_matmul" in ran.stdout and "brt.matmul_reduce_scatter" in ran.stdout
    assert (tmp_path / "b.rank0.json").exists() and (tmp_path / "b.rank1.json").exists()
    refused = subprocess.run(mpirun() + ["-np", "2"] + bench + ["--duration", "1"],
                             capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0 and "use --iters (not --duration)" in refused.stderr, refused.stderr
