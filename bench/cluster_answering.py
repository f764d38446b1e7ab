"""Answering on a Ray cluster against answering on the run's machine (issue 42, items 1-4): the
same panel of `--models` models over a TRIP-layout suite of `--items` text items, answered by the
instant local server (a process of its own), landed in an S3 store (moto on 127.0.0.1, one
request at a time: bench/contenders/locked_moto.py), through the real `roadeval run` command,
inline. Once with the default engine (`answering: local`: the run's process and its answer
worker processes), once on a two-node Ray cluster started here (`ray start` twice, one CPU each,
`--answer-ray-address`), each on a store of its own.

    ../shared/scripts/loopback-only .venv/bin/python bench/cluster_answering.py \
        [--items 10000] [--models 2] [--latency-ms 0]

On a 2-core machine the cluster cannot be faster (both nodes share the run's cores), so per leg
it prints what a call costs rather than how fast calls go:
- wall seconds (lower is better) and the calls the server received;
- CPU seconds of every process of the leg (the command and its workers; on the cluster also
  both nodes' raylets, GCS and workers, their idle cost during the run included), sampled from
  /proc every 0.2 s, and CPU ms per call (lower is better); the cluster's over local's is the
  overhead per call (goal: at most 1.3x);
- the S3 requests the leg made (moto's access log, one line per request) and per call (lower is
  better; goal: at most 2 per call on a full run).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from gateway_contenders import start_server
from rerun import BUCKET, _s3_client, bench_env, classify, s3_env, start_moto, write_panel
from trip_text_suite import ROADEVAL, write_text_suite

BENCH = Path(__file__).resolve().parent
TESTS = BENCH.parent / "tests"
sys.path.insert(0, str(TESTS))

from support.clusters import RayCluster  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


class CpuOfSessions:
    """The CPU seconds of every process in some sessions (each leg's command, each node's `ray
    start`, all started as session leaders), sampled from /proc: per process, the most CPU it
    was seen to have used since the sampling began."""

    def __init__(self, sessions: dict[str, int]) -> None:
        self.sessions = sessions  # name -> session id
        self._seen: dict[int, tuple[str, int]] = {}
        self._start: dict[int, int] = {}
        self._stop = threading.Event()
        self._sample(first=True)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _sample(self, first: bool = False) -> None:
        names = {sid: name for name, sid in self.sessions.items()}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            sid = int(fields[3])
            if sid not in names:
                continue
            pid = int(entry.name)
            ticks = int(fields[11]) + int(fields[12])  # utime + stime
            if first:
                self._start[pid] = ticks
            seen = self._seen.get(pid)
            if seen is None or ticks > seen[1]:
                self._seen[pid] = (names[sid], ticks)

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self._sample()

    def stop(self) -> dict[str, float]:
        """CPU seconds per session since the sampling began."""
        self._stop.set()
        self._thread.join()
        self._sample()
        total: Counter[str] = Counter()
        for pid, (name, ticks) in self._seen.items():
            total[name] += (ticks - self._start.get(pid, 0)) / TICK
        return dict(total)


@dataclass
class Leg:
    name: str
    wall_s: float
    calls: int
    cpu_s: dict[str, float]
    s3: Counter[str]

    @property
    def cpu_ms_per_call(self) -> float:
        return 1000 * sum(self.cpu_s.values()) / max(1, self.calls)

    @property
    def s3_per_call(self) -> float:
        return sum(self.s3.values()) / max(1, self.calls)


def run_leg(
    name: str,
    panel: Path,
    store: str,
    env: dict[str, str],
    moto_log: Path,
    server: object,
    sessions: dict[str, int],
    extra: list[str],
    work: Path,
) -> Leg:
    log = work / f"{name}.log"
    offset = moto_log.stat().st_size
    launched = time.time()
    started = time.perf_counter()
    command = [str(ROADEVAL), "run", "--panel", str(panel), "--store", store, "--no-report"]
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*command, *extra],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        cpu = CpuOfSessions({"command": process.pid, **sessions})
        code = process.wait()
    wall = time.perf_counter() - started
    spent = cpu.stop()
    if code != 0:
        raise SystemExit(f"{name}: roadeval run exited {code}:\n{log.read_text()[-3000:]}")
    with moto_log.open("rb") as read:
        read.seek(offset)
        lines = read.read().decode(errors="replace").splitlines()
    methods, _prefixes, _other = classify(lines)
    calls = int(server.arrivals(launched)["count"])  # type: ignore[attr-defined]
    return Leg(name, wall, calls, spent, methods)


def report(legs: list[Leg]) -> None:
    print()
    print(
        f"{'leg':8s} {'wall s':>8s} {'calls':>7s} {'CPU s':>8s} {'CPU ms/call':>12s} "
        f"{'S3 req':>7s} {'S3/call':>8s}   CPU s by process group"
    )
    for leg in legs:
        groups = ", ".join(f"{k} {v:.1f}" for k, v in sorted(leg.cpu_s.items()))
        print(
            f"{leg.name:8s} {leg.wall_s:8.1f} {leg.calls:7d} {sum(leg.cpu_s.values()):8.1f} "
            f"{leg.cpu_ms_per_call:12.2f} {sum(leg.s3.values()):7d} {leg.s3_per_call:8.2f}   "
            f"{groups}"
        )
        print(f"{'':8s} S3 by method: {dict(sorted(leg.s3.items()))}")
    if len(legs) == 2:
        ratio = legs[1].cpu_ms_per_call / legs[0].cpu_ms_per_call
        print(f"\nCPU per call, cluster over local: {ratio:.2f}x (lower is better; goal <= 1.3x)")
    print(f"(load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--models", type=int, default=2)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-cluster-") as folder:
        work = Path(folder)
        env = {**bench_env(work), "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
        moto_log = work / "moto.log"
        moto = start_moto(moto_log, plain=False)
        options = ["--latency-ms", str(args.latency_ms)] if args.latency_ms else []
        server = start_server(sys.executable, TESTS, *options)
        cluster = RayCluster.start(work / "ray", cpus=1, head_cpus=1)
        try:
            env.update(s3_env(moto.endpoint))
            _s3_client(moto.endpoint).create_bucket(Bucket=BUCKET)
            source = write_text_suite(work / "suite", args.items)
            panel = write_panel(work / "panel.yaml", source, server.api_base, args.models)
            print(
                f"{args.models} models x {args.items:,} text items ({args.models * args.items:,} "
                f"calls a leg), instant server (latency {args.latency_ms:g} ms), S3 on moto"
            )
            cluster.wait_ready()
            nodes = {
                "head node" if "--head" in p.args else "worker node": p.pid
                for p in cluster.processes.started
            }
            legs = [
                run_leg(
                    "local", panel, f"s3://{BUCKET}/local", env, moto_log, server, {}, [], work
                ),
                run_leg(
                    "cluster",
                    panel,
                    f"s3://{BUCKET}/cluster",
                    env,
                    moto_log,
                    server,
                    nodes,
                    ["--answer-ray-address", cluster.address],
                    work,
                ),
            ]
            report(legs)
        finally:
            cluster.stop()
            server.process.kill()
            moto.process.kill()


if __name__ == "__main__":
    main()
