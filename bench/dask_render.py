"""Point-cloud renders fanned out on Dask: 200 synthetic scans of 120,000 points, both views
drawn (PNG encoding included) by the render stage's own `draw_all`, on a LocalCluster of 1 and
then 2 single-threaded worker processes. Prints the wall time of each, the speed-up (target: at
least 1.7x with 2 workers on 2 cores) and each worker's peak resident memory (target: under
500 MB). Cluster start-up is timed apart: it is paid once per run, and only by a run that draws.

    .venv/bin/python bench/dask_render.py [--scans 200] [--points 120000]
"""

from __future__ import annotations

import argparse
import logging
import resource
import tempfile
import time
from pathlib import Path

from roadeval.benchmarks.drawing import job_key
from roadeval.benchmarks.pointcloud import DEFAULT_FRAME, RENDER_VERSION, synthetic_scan
from roadeval.benchmarks.trip.scan_views import SCAN_FIELD, ScanViews
from roadeval.tasks.render_cluster import RenderConfig, draw_all

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


def timed(jobs: list[ScanViews], workers: int) -> tuple[float, float, list[float], bytes]:
    from distributed import Client, LocalCluster

    start = time.perf_counter()
    cluster = LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
        silence_logs=logging.ERROR,
    )
    client = Client(cluster)
    startup = time.perf_counter() - start
    config = RenderConfig(address=cluster.scheduler_address)
    draw_all(jobs[:workers], config)  # warm each worker's imports
    start = time.perf_counter()
    outcomes = draw_all(jobs, config)
    elapsed = time.perf_counter() - start
    memory = sorted(client.run(peak_rss_mb).values())
    client.close()
    cluster.close()
    first = outcomes[0]
    assert isinstance(first, tuple), first
    return startup, elapsed, memory, first[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scans", type=int, default=200)
    parser.add_argument("--points", type=int, default=120_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        jobs = write_scans(Path(folder), args.scans, args.points)
        print(f"{args.scans} scans of {args.points:,} points, both views, PNG included")
        results = {workers: timed(jobs, workers) for workers in (1, 2)}
    for workers, (startup, elapsed, memory, _) in results.items():
        peak = ", ".join(f"{m:.0f}" for m in memory)
        print(
            f"  {workers} worker(s): {elapsed:6.2f} s ({1000 * elapsed / args.scans:.1f} ms a scan)"
            f"   cluster start {startup:.1f} s   worker peak RSS MB: {peak}"
        )
    speedup = results[1][1] / results[2][1]
    same = results[1][3] == results[2][3]
    worst = max(m for _, _, memory, _ in results.values() for m in memory)
    print(f"speed-up with 2 workers: {speedup:.2f}x (target at least {SPEEDUP_TARGET}x)")
    print(f"largest worker peak RSS: {worst:.0f} MB (target under {WORKER_MEMORY_TARGET_MB} MB)")
    print(f"first scan's BEV bytes identical on 1 and 2 workers: {same}")


if __name__ == "__main__":
    main()
