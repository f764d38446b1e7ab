"""Clusters as a user runs them, for tests: `dask scheduler` and `dask worker` processes, and a
Ray head (`ray start --head`) with a worker node, each process in a working directory of its
own, reached by address.

A worker may be started `hiding` a folder: it runs in a mount namespace of its own where that
folder (the test session's, holding every scan, image and store of the run) is an empty
tmpfs, so a worker that reached for one of the run's files would fail, as it would on another
machine. That needs root (unshare), as the loopback-only namespace Ray runs in does.

Ray's nodes keep their files, and the address file `ray start` writes, in a temporary folder of
their own: the machine's default one (/tmp/ray) would make every `ray.init()` on it, other
sessions' included, connect to this cluster.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

BIN = Path(sys.executable).parent

# What a cluster's processes must not inherit from the test session: its folders and modules.
_SESSION_ONLY = ("ROADEVAL_DEMO_DIR", "ROADEVAL_MEDIA_CACHE", "ROADEVAL_STORE", "PYTHONPATH")


@dataclass
class ExternalClusters:
    """A session's clusters (the `external_clusters` fixture), started and coming up: a test
    may start other work before it waits for them (`ready`)."""

    dask: DaskCluster
    ray: RayCluster
    workers: int
    _ready: bool = False

    def ready(self) -> ExternalClusters:
        """Once both clusters are up (their workers joined): this."""
        if not self._ready:
            self.dask.wait_ready(self.workers)
            self.ray.wait_ready()
            self._ready = True
        return self

    @property
    def dask_address(self) -> str:
        return self.dask.address

    @property
    def ray_address(self) -> str:
        return self.ray.address

    def stop(self) -> None:
        self.dask.processes.stop()
        self.ray.stop()


def loopback_only() -> bool:
    """Whether this process's network namespace has loopback alone (where Ray may start)."""
    return [name for _, name in socket.if_nameindex()] == ["lo"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def can_hide() -> bool:
    """Whether workers can be started with a folder hidden (root, and unshare present)."""
    return os.geteuid() == 0 and shutil.which("unshare") is not None


def cluster_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _SESSION_ONLY}
    env.update(HOME=str(home), RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="disabled")
    return env


@dataclass
class Processes:
    """Processes started for one cluster, each in its own process group, stopped together."""

    root: Path
    started: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start(self, name: str, command: Sequence[str], hiding: Path | None = None) -> Path:
        """Start `command` in `root/name` (its working directory, with its log); with
        `hiding`, in a mount namespace where that folder is an empty tmpfs and the working
        directory is made inside it."""
        folder = self.root / name
        folder.mkdir(parents=True)
        log = folder / "log.txt"
        argv = list(command)
        cwd: Path | None = folder
        if hiding is not None:
            inside = hiding / f"{name}-workdir"
            script = 'mount -t tmpfs tmpfs "$1" && mkdir -p "$2" && cd "$2" && shift 2 && exec "$@"'
            argv = ["unshare", "-m", "--", "bash", "-c", script, "_", str(hiding), str(inside)]
            argv += list(command)
            cwd = None
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=cluster_env(folder),
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.started.append(process)
        return log

    def stop(self) -> None:
        for process in reversed(self.started):
            _signal_group(process, signal.SIGTERM)
        # A few seconds for a clean exit: Ray's processes take that, Dask's less.
        deadline = time.monotonic() + 3
        for process in self.started:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            # `ray start --block` outlives its SIGTERM'd children; anything left goes now.
            _signal_group(process, signal.SIGKILL)
            process.wait(timeout=10)


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signum)


