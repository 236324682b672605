"""brt behind the real Triton Inference Server: tritonserver from
nvidia-pytriton's wheel loads libtriton_brt.so from the build tree and serves
a repository of brt models (the JAX MLP and all-MiniLM-L6-v2) on loopback
ports. Checks answers over HTTP and gRPC against NumPy and brt.Session run
directly, 8 concurrent clients, malformed requests, a failed run,
statistics and metrics, a symbolic batch, KIND_GPU and CUDA executables (run
where a GPU is visible, refused clearly where none is), a broken and a
mismatched model beside the good ones, a new version dropped in, and the
backend as `cmake --install` lays it out. A server that cannot start fails
the tests (never skips them)."""
import os
import pathlib
import shutil
import subprocess
import sys
import threading
import urllib.request

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
BUILD = pathlib.Path(os.environ.get("BRT_BUILD_DIR", HERE.parents[1] / "build"))
sys.path.insert(0, str(BUILD / "python"))
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import serving_models  # noqa: E402
from gpu_expectation import gpu_expected  # noqa: E402
from triton_server import ServerError, TritonServer, wait_until  # noqa: E402

import tritonclient.grpc as grpcclient  # noqa: E402
import tritonclient.http as httpclient  # noqa: E402
from tritonclient.utils import InferenceServerException  # noqa: E402

MINILM_BATCHES = (1, 8)
MINILM_SEQS = (16, 32)  # so its sequence dim is -1 in the config
MINILM_SEQ = 16
TIMEOUT_S = 60  # any one request
GPU = gpu_expected()
# A build without CUDA has no CUDA provider to compile for or serve with.
CUDA_PROVIDER = (BUILD / "lib" / "libbrt_provider_cuda.so").is_file()
GOOD_MODELS = ("mlp", "minilm", "mlp_fixed", "mlp_any", "mlp_any_whole") + (("mlp_gpu",) if GPU else ()) + \
    (("mlp_as_cuda",) if CUDA_PROVIDER else ()) + (("mlp_cuda",) if GPU and CUDA_PROVIDER else ())


