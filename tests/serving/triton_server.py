"""Starts and stops the real Triton Inference Server (the tritonserver
binary of nvidia-pytriton's wheel, scripts/bootstrap.sh) on free loopback
ports, with brt's backend from the build tree: for the serving test and
bench/triton_serving.py."""
import importlib.util
import os
import pathlib
import re
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
import urllib.error
import urllib.request


class ServerError(RuntimeError):
    pass


def tritonserver_dir():
    spec = importlib.util.find_spec("pytriton")  # its package runs nothing when found
    if spec is None or not spec.submodule_search_locations:
        raise ServerError("nvidia-pytriton is not installed, so there is no tritonserver: "
                          "run scripts/bootstrap.sh")
    directory = pathlib.Path(spec.submodule_search_locations[0]) / "tritonserver"
    if not os.access(directory / "bin" / "tritonserver", os.X_OK):
        raise ServerError(f"{directory}/bin/tritonserver is missing or not executable")
    return directory


def brt_backend_dir(build_dir):
    """build/backends/brt, where CMake puts libtriton_brt.so."""
    directory = pathlib.Path(build_dir).resolve() / "backends" / "brt"
    if not (directory / "libtriton_brt.so").is_file():
        raise ServerError(f"{directory}/libtriton_brt.so is missing: build the triton_brt target "
                          "(BRT_BUILD_TRITON_BACKEND, needs nlohmann-json3-dev)")
    return directory


def free_ports(count):
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


class TritonServer:
    """`with TritonServer(repository, build_dir) as server:` serves the
    repository on 127.0.0.1 (server.http_url, server.grpc_url) and stops the
    server on leaving, however the block ends. `python_backend=True` adds
    Triton's Python backend, its stub running this Python (its libpython,
    so its packages); `poll=True` reloads models whose files change;
    `backend_directory` is passed to the server as it is (an installed
    <prefix>/backends), instead of one made with build_dir's brt."""

    def __init__(self, repository, build_dir, python_backend=False, poll=False, start_timeout=60,
                 extra_args=(), backend_directory=None):
        self.repository = pathlib.Path(repository)
        self.build_dir = build_dir
        self.backend_directory = backend_directory
        self.python_backend = python_backend
        self.poll = poll
        self.start_timeout = start_timeout
        self.extra_args = list(extra_args)
        self.process = None
        self._scratch = None

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def _backend_directory(self):
        """A --backend-directory with brt (and the Python backend)."""
        root = pathlib.Path(self._scratch.name) / "backends"
        root.mkdir()
        (root / "brt").symlink_to(brt_backend_dir(self.build_dir))
        if self.python_backend:
            server = tritonserver_dir()
            python = root / "python"
            python.mkdir()
            for f in (server / "backends" / "python").iterdir():
                if f.is_file():
                    (python / f.name).symlink_to(f)
            stub = server / "python_backend_stubs" / f"{sys.version_info.major}.{sys.version_info.minor}"
            (python / "triton_python_backend_stub").symlink_to(stub / "triton_python_backend_stub")
        return root

    def start(self):
        binary = tritonserver_dir() / "bin" / "tritonserver"
        self._scratch = tempfile.TemporaryDirectory(prefix="brt-triton-")
        self.http_port, self.grpc_port, self.metrics_port = free_ports(3)
        self.http_url = f"127.0.0.1:{self.http_port}"
        self.grpc_url = f"127.0.0.1:{self.grpc_port}"
        self.log_path = pathlib.Path(self._scratch.name) / "server.log"
        args = [str(binary), f"--model-repository={self.repository}",
                f"--backend-directory={self.backend_directory or self._backend_directory()}",
                "--http-address=127.0.0.1", f"--http-port={self.http_port}",
                "--grpc-address=127.0.0.1", f"--grpc-port={self.grpc_port}",
                "--metrics-address=127.0.0.1", f"--metrics-port={self.metrics_port}",
                # A model that fails to load must not take the server down.
                "--exit-on-error=false", "--strict-readiness=false", "--exit-timeout-secs=10",
                "--allow-gpu-metrics=false"]
        if self.poll:
            args += ["--model-control-mode=poll", "--repository-poll-secs=1"]
        args += self.extra_args
        env = dict(os.environ)
        if self.python_backend:
            # The wheel's stub links libpython3.X.so.1.0 by name: this one's.
            libdir = sysconfig.get_config_var("LIBDIR")
            env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [libdir, env.get("LD_LIBRARY_PATH")]))
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServerError(f"tritonserver exited with code {self.process.returncode} while "
                                  f"starting{self.why()}")
            if self.live():
                return
            time.sleep(0.2)
        raise ServerError(f"tritonserver was not live after {self.start_timeout} s{self.why()}")

    def live(self):
        try:
            with urllib.request.urlopen(f"http://{self.http_url}/v2/health/live", timeout=2) as r:
                return r.status == 200
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    def log_tail(self, lines=60):
        self.log.flush()
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def why(self):
        """The log's errors (Triton's E lines, a refused option, whose usage
        text would push it out of the tail), then its last lines."""
        errors = [line for line in self.log_text().splitlines()
                  if re.match(r"E\d{4} ", line) or "unrecognized option" in line
                  or "invalid argument" in line.lower()]
        return (":\n" + "\n".join(errors[:20]) if errors else "") + \
            f"\n--- the server log's last lines:\n{self.log_tail()}"

    def log_text(self):
        self.log.flush()
        return self.log_path.read_text(errors="replace")

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        if self._scratch is not None:
            log = getattr(self, "log", None)
            if log is not None and not log.closed:
                log.close()
            self._scratch.cleanup()
            self._scratch = None


def wait_until(predicate, timeout, what):
    """Polls `predicate` until it returns true; ServerError naming `what`
    after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.25)
    raise ServerError(f"timed out after {timeout} s waiting for {what}")
