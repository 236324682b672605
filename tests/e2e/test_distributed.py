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


@pytest.mark.parametrize("model", ["mlp", "lm"])
@pytest.mark.parametrize("ranks", [2, 4])
def test_data_parallel_training_matches_jax_step_by_step(build_dir, model, ranks, tmp_path):
    """dp_training.py: 20 AdamW steps of an MLP, and of the transformer LM of
    examples/tiny_lm.py, under shard_map with pmean-ed gradients, state kept
    in place on every rank, against JAX on a mesh of as many host devices;
    every step's loss and the final state on every rank."""
    env = python_env(build_dir)
    script = str(HERE / "dp_training.py")
    made = subprocess.run([sys.executable, script, "prepare", model, str(ranks), str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert made.returncode == 0, made.stderr[-3000:]
    ran = subprocess.run(mpirun() + ["-np", str(ranks), sys.executable, script, "run", str(tmp_path)],
                         env=env, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    reports = re.findall(rf"rank (\d+)/\d+ dp_train {model}: 20 steps, .*? (ok|MISMATCH)", ran.stdout)
    assert sorted(int(r) for r, _ in reports) == list(range(ranks)), ran.stdout
    assert all(verdict == "ok" for _, verdict in reports), ran.stdout


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


# One process slices every rank's inputs by the executable's own shardings
# (inspect_only: no launcher, and running is refused), and later assembles
# the global result from the per-rank outputs.
SLICE_AND_ASSEMBLE = """
import sys, numpy as np, brt
mode, brtx, data, work = sys.argv[1:5]
described = brt.Session(brtx, inspect_only=True)
fn = described.functions[0]
assert fn["mesh"] == [("x", 2)], fn["mesh"]
arrays = np.load(data)
if mode == "slice":
    try:
        described.run(*(arrays[k] for k in arrays.files))
        sys.exit("an inspect_only Session ran")
    except RuntimeError as e:
        assert "inspect_only" in str(e), e
    names = [a["name"] for a in fn["arguments"] if a["role"] == "input"]
    for r in range(2):
        for i in range(len(arrays.files)):
            np.save(f"{work}/arg{i}.{r}.npy", brt.distributed.shard(arrays[f"arr_{i}"], fn, names[i], r))
else:
    got = brt.distributed.unshard([np.load(f"{work}/out/out0.rank{r}.npy") for r in range(2)], fn, "result0")
    want = arrays["arr_0"]
    assert got.shape == want.shape, (got.shape, want.shape)
    err = np.linalg.norm(got - want) / np.linalg.norm(want)
    assert err < 1e-5, err
"""


def test_brt_run_under_mpirun_reads_and_writes_per_rank_files(build_dir, prepared, tmp_path):
    cases = prepared(2)
    brtx = str(cases / "tp_mlp.brtx")
    env = python_env(build_dir)

    def helper(mode, data):
        done = subprocess.run([sys.executable, "-c", SLICE_AND_ASSEMBLE, mode, brtx, str(data), str(tmp_path)],
                              env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr

    helper("slice", cases / "tp_mlp.npz")
    ran = subprocess.run(mpirun() + ["-np", "2", str(build_dir / "bin" / "brt-run"), brtx,
                                     "--inputs", *(str(tmp_path / f"arg{i}.{{rank}}.npy") for i in range(3)),
                                     "--out", str(tmp_path / "out")],
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.count("out0 result0") == 1, ran.stdout  # rank 0 only
    helper("assemble", cases / "tp_mlp.expected.npz")


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