def mlp_reference(x, seed):
    """The MLP in float64 NumPy from the same weights."""
    w1, b1, w2, b2, w3, b3 = (w.astype(np.float64) for w in serving_models.mlp_weights(seed))
    h = np.maximum(x @ w1 + b1, 0)
    h = np.maximum(h @ w2 + b2, 0)
    z = h @ w3 + b3
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The repository and the running server (poll mode: files dropped in
    are loaded)."""
    work = tmp_path_factory.mktemp("serving")
    mlp = serving_models.compile_mlp(work / "mlp.brtx", seed=0)
    mlp_v2 = serving_models.compile_mlp(work / "mlp_v2.brtx", seed=1)
    minilm = serving_models.compile_minilm(work / "minilm.brtx", MINILM_BATCHES, MINILM_SEQS)
    repo = work / "repository"
    # Two instances share the model's one Session, each with its own contexts.
    serving_models.write_model(repo, "mlp", 1, mlp, "dynamic_batching { max_queue_delay_microseconds: 2000 }\n"
                               "instance_group [{ kind: KIND_CPU, count: 2 }]\n")
    serving_models.write_model(repo, "minilm", 1, minilm)  # the backend line alone
    serving_models.write_model(repo, "mlp_fixed", 1, mlp, 'parameters { key: "function" value: { string_value: "main_4" } }\n'
                               'parameters { key: "threads" value: { string_value: "1" } }\n')
    broken = work / "broken.brtx"
    broken.write_bytes(np.random.default_rng(7).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    serving_models.write_model(repo, "broken", 1, broken)
    serving_models.write_model(repo, "mismatched", 1, mlp, "max_batch_size: 8\n"
                               'input [{ name: "x", data_type: TYPE_FP32, dims: [64] }]\n')
    serving_models.write_model(repo, "too_big", 1, mlp, "max_batch_size: 16\n")
    serving_models.write_model(repo, "wrong_type", 1, mlp, "max_batch_size: 8\n"
                               'input [{ name: "x", data_type: TYPE_INT32, dims: [32] }]\n')
    serving_models.write_model(repo, "bad_parameter", 1, mlp, 'parameters { key: "thread" value: { string_value: "2" } }\n')
    # A symbolic batch (any rows): batching from the backend line alone; and
    # the same executable served whole (max_batch_size 0), where brt itself
    # checks the batch's constraint (b >= 1) when the run starts.
    symbolic = serving_models.make_symbolic_mlp(BUILD, work / "symbolic")
    serving_models.write_model(repo, "mlp_any", 1, symbolic)
    serving_models.write_model(repo, "mlp_any_whole", 1, symbolic,
                               'input [{ name: "x", data_type: TYPE_FP32, dims: [-1, 64] }]\n')
    # The GPU paths: a KIND_GPU instance group, and an executable compiled
    # for CUDA (the backend loads the CUDA provider for it).
    serving_models.write_model(repo, "mlp_gpu", 1, mlp, "instance_group [{ kind: KIND_GPU }]\n")
    if CUDA_PROVIDER:
        mlp_cuda = serving_models.compile_mlp(work / "mlp_cuda.brtx", seed=0, batches=(1, 4), target="cuda")
        serving_models.write_model(repo, "mlp_cuda", 1, mlp_cuda)
        # The provider parameter: the CPU provider alone for a CUDA executable;
        # the CUDA provider first for a CPU one (which still runs on the CPU).
        serving_models.write_model(repo, "mlp_cuda_as_cpu", 1, mlp_cuda,
                                   'parameters { key: "provider" value: { string_value: "cpu" } }\n')
        serving_models.write_model(repo, "mlp_as_cuda", 1, mlp,
                                   'parameters { key: "provider" value: { string_value: "cuda" } }\n'
                                   'parameters { key: "graph_capture" value: { string_value: "false" } }\n')
    # Verbose: the backend logs how each run bound its tensors.
    with TritonServer(repo, BUILD, poll=True, extra_args=["--log-verbose=1"]) as server:
        http = httpclient.InferenceServerClient(server.http_url, connection_timeout=TIMEOUT_S,
                                                network_timeout=TIMEOUT_S)
        grpc = grpcclient.InferenceServerClient(server.grpc_url)
        wait_until(lambda: all(http.is_model_ready(m) for m in GOOD_MODELS), 60,
                   "the good models to load:\n" + server.log_tail())
        yield dict(server=server, http=http, grpc=grpc, repo=repo, mlp_v2=mlp_v2, minilm=minilm,
                   symbolic=symbolic.parent)
        grpc.close()
        http.close()


def infer(client, model, arrays, outputs=("result0",)):
    module = httpclient if isinstance(client, httpclient.InferenceServerClient) else grpcclient
    inputs = []
    for name, array in arrays.items():
        i = module.InferInput(name, list(array.shape), {np.float32: "FP32", np.int64: "INT64",
                                                        np.float64: "FP64", np.int32: "INT32"}[array.dtype.type])
        i.set_data_from_numpy(array)
        inputs.append(i)
    requested = [module.InferRequestedOutput(o) for o in outputs]
    kwargs = {"client_timeout": TIMEOUT_S} if module is grpcclient else {}
    result = client.infer(model, inputs, outputs=requested, **kwargs)
    return [result.as_numpy(o) for o in outputs]


def minilm_reference(path, arrays):
    """brt.Session on the executable directly: the batch padded with masked
    rows to the smallest function that holds it."""
    import brt

    rows, seq = arrays["input_ids"].shape
    batch = min(b for b in MINILM_BATCHES if b >= rows)
    padded = [np.concatenate([arrays[n], np.zeros((batch - rows, seq), np.int64)])
              for n in ("input_ids", "attention_mask", "token_type_ids")]
    (out,) = brt.Session(str(path)).run(*padded)
    return out[:rows]


def test_config_is_completed_from_the_executable(served):
    config = served["http"].get_model_config("mlp")
    assert config["max_batch_size"] == 8  # its functions take batches 1, 4 and 8
    assert [(i["name"], i["data_type"], i["dims"]) for i in config["input"]] == [("x", "TYPE_FP32", [32])]
    assert [(o["name"], o["data_type"], o["dims"]) for o in config["output"]] == [("result0", "TYPE_FP32", [10])]
    minilm = served["grpc"].get_model_config("minilm", as_json=True)["config"]
    assert minilm["max_batch_size"] == 8
    # No scheduler configured: dynamic batching, preferring the batches the
    # executable has functions for.
    assert [int(b) for b in minilm["dynamic_batching"]["preferred_batch_size"]] == [1, 8]
    assert [(i["name"], i["data_type"], [int(d) for d in i["dims"]]) for i in minilm["input"]] == \
        [(n, "TYPE_INT64", [-1]) for n in ("input_ids", "attention_mask", "token_type_ids")]
    # One function chosen by parameter: no batch dimension, its whole shape.
    fixed = served["http"].get_model_config("mlp_fixed")
    assert fixed["max_batch_size"] == 0 and fixed["input"][0]["dims"] == [4, 32]
    # A symbolic batch: the backend's default max_batch_size (64).
    symbolic = served["http"].get_model_config("mlp_any")
    assert symbolic["max_batch_size"] == 64 and "dynamic_batching" in symbolic
    assert [(i["name"], i["data_type"], i["dims"]) for i in symbolic["input"]] == [("x", "TYPE_FP32", [64])]
    assert [(o["name"], o["dims"]) for o in symbolic["output"]] == [("probabilities", [10])]
    whole = served["http"].get_model_config("mlp_any_whole")
    assert whole["max_batch_size"] == 0 and whole["output"][0]["dims"] == [-1, 10]


def test_one_session_per_model_and_the_parameters_applied(served):
    """The model's two instances share the Session loaded once; 'threads'
    reaches SessionOptions and 'provider' the providers loaded (with
    'graph_capture' off, which CPU runs do not use)."""
    log = served["server"].log_text()
    assert log.count("model 'mlp' version 1 (model.brtx) loaded: 3 function(s)") == 1
    assert "Starting backend thread for mlp_0_0 " in log and "Starting backend thread for mlp_0_1 " in log
    assert "model 'mlp_fixed' version 1 (model.brtx) loaded: 1 function(s), max_batch_size 0, " \
           "providers cpu, threads 1" in log
    if CUDA_PROVIDER:  # 'provider' picks the providers the Session loads
        assert "model 'mlp_as_cuda' version 1 (model.brtx) loaded: 3 function(s), max_batch_size 8, " \
               "providers cuda, cpu" in log
        x = np.random.default_rng(11).standard_normal((2, 32)).astype(np.float32)
        np.testing.assert_allclose(infer(served["grpc"], "mlp_as_cuda", {"x": x})[0], mlp_reference(x, 0),
                                   rtol=1e-4, atol=1e-6)
        refused = {m["name"]: m for m in served["http"].get_model_repository_index()}["mlp_cuda_as_cpu"]
        assert refused["state"] == "UNAVAILABLE"
        assert "model 'mlp_cuda_as_cpu' version 1 (model.brtx) failed to load: " in refused["reason"]
        assert "lives on cuda, and no loaded provider can copy to it" in refused["reason"]


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_answers_match_numpy_and_brt(served, protocol):
    client = served[protocol]
    rng = np.random.default_rng(1 if protocol == "http" else 2)
    for rows in (1, 3, 8):  # 3 is padded up to the batch-4 function
        x = rng.standard_normal((rows, 32)).astype(np.float32)
        (y,) = infer(client, "mlp", {"x": x})
        assert y.shape == (rows, 10)
        np.testing.assert_allclose(y, mlp_reference(x, seed=0), rtol=1e-4, atol=1e-6)
    x = rng.standard_normal((4, 32)).astype(np.float32)
    np.testing.assert_allclose(infer(client, "mlp_fixed", {"x": x})[0], mlp_reference(x, seed=0),
                               rtol=1e-4, atol=1e-6)
    for rows, seq in ((1, 16), (2, 32), (8, 16)):
        arrays = serving_models.minilm_inputs(rng, rows, seq)
        (embedding,) = infer(client, "minilm", arrays)
        assert embedding.shape == (rows, 384)
        np.testing.assert_allclose(embedding, minilm_reference(served["minilm"], arrays), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.linalg.norm(embedding, axis=1), 1.0, rtol=1e-5)


def test_requests_filling_a_function_run_without_copies(served):
    """gRPC's buffers are aligned: a request whose rows fill a function is
    bound in place and brt writes its output into the response; a padded
    one is stacked and copied."""
    rng = np.random.default_rng(5)
    server, client = served["server"], served["grpc"]

    def logged(line):
        runs = [r for r in server.log_text().splitlines() if " runs '" in r]
        wait_until(lambda: line in server.log_text(), 10, f"{line!r} in the log; its last runs: {runs[-3:]}")

    x = rng.standard_normal((4, 32)).astype(np.float32)
    np.testing.assert_allclose(infer(client, "mlp_fixed", {"x": x})[0], mlp_reference(x, 0), rtol=1e-4, atol=1e-6)
    logged("model 'mlp_fixed' version 1 (model.brtx) runs 'main_4' for 1 request(s); "
           "in place: 1 of 1 inputs, 1 of 1 outputs")
    x = rng.standard_normal((3, 32)).astype(np.float32)
    np.testing.assert_allclose(infer(client, "mlp", {"x": x})[0], mlp_reference(x, 0), rtol=1e-4, atol=1e-6)
    logged("runs 'main_4' for 1 request(s), 3 row(s); in place: 0 of 1 inputs, 0 of 1 outputs")


def test_symbolic_batch_serves_any_rows_in_place(served):
    """One function over any batch: no padding, and a request's rows fix the
    output's shape, so over gRPC brt writes it into the response."""
    rng = np.random.default_rng(6)
    for protocol, rows in (("http", 1), ("grpc", 5), ("http", 37), ("grpc", 64)):
        x = rng.standard_normal((rows, 64)).astype(np.float32)
        (y,) = infer(served[protocol], "mlp_any", {"x": x}, outputs=("probabilities",))
        np.testing.assert_allclose(y, serving_models.symbolic_mlp_reference(served["symbolic"], x),
                                   rtol=1e-5, atol=1e-6)
    line = "model 'mlp_any' version 1 (model.brtx) runs 'mlp' for 1 request(s), 64 row(s); " \
           "in place: 1 of 1 inputs, 1 of 1 outputs"
    wait_until(lambda: line in served["server"].log_text(), 10, f"{line!r} in the log")


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_a_failed_run_fails_its_request_only(served, protocol):
    """Served whole, the symbolic MLP takes x [0, 64] past Triton's checks
    and the backend's; brt's run refuses it (b >= 1). The request fails with
    brt's message; the server and the instance go on."""
    client = served[protocol]
    with pytest.raises(InferenceServerException) as refused:
        infer(client, "mlp_any_whole", {"x": np.zeros((0, 64), np.float32)}, outputs=("probabilities",))
    assert "model 'mlp_any_whole' version 1 (model.brtx) function 'mlp' failed: shape constraint " \
           "'b >= 1' does not hold (0 >= 1 is false with b = 0)" in str(refused.value)
    assert client.is_server_live() and client.is_model_ready("mlp_any_whole")
    x = np.random.default_rng(8).standard_normal((3, 64)).astype(np.float32)
    (y,) = infer(client, "mlp_any_whole", {"x": x}, outputs=("probabilities",))
    np.testing.assert_allclose(y, serving_models.symbolic_mlp_reference(served["symbolic"], x), rtol=1e-5, atol=1e-6)


