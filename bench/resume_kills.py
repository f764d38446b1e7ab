"""Resume at scale (issue 18, item 6): `--models` models on the instant server (a process of its
own, counting each distinct request it receives) over a TRIP-layout suite of `--items` text
items, through the real `roadeval run` command. The run is killed with SIGKILL at three seeded
random points (between 10% and 90% of its requests) and started again each time on the same
store; then the same panel runs uninterrupted on a fresh store.

    .venv/bin/python bench/resume_kills.py [--items 10000] [--models 5] [--seed 18]

Prints, for the killed-and-resumed store: requests sent, distinct requests, how many were sent
twice (only those in flight at a kill may be, at most the run's concurrency per kill), each
pass's wall time; and whether its metrics and per-item scores equal the uninterrupted run's.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gateway_contenders import Server, start_server
from rerun import BENCH, bench_env, query_env, write_panel
from trip_text_suite import ROADEVAL, write_text_suite


def killed_at(
    command: list[str], env: dict[str, str], server: Server, after: float, at: int, log: Path
) -> float:
    """Start the command, SIGKILL its process group once the server has seen `at` requests
    since `after`; returns its wall time."""
    started = time.perf_counter()
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        while process.poll() is None and server.arrivals(after)["count"] < at:
            time.sleep(0.02)
        if process.poll() is not None:
            raise SystemExit(f"the run ended before its kill at {at} requests; see {log}")
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    return time.perf_counter() - started


def finished(command: list[str], env: dict[str, str], log: Path) -> float:
    started = time.perf_counter()
    with log.open("wb") as out:
        code = subprocess.run(command, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
    if code != 0:
        raise SystemExit(f"roadeval run exited {code}; see {log}")
    return time.perf_counter() - started


def scores(store: Path, env: dict[str, str]) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """The last finished run's metrics and per-item scores, without run ids."""
    last = "(select run_id from runs where status = 'finished' order by started_at desc limit 1)"
    metrics = query_env(
        str(store),
        "select suite, task, model, slice, slice_value, metric, value, n from metrics "
        f"where run_id = {last} order by all",
        env,
    )
    items = query_env(
        str(store),
        "select suite, model, item_id, metric, value, status, request_key from scores "
        f"where run_id = {last} order by all",
        env,
    )
    return metrics, items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--models", type=int, default=5)
    parser.add_argument("--seed", type=int, default=18)
    args = parser.parse_args()
    server = start_server(sys.executable, BENCH.parent / "tests", "--count-keys")
    try:
        with tempfile.TemporaryDirectory() as folder:
            work = Path(folder)
            env = bench_env(work)
            source = write_text_suite(work / "suite", args.items)
            panel = write_panel(work / "panel.yaml", source, server.api_base, args.models)
            total = args.items * args.models
            rng = random.Random(args.seed)
            points = sorted(rng.randint(total // 10, total * 9 // 10) for _ in range(3))
            store = work / "killed"
            command = [str(ROADEVAL), "run", "--panel", str(panel), "--store", str(store)]
            launched = time.time()
            walls = []
            for n, point in enumerate(points):
                walls.append(killed_at(command, env, server, launched, point, work / f"k{n}.log"))
            walls.append(finished(command, env, work / "resumed.log"))
            keys = server.keys()
            killed_scores = scores(store, env)
            clean = work / "clean"
            clean_command = [str(ROADEVAL), "run", "--panel", str(panel), "--store", str(clean)]
            clean_wall = finished(clean_command, env, work / "clean.log")
            clean_scores = scores(clean, env)
    finally:
        server.process.kill()
    # The run's concurrency: every model's max_concurrency (see rerun.write_panel), per kill.
    bound = 32 * args.models * len(points)
    # Counted before the clean run: what the killed-and-resumed store sent, request by request.
    twice = sum(v * (int(k) - 1) for k, v in keys["counts"].items() if int(k) > 1)
    print(f"items x models           {args.items} x {args.models} = {total} requests")
    print(f"kills at requests        {', '.join(map(str, points))}")
    print(
        f"passes' wall s           {', '.join(f'{w:.1f}' for w in walls)} (clean {clean_wall:.1f})"
    )
    print(f"sent / distinct          {keys['sent']} / {keys['distinct']}")
    print(
        f"sent again               {twice}  (bound: {bound}, the requests in flight at the kills)"
    )
    print(f"times sent -> requests   {keys['counts']}")
    same = killed_scores == clean_scores
    print(f"scores equal an uninterrupted run's: {same} ({len(clean_scores[1])} score rows)")
    if keys["distinct"] != total or twice > bound or not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
