"""Point-cloud renders fanned out on Dask: 200 synthetic scans of 120,000 points, both views
drawn (PNG encoding included) by the render stage's own `draw_all`, on LocalClusters of 1 and of
2 single-threaded worker processes, in alternating rounds (this host is noisy: medians). Prints
the wall time of each, the speed-up (target: at least 1.7x with 2 workers on 2 cores) and each
worker's peak resident memory (target: under 500 MB). Cluster start-up is timed apart: it is
paid once per run, and only by a run that draws.

With `--address` the clusters are external, as a user's are: a `dask scheduler` process and
`dask worker` processes (1, and then 2), each in a working directory of its own, reached by
address. The workers here find the scans' files (the same machine) and read them themselves
once their sha256 is checked, as in a run; `--ship` sends every scan's bytes instead, as to
workers on other machines.

    .venv/bin/python bench/dask_render.py [--address] [--ship] [--scans 200] [--points 120000]
        [--rounds 3]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from roadeval.benchmarks.drawing import job_key
from roadeval.benchmarks.pointcloud import DEFAULT_FRAME, RENDER_VERSION, synthetic_scan
from roadeval.benchmarks.trip.scan_views import SCAN_FIELD, ScanViews
from roadeval.tasks.render import cluster as render_cluster
from roadeval.tasks.render.cluster import RenderConfig, draw_all, local_cluster

SPEEDUP_TARGET = 1.7
WORKER_MEMORY_TARGET_MB = 500


def write_scans(root: Path, count: int, points: int, seen: bool) -> list[ScanViews]:
    jobs = []
    for seed in range(count):
        path = root / f"scan_{seed:04d}.bin"
        data = synthetic_scan(seed, points).astype("<f4").tobytes()
        path.write_bytes(data)
        digest = hashlib.sha256(data).hexdigest() if seen else None
        key = job_key(RENDER_VERSION, f"bench-{seed}", DEFAULT_FRAME.name)
        views = ("bev", "front")
        job = ScanViews(key, str(path), SCAN_FIELD, views, DEFAULT_FRAME, input_sha256=digest)
        jobs.append(job)
    return jobs


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Cluster:
    """A cluster of `workers` single-threaded worker processes, reached by its address: a
    LocalCluster, or (`external`) scheduler and worker processes started here."""

    def __init__(self, workers: int, external: bool, root: Path) -> None:
        from distributed import Client

        start = time.perf_counter()
        self.local: Any = None
        self.processes: list[subprocess.Popen[bytes]] = []
        if external:
            self.address = self._start_processes(workers, root / f"cluster-{workers}")
        else:
            self.local = local_cluster(workers)
            self.address = self.local.scheduler_address
        self.client: Any = Client(self.address, timeout=30)
        self.client.wait_for_workers(workers, timeout=120)
        self.start_s = time.perf_counter() - start

    def _start_processes(self, workers: int, root: Path) -> str:
        port = free_port()
        address = f"tcp://127.0.0.1:{port}"
        scheduler = ["scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"]
        worker = ["worker", address, "--nthreads", "1", "--nworkers", "1"]
        worker += ["--no-dashboard", "--host", "127.0.0.1", "--local-directory", "."]
        commands = [("scheduler", scheduler)]
        commands += [(f"worker-{n}", worker) for n in range(1, workers + 1)]
        for name, args in commands:
            folder = root / name
            folder.mkdir(parents=True)
            self.processes.append(
                subprocess.Popen(
                    [str(Path(sys.executable).parent / "dask"), *args],
                    cwd=folder,
                    stdout=(folder / "log.txt").open("wb"),
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        return address

    def close(self) -> None:
        self.client.close()
        if self.local is not None:
            self.local.close()
        for process in reversed(self.processes):
            os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            process.wait(timeout=30)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def draw_timed(jobs: list[ScanViews], address: str) -> tuple[float, bytes]:
    start = time.perf_counter()
    outcomes = draw_all(jobs, RenderConfig(address=address))
    elapsed = time.perf_counter() - start
    first = outcomes[0]
    assert isinstance(first, tuple), first
    return elapsed, first[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scans", type=int, default=200)
    parser.add_argument("--points", type=int, default=120_000)
    parser.add_argument("--batch", type=int, default=None, help="drawings per Dask task")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--address",
        action="store_true",
        help="external `dask scheduler` and `dask worker` processes, reached by address",
    )
    parser.add_argument(
        "--ship",
        action="store_true",
        help="send every scan's bytes (as to workers on other machines); else workers that "
        "find the very file read it themselves",
    )
    args = parser.parse_args()
    if args.batch is not None:
        render_cluster.JOBS_PER_TASK = args.batch
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "scans").mkdir()
        jobs = write_scans(Path(folder) / "scans", args.scans, args.points, not args.ship)
        kind = "external scheduler and worker processes" if args.address else "LocalClusters"
        kind += ", every scan's bytes sent" if args.ship else ", workers reading the scans"
        print(f"{args.scans} scans of {args.points:,} points, both views, PNG included, on {kind};")
        print(f"{args.rounds} rounds, 1 and 2 workers alternating (medians; this host is noisy)")
        clusters = {workers: Cluster(workers, args.address, Path(folder)) for workers in (1, 2)}
        times: dict[int, list[float]] = {1: [], 2: []}
        firsts: dict[int, bytes] = {}
        try:
            for workers, cluster in clusters.items():
                draw_timed(jobs[:workers], cluster.address)
            for _ in range(args.rounds):
                for workers, cluster in clusters.items():
                    elapsed, firsts[workers] = draw_timed(jobs, cluster.address)
                    times[workers].append(elapsed)
            memory = {
                workers: sorted(cluster.client.run(peak_rss_mb).values())
                for workers, cluster in clusters.items()
            }
        finally:
            for cluster in clusters.values():
                cluster.close()
    for workers in (1, 2):
        median = statistics.median(times[workers])
        each = ", ".join(f"{t:.2f}" for t in times[workers])
        peak = ", ".join(f"{m:.0f}" for m in memory[workers])
        print(
            f"  {workers} worker(s): median {median:5.2f} s ({1000 * median / args.scans:.1f} ms "
            f"a scan; rounds {each})   cluster start {clusters[workers].start_s:.1f} s   "
            f"worker peak RSS MB: {peak}"
        )
    speedup = statistics.median(times[1]) / statistics.median(times[2])
    worst = max(m for values in memory.values() for m in values)
    print(f"speed-up with 2 workers: {speedup:.2f}x (target at least {SPEEDUP_TARGET}x)")
    print(f"largest worker peak RSS: {worst:.0f} MB (target under {WORKER_MEMORY_TARGET_MB} MB)")
    print(f"first scan's BEV bytes identical on 1 and 2 workers: {firsts[1] == firsts[2]}")


if __name__ == "__main__":
    main()