def test_gpu_instances_and_cuda_executables(served):
    """Where a GPU is visible: a KIND_GPU instance (the CPU executable runs
    on the CPU, with a warning) and a CUDA executable answer as NumPy does.
    Where none is, each fails its own load, saying so."""
    http = served["http"]
    if GPU:
        assert CUDA_PROVIDER, f"a GPU is visible, but {BUILD}/lib has no libbrt_provider_cuda.so"
        x = np.random.default_rng(9).standard_normal((3, 32)).astype(np.float32)
        for model in ("mlp_gpu", "mlp_cuda"):
            for client in (http, served["grpc"]):
                np.testing.assert_allclose(infer(client, model, {"x": x})[0], mlp_reference(x, 0),
                                           rtol=1e-4, atol=1e-6)
        assert any("is KIND_GPU on GPU" in line and "but model 'mlp_gpu' version 1" in line
                   for line in served["server"].log_text().splitlines())
        return
    index = {m["name"]: m for m in http.get_model_repository_index()}
    assert index["mlp_gpu"]["state"] == "UNAVAILABLE"
    assert "instance group mlp_gpu_0 of model mlp_gpu has kind KIND_GPU but no GPUs are available" in \
        index["mlp_gpu"]["reason"]
    if CUDA_PROVIDER:
        assert index["mlp_cuda"]["state"] == "UNAVAILABLE"
        assert "model 'mlp_cuda' version 1 (model.brtx) failed to load on providers cuda, cpu (a CUDA " \
               "executable needs a GPU the server can see): " in index["mlp_cuda"]["reason"]
    assert http.is_server_live()


