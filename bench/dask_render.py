"""Point-cloud renders fanned out on Dask: 200 synthetic scans of 120,000 points, both views
drawn (PNG encoding included) by the render stage's own `draw_all`, on LocalClusters of 1 and of
2 single-threaded worker processes, in alternating rounds (this host is noisy: medians). Prints
the wall time of each, the speed-up (target: at least 1.7x with 2 workers on 2 cores) and each
worker's peak resident memory (target: under 500 MB). Cluster start-up is timed apart: it is
paid once per run, and only by a run that draws.

    .venv/bin/python bench/dask_render.py [--scans 200] [--points 120000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import time
from pathlib import Path

from roadeval.benchmarks.drawing import job_key
from roadeval.benchmarks.pointcloud import DEFAULT_FRAME, RENDER_VERSION, synthetic_scan
from roadeval.benchmarks.trip.scan_views import SCAN_FIELD, ScanViews
from roadeval.tasks.render import cluster as render_cluster
from roadeval.tasks.render.cluster import RenderConfig, draw_all, local_cluster

SPEEDUP_TARGET = 1.7
WORKER_MEMORY_TARGET_MB = 500


def write_scans(root: Path, count: int, points: int) -> list[ScanViews]:
    jobs = []
    for seed in range(count):
        path = root / f"scan_{seed:04d}.bin"
        path.write_bytes(synthetic_scan(seed, points).astype("<f4").tobytes())
        key = job_key(RENDER_VERSION, f"bench-{seed}", DEFAULT_FRAME.name)
        jobs.append(ScanViews(key, str(path), SCAN_FIELD, ("bev", "front"), DEFAULT_FRAME))
    return jobs


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def start_cluster(workers: int) -> tuple[object, object, float]:
    from distributed import Client

    start = time.perf_counter()
    cluster = local_cluster(workers)
    return cluster, Client(cluster), time.perf_counter() - start


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
    args = parser.parse_args()
    if args.batch is not None:
        render_cluster.JOBS_PER_TASK = args.batch
    with tempfile.TemporaryDirectory() as folder:
        jobs = write_scans(Path(folder), args.scans, args.points)
        print(f"{args.scans} scans of {args.points:,} points, both views, PNG included;")
        print(f"{args.rounds} rounds, 1 and 2 workers alternating (medians; this host is noisy)")
        clusters = {workers: start_cluster(workers) for workers in (1, 2)}
        times: dict[int, list[float]] = {1: [], 2: []}
        firsts: dict[int, bytes] = {}
        for workers, (cluster, _, _) in clusters.items():
            draw_timed(jobs[:workers], cluster.scheduler_address)  # type: ignore[attr-defined]
        for _ in range(args.rounds):
            for workers, (cluster, _, _) in clusters.items():
                address = cluster.scheduler_address  # type: ignore[attr-defined]
                elapsed, firsts[workers] = draw_timed(jobs, address)
                times[workers].append(elapsed)
        memory = {
            workers: sorted(client.run(peak_rss_mb).values())  # type: ignore[attr-defined]
            for workers, (_, client, _) in clusters.items()
        }
        for cluster, client, _ in clusters.values():
            client.close()  # type: ignore[attr-defined]
            cluster.close()  # type: ignore[attr-defined]
    for workers in (1, 2):
        median = statistics.median(times[workers])
        each = ", ".join(f"{t:.2f}" for t in times[workers])
        peak = ", ".join(f"{m:.0f}" for m in memory[workers])
        print(
            f"  {workers} worker(s): median {median:5.2f} s ({1000 * median / args.scans:.1f} ms "
            f"a scan; rounds {each})   cluster start {clusters[workers][2]:.1f} s   "
            f"worker peak RSS MB: {peak}"
        )
    speedup = statistics.median(times[1]) / statistics.median(times[2])
    worst = max(m for values in memory.values() for m in values)
    print(f"speed-up with 2 workers: {speedup:.2f}x (target at least {SPEEDUP_TARGET}x)")
    print(f"largest worker peak RSS: {worst:.0f} MB (target under {WORKER_MEMORY_TARGET_MB} MB)")
    print(f"first scan's BEV bytes identical on 1 and 2 workers: {firsts[1] == firsts[2]}")


if __name__ == "__main__":
    main()