@dataclass
class DaskCluster:
    """`dask scheduler` with `workers` single-threaded `dask worker` processes."""

    address: str
    processes: Processes

    @classmethod
    def start(cls, root: Path, workers: int, hiding: Path | None = None) -> DaskCluster:
        port = free_port()
        address = f"tcp://127.0.0.1:{port}"
        processes = Processes(root)
        dask = str(BIN / "dask")
        processes.start(
            "scheduler",
            [dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
        )
        for n in range(1, workers + 1):
            worker = [dask, "worker", address, "--nthreads", "1", "--nworkers", "1"]
            worker += ["--no-dashboard", "--host", "127.0.0.1", "--local-directory", "."]
            processes.start(f"worker-{n}", worker, hiding)
        return cls(address, processes)

    def wait_ready(self, workers: int, timeout: float = 90.0) -> None:
        from distributed import Client

        with Client(self.address, timeout=timeout) as client:
            client.wait_for_workers(workers, timeout=timeout)


class RayCluster:
    """A head with `head_cpus` (by default none: it runs the run's judge actor, never a task)
    and a worker node with `cpus`, so that every scoring task runs on the worker. The worker
    node joins once the head listens, in the background: `wait_ready` waits for both."""

    def __init__(
        self, root: Path, cpus: int, hiding: Path | None = None, head_cpus: int = 0
    ) -> None:
        port = free_port()
        self.address = f"127.0.0.1:{port}"
        # Short: Ray's socket paths live below it, and a socket path has at most 107 bytes.
        self.temp = Path(tempfile.mkdtemp(prefix="rayc-", dir="/tmp"))
        self.processes = Processes(root)
        ray = str(BIN / "ray")
        common = ["--node-ip-address", "127.0.0.1", "--block", "--disable-usage-stats"]
        head = [ray, "start", "--head", "--port", str(port), "--num-cpus", str(head_cpus)]
        head += ["--include-dashboard=false", "--temp-dir", str(self.temp / "head"), *common]
        self.logs = [self.processes.start("head", head)]
        worker = [ray, "start", "--address", self.address, "--num-cpus", str(cpus)]
        worker += ["--temp-dir", str(self.temp / "worker"), *common]
        self._worker_command = worker
        self._hiding = hiding
        self._restarts = 0
        self._killed: list[subprocess.Popen[bytes]] = []
        self._failure: BaseException | None = None
        self._joining = threading.Thread(
            target=self._join, args=(port, worker, hiding), name="ray-worker-node", daemon=True
        )
        self._joining.start()

    @classmethod
    def start(
        cls, root: Path, cpus: int, hiding: Path | None = None, head_cpus: int = 0
    ) -> RayCluster:
        return cls(root, cpus, hiding, head_cpus)

    def _join(self, port: int, worker: list[str], hiding: Path | None) -> None:
        try:
            _wait_for_port(port, self.logs[0], self.processes)
            self.logs.append(self.processes.start("worker", worker, hiding))
        except BaseException as exc:
            self._failure = exc

    def wait_ready(self, timeout: float = 120.0) -> None:
        self._joining.join(timeout)
        if self._failure is not None:
            raise self._failure
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            texts = [log.read_text(errors="replace") for log in self.logs]
            if len(texts) == 2 and all("Ray runtime started" in text for text in texts):
                return
            if any(p.poll() is not None for p in self.processes.started if p not in self._killed):
                break
            time.sleep(0.2)
        raise RuntimeError("the Ray cluster did not start:\n" + _tails(self.logs))

    def kill_worker(self) -> None:
        """SIGKILL the worker node: its raylet and every worker process of it at once."""
        worker = self.processes.started[-1]
        _signal_group(worker, signal.SIGKILL)
        worker.wait(timeout=10)
        self._killed.append(worker)

    def restart_worker(self) -> None:
        """A new worker node in place of the killed one, joined (`wait_ready` waits for it)."""
        self._restarts += 1
        name = f"worker-{self._restarts}"
        command = [*self._worker_command]
        command[command.index("--temp-dir") + 1] = str(self.temp / name)
        self.logs[1] = self.processes.start(name, command, self._hiding)

    def stop(self) -> None:
        self._joining.join(130)
        self.processes.stop()
        shutil.rmtree(self.temp, ignore_errors=True)


def _wait_for_port(port: int, log: Path, processes: Processes, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if any(p.poll() is not None for p in processes.started):
                break
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}:\n" + _tails([log]))


def _tails(logs: Sequence[Path]) -> str:
    return "\n".join(f"{log}:\n{log.read_text(errors='replace')[-2000:]}" for log in logs)