def test_concurrent_clients_all_correct(served):
    """8 threads x 50 requests, HTTP and gRPC, MLP batches of 1-4 rows and
    MiniLM every fifth request; every answer checked."""
    failures = []
    minilm_cases = []

    def client_thread(index):
        rng = np.random.default_rng(100 + index)
        server = served["server"]
        client = (httpclient.InferenceServerClient(server.http_url, network_timeout=TIMEOUT_S)
                  if index % 2 == 0 else grpcclient.InferenceServerClient(server.grpc_url))
        try:
            for k in range(50):
                if k % 5 == 0:
                    arrays = serving_models.minilm_inputs(rng, int(rng.integers(1, 3)), MINILM_SEQ)
                    minilm_cases.append((arrays, infer(client, "minilm", arrays)[0]))
                    continue
                x = rng.standard_normal((int(rng.integers(1, 5)), 32)).astype(np.float32)
                (y,) = infer(client, "mlp", {"x": x})
                if y.shape != (x.shape[0], 10) or not np.allclose(y, mlp_reference(x, 0), rtol=1e-4, atol=1e-6):
                    failures.append(f"thread {index} request {k}: wrong answer")
        except Exception as e:  # noqa: BLE001 -- reported below, with the thread
            failures.append(f"thread {index}: {type(e).__name__}: {e}")
        finally:
            client.close()

    def counts():
        stats = served["http"].get_inference_statistics("mlp")["model_stats"][0]
        return (int(stats["inference_count"]), int(stats["execution_count"]),
                int(stats["inference_stats"]["success"]["count"]))

    rows_before, runs_before, requests_before = counts()
    threads = [threading.Thread(target=client_thread, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "clients still running after 300 s"
    assert not failures, "\n".join(failures)
    assert len(minilm_cases) == 80
    for arrays, embedding in minilm_cases:
        np.testing.assert_allclose(embedding, minilm_reference(served["minilm"], arrays), rtol=1e-5, atol=1e-5)
    rows, runs, requests = counts()
    assert requests - requests_before == 320
    assert rows - rows_before >= 320
    # Dynamic batching stacked requests into shared runs: fewer brt runs
    # than requests.
    assert runs - runs_before < requests - requests_before
    stats = served["http"].get_inference_statistics("mlp")["model_stats"][0]
    for phase in ("queue", "compute_input", "compute_infer", "compute_output"):
        assert int(stats["inference_stats"][phase]["ns"]) > 0, phase
    # One batch report per brt run.
    assert sum(int(b["compute_infer"]["count"]) for b in stats["batch_stats"]) == runs
    # Triton's metrics endpoint counts what the backend reported.
    with urllib.request.urlopen(f"http://127.0.0.1:{served['server'].metrics_port}/metrics") as r:
        metrics = dict(line.rsplit(" ", 1) for line in r.read().decode().splitlines()
                       if line and not line.startswith("#"))
    assert int(float(metrics['nv_inference_request_success{model="mlp",version="1"}'])) == requests
    assert int(float(metrics['nv_inference_exec_count{model="mlp",version="1"}'])) == runs


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_malformed_requests_are_refused_and_server_stays_live(served, protocol):
    client = served[protocol]
    rng = np.random.default_rng(3)
    good = serving_models.minilm_inputs(rng, 1, MINILM_SEQ)
    cases = [
        ("mlp", {"x": rng.standard_normal((2, 32))}, ["'x'", "FP64", "FP32"]),
        ("mlp", {"x": rng.standard_normal((2, 31)).astype(np.float32)}, ["'x'", "Expected [-1,32], got [2,31]"]),
        ("mlp", {"x": rng.standard_normal((9, 32)).astype(np.float32)}, ["8"]),
        ("mlp", {"y": rng.standard_normal((1, 32)).astype(np.float32)}, ["'y'"]),
        ("mlp_fixed", {"x": rng.standard_normal((2, 32)).astype(np.float32)}, ["'x'", "[4,32]"]),
        ("minilm", {k: good[k] for k in ("input_ids", "attention_mask")}, ["token_type_ids"]),
        # Passes Triton's own checks (the sequence dim is fixed only by the
        # executable's functions): refused by the brt backend.
        ("minilm", serving_models.minilm_inputs(rng, 1, 20), ["input_ids", "[1,20]", "[1,16], [1,32]"]),
    ]
    for model, arrays, expected in cases:
        with pytest.raises(InferenceServerException) as refused:
            infer(client, model, arrays)
        message = str(refused.value)
        assert all(e in message for e in expected), f"{model}: {message!r} lacks {expected}"
        assert client.is_server_live()
    (embedding,) = infer(client, "minilm", good)
    np.testing.assert_allclose(embedding, minilm_reference(served["minilm"], good), rtol=1e-5, atol=1e-5)


def test_broken_models_fail_only_their_own_load(served):
    index = {m["name"]: m for m in served["http"].get_model_repository_index()}
    assert index["broken"]["state"] == "UNAVAILABLE"
    assert "model 'broken' version 1 (model.brtx) failed to load" in index["broken"]["reason"]
    refusals = {
        "mismatched": "model 'mismatched': config.pbtxt input 'x' has dims [64], model.brtx has [32] after "
                      "the batch dimension",
        "too_big": "config.pbtxt sets max_batch_size 16, but model.brtx's largest batch is 8 (function 'main_8')",
        "wrong_type": "config.pbtxt input 'x' is TYPE_INT32, model.brtx has TYPE_FP32 (f32)",
        "bad_parameter": "config.pbtxt parameter 'thread' is not one the brt backend takes",
    }
    for model, reason in refusals.items():
        assert index[model]["state"] == "UNAVAILABLE"
        assert reason in index[model]["reason"], index[model]["reason"]
    for good in ("mlp", "minilm", "mlp_fixed"):
        assert index[good]["state"] == "READY"
    assert served["http"].is_server_live()


def test_a_server_that_cannot_start_fails_saying_why(tmp_path):
    with pytest.raises(ServerError) as failed:
        with TritonServer(tmp_path, BUILD, extra_args=["--no-such-flag"]):
            pass
    assert "tritonserver exited with code 1 while starting" in str(failed.value)
    assert "unrecognized option '--no-such-flag'" in str(failed.value)
    with pytest.raises(ServerError, match="libtriton_brt.so is missing: build the triton_brt target"):
        with TritonServer(tmp_path, tmp_path):
            pass


def test_the_installed_backend_serves(tmp_path, monkeypatch):
    """`cmake --install` lays out <prefix>/backends/brt, which the server
    takes as its --backend-directory, finding libbrt and the providers in
    <prefix>/lib by the backend's RPATH alone."""
    cmake = shutil.which("cmake")
    assert cmake, "cmake is not on PATH: it installs the backend for this test"
    prefix = tmp_path / "prefix"
    subprocess.run([cmake, "--install", str(BUILD), "--prefix", str(prefix)], check=True, capture_output=True)
    backend = prefix / "backends" / "brt" / "libtriton_brt.so"
    assert backend.is_file()
    symbolic = serving_models.make_symbolic_mlp(BUILD, tmp_path / "symbolic")
    serving_models.write_model(tmp_path / "repository", "mlp_any", 1, symbolic)
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)  # the RPATH alone finds libbrt
    with TritonServer(tmp_path / "repository", BUILD, backend_directory=prefix / "backends") as server:
        client = httpclient.InferenceServerClient(server.http_url)
        wait_until(lambda: client.is_model_ready("mlp_any"), 60, "the model to load:\n" + server.log_tail())
        x = np.random.default_rng(10).standard_normal((3, 64)).astype(np.float32)
        (y,) = infer(client, "mlp_any", {"x": x}, outputs=("probabilities",))
        np.testing.assert_allclose(y, serving_models.symbolic_mlp_reference(symbolic.parent, x), rtol=1e-5, atol=1e-6)
        assert f"| brt     | {backend} |" in server.log_text()
        client.close()


def test_new_version_dropped_in_is_served(served):
    """Runs last: replaces the MLP's weights."""
    http = served["http"]
    serving_models.write_model(served["repo"], "mlp", 2, served["mlp_v2"],
                               "dynamic_batching { max_queue_delay_microseconds: 2000 }\n")
    wait_until(lambda: http.is_model_ready("mlp", "2") and not http.is_model_ready("mlp", "1"), 60,
               "version 2 of 'mlp' to replace version 1:\n" + served["server"].log_tail())
    x = np.random.default_rng(4).standard_normal((5, 32)).astype(np.float32)
    for client in (http, served["grpc"]):
        (y,) = infer(client, "mlp", {"x": x})
        np.testing.assert_allclose(y, mlp_reference(x, seed=1), rtol=1e-4, atol=1e-6)
        assert not np.allclose(y, mlp_reference(x, seed=0), rtol=1e-3)
    assert http.is_server_live()
