"""RoadBench task 3 scored on Ray, with 1 and then 2 workers, through the run's own scoring
path (`RemoteScoring`: batches, one Ray task per batch); prints the time for each and the
speed-up. Items have the RoadBench bench's heavy shape (5-20 lines of 2-30 vertices).

Ray probes outside addresses: run it inside the loopback-only namespace.

    ../shared/scripts/loopback-only .venv/bin/python bench/ray_scoring.py [--items 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import random
import sys
import tempfile
import time
from pathlib import Path

import ray

from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.registry import get_suite
from roadeval.storage.store import LocalStore
from roadeval.tasks.remote_scoring import RemoteScoring, ScoreInput, ScoringConfig
from roadeval.tasks.stopping import StopSignal

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
    args = parser.parse_args()
    cases = synthesise("3", args.items, random.Random(args.seed), NetworkShape())
    entries = [ScoreInput(item, parsed, ModelOutput("")) for item, parsed in cases]
    print(f"{args.items} task-3 items (5-20 lines of 2-30 vertices), {args.batch} per Ray task")
    times = {}
    for workers in (1, 2):
        times[workers] = time_workers(workers, entries, args.batch)
        per_item = 1000 * times[workers] / args.items
        print(f"{workers} worker(s): {times[workers]:7.2f} s   {per_item:6.2f} ms per item")
    print(f"speed-up with 2 workers: {times[1] / times[2]:.2f}x (target at least 1.8x)")


if __name__ == "__main__":
    main()
