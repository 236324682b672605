"""brt-bench on the end-to-end MLP: statistics are present and consistent,
the trace is valid Chrome-trace JSON, bad arguments exit 2."""
import json
import subprocess


def bench(build_dir, *args):
    return subprocess.run([str(build_dir / "bin" / "brt-bench"), *map(str, args)], capture_output=True, text=True)


def test_report_json_and_trace(build_dir, mlp_dir, tmp_path):
    r = bench(build_dir, mlp_dir / "mlp.brtx", "--random-inputs", 3, "--warmup", 2, "--iters", 60,
              "--concurrency", 2, "--json", tmp_path / "b.json", "--trace", tmp_path / "t.json")
    assert r.returncode == 0, r.stderr
    for line in ("load ", "latency ms: min", "throughput", "host allocator", "per-op profile"):
        assert line in r.stdout
    b = json.loads((tmp_path / "b.json").read_text())
    lat = b["latency_ms"]
    assert b["runs"] == 60 and b["concurrency"] == 2
    assert 0 < lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p999"] <= lat["max"]
    assert b["throughput_runs_per_s"] > 0 and b["peak_rss_bytes"] > 0 and b["load_ms"] > 0
    kinds = {p["kind"]: p for p in b["profile"]}
    # The MLP: three dense layers (dot_general, add, maximum) and a softmax.
    assert kinds["dot_general"]["ops_per_run"] == 3 and kinds["brt.softmax"]["ops_per_run"] == 1
    assert abs(sum(p["share"] for p in b["profile"]) - 1) < 1e-6
    events = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    ops_per_run = sum(p["ops_per_run"] for p in b["profile"])
    assert len(events) == 20 * ops_per_run
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in events)


def test_duration_runs_until_the_deadline(build_dir, mlp_dir, tmp_path):
    """--duration: the timing threads read the deadline the moment they are
    released (they read it before the main thread had set it, saw the epoch,
    timed nothing and brt-bench crashed on the empty latency list)."""
    for concurrency in (1, 2, 1, 2):
        r = bench(build_dir, mlp_dir / "mlp.brtx", "--random-inputs", 1, "--warmup", 0, "--duration", 0.2,
                  "--concurrency", concurrency, "--json", tmp_path / "b.json")
        assert r.returncode == 0, r.stderr
        b = json.loads((tmp_path / "b.json").read_text())
        assert b["runs"] > 0 and 0.15 < b["runs"] / b["throughput_runs_per_s"] < 2
    r = bench(build_dir, mlp_dir / "mlp.brtx", "--random-inputs", 1, "--duration", 1e-9)
    assert r.returncode == 1 and "no timed run finished within --duration" in r.stderr


def test_inputs_from_a_directory(build_dir, mlp_dir, tmp_path):
    (tmp_path / "x.npy").write_bytes((mlp_dir / "x.npy").read_bytes())
    r = bench(build_dir, mlp_dir / "mlp.brtx", "--inputs", tmp_path, "--iters", 5, "--warmup", 0)
    assert r.returncode == 0, r.stderr


def test_bad_arguments_exit_2(build_dir, mlp_dir, tmp_path):
    assert bench(build_dir).returncode == 2
    r = bench(build_dir, mlp_dir / "mlp.brtx", "--iters", "many")
    assert r.returncode == 2 and "--iters takes a non-negative number, got 'many'" in r.stderr
    r = bench(build_dir, mlp_dir / "mlp.brtx", "--inputs", tmp_path / "missing")
    assert r.returncode == 2 and "input 'x'" in r.stderr


def test_symbolic_batch_reports_its_shape_plans(build_dir, mlp_dir, tmp_path):
    r = bench(build_dir, mlp_dir / "mlp_dynamic.brtx", "--random-inputs", 1, "--symbols", "b=4",
              "--warmup", 1, "--iters", 10, "--json", tmp_path / "b.json")
    assert r.returncode == 0, r.stderr
    assert "shape plans: 1 held" in r.stdout and "1 misses" in r.stdout
    plans = json.loads((tmp_path / "b.json").read_text())["shape_plans"]
    assert plans["held"] == 1 and plans["misses"] == 1 and plans["hits"] >= 10 and plans["last_plan_ms"] > 0


def test_shape_sweep_times_each_shape_and_reuses_plans(build_dir, mlp_dir):
    r = bench(build_dir, mlp_dir / "mlp_dynamic.brtx", "--shapes", "b=1;b=32;b=1", "--warmup", 1, "--iters", 20)
    assert r.returncode == 0, r.stderr
    rows = [line.split() for line in r.stdout.splitlines() if line.strip().startswith("b=")]
    assert [row[0] for row in rows] == ["b=1", "b=32", "b=1"]
    first, plan, p50, p99 = rows[1][1:]
    assert float(first) >= float(plan) > 0 and 0 < float(p50) <= float(p99)
    assert rows[2][2] == "hit"  # a shape seen before reuses its plan
    r = bench(build_dir, mlp_dir / "mlp_dynamic.brtx", "--shapes", "b=1;;")
    assert r.returncode == 2 and "--shapes" in r.stderr
    r = bench(build_dir, mlp_dir / "mlp_dynamic.brtx", "--shapes", "c=3")
    assert r.returncode == 1 and "shape c=3" in r.stderr and "'b'" in r.stderr


def test_threading_line_states_linger(build_dir, mlp_dir):
    r = bench(build_dir, mlp_dir / "mlp.brtx", "--random-inputs", 1, "--warmup", 0, "--iters", 5,
              "--threads", 2, "--linger", 200)
    assert r.returncode == 0, r.stderr
    assert "threading: 2 intra-op thread(s), spinning on, linger 200 us" in r.stdout
    r = bench(build_dir, mlp_dir / "mlp.brtx", "--random-inputs", 1, "--warmup", 0, "--iters", 5,
              "--threads", 2, "--no-spinning", "--linger", 200)
    assert r.returncode == 0 and "spinning off, linger 0 us" in r.stdout, r.stderr
    r = bench(build_dir, mlp_dir / "mlp.brtx", "--linger", -1)
    assert r.returncode == 2 and "--linger takes a non-negative number, got '-1'" in r.stderr
    r = bench(build_dir, mlp_dir / "mlp.brtx", "--linger", 5000)
    assert r.returncode == 2 and "linger_microseconds is 5000" in r.stderr
