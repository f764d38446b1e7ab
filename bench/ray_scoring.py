"""RoadBench task 3 scored on Ray, with 1 and 2 workers in alternating runs (medians: this host is
noisy), through the run's own scoring path (`RemoteScoring`: batches, one Ray task per batch);
prints the time for each and the speed-up. Items have the RoadBench bench's heavy shape (5-20
lines of 2-30 vertices).

Ray probes outside addresses: run it inside the loopback-only namespace.

    ../shared/scripts/loopback-only .venv/bin/python bench/ray_scoring.py [--items N] [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import ray

from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.registry import get_suite
from roadeval.storage.store import LocalStore
from roadeval.tasks.calls.stopping import StopSignal
from roadeval.tasks.shard.remote_scoring import RemoteScoring, ScoreInput, ScoringConfig

sys.path.insert(0, str(Path(__file__).parent))

from roadbench_scoring import NetworkShape, synthesise


def time_workers(workers: int, entries: list[ScoreInput], batch: int) -> float:
    ray.init(
        num_cpus=workers,
        include_dashboard=False,
        object_store_memory=256 * 2**20,
        log_to_driver=False,
        logging_level=logging.ERROR,
    )
    try:
        with tempfile.TemporaryDirectory() as folder:
            config = ScoringConfig(batch_size=batch)
            remote = RemoteScoring(config, LocalStore(Path(folder)), "bench", StopSignal())
            suite = get_suite("roadbench")
            # Warm up: one batch per worker, so that every worker process is up.
            asyncio.run(remote.score(suite, entries[: batch * workers], judged=False))
            started = time.perf_counter()
            outputs = asyncio.run(remote.score(suite, entries, judged=False))
            elapsed = time.perf_counter() - started
            assert len(outputs) == len(entries)
            return elapsed
    finally:
        ray.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=2, help="alternating 1- and 2-worker runs")
    args = parser.parse_args()
    cases = synthesise("3", args.items, random.Random(args.seed), NetworkShape())
    entries = [ScoreInput(item, parsed, ModelOutput("")) for item, parsed in cases]
    print(f"{args.items} task-3 items (5-20 lines of 2-30 vertices), {args.batch} per Ray task")
    # This host is noisy: 1- and 2-worker runs alternate, and the medians are compared.
    times: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(args.rounds):
        for workers in (1, 2):
            times[workers].append(time_workers(workers, entries, args.batch))
    for workers in (1, 2):
        median = statistics.median(times[workers])
        each = ", ".join(f"{t:.2f}" for t in times[workers])
        per_item = 1000 * median / args.items
        print(f"{workers} worker(s): {median:7.2f} s   {per_item:6.2f} ms per item   (runs {each})")
    speedup = statistics.median(times[1]) / statistics.median(times[2])
    print(f"speed-up with 2 workers: {speedup:.2f}x (target at least 1.8x)")


if __name__ == "__main__":
    main()
