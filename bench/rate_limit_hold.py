"""Holding a provider's limit: a local server enforcing `--rpm` requests per minute (429 with
Retry-After past it, OpenAI's x-ratelimit-* headers on every reply) that answers each request
after `--latency-ms`, and the real `roadeval run` command asking it enough TRIP text items for
`--minutes` at the limit, with the panel's model at the same rpm and max_concurrency 32.

    .venv/bin/python bench/rate_limit_hold.py [--minutes 3] [--rpm 600] [--latency-ms 200]

Prints the rate the server admitted over the run (and per whole minute) against the limit, the
429s it sent, the items that failed, and the server's exact 60-second window peak. The server
runs in a process of its own; PYTHONPATH at another tree runs that tree's roadeval.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from trip_text_suite import ROADEVAL, query, write_text_suite

import roadeval

MODEL = "limited"
SERVER = """
import json, sys
sys.path.insert(0, sys.argv[1])
from support.model_server import ModelServer, Reply, ServerLimits
rpm, latency = int(sys.argv[2]), float(sys.argv[3])
server = ModelServer().start()
server.rules["limited"] = lambda body, hit: Reply("A", delay_s=latency)
server.limits["limited"] = ServerLimits(rpm=rpm)
print(server.api_base, flush=True)
for line in sys.stdin:  # one line asks for the figures so far
    peaks = server.window_peaks("limited")
    print(json.dumps({
        "hits": len(server.hits_for("limited")),
        "admitted": server.admission_times("limited"),
        "rejected": server.rejected("limited"),
        "peak_requests": peaks.requests,
        "peak_tokens": peaks.tokens,
    }), flush=True)
"""


def write_panel(path: Path, source: Path, api_base: str, rpm: int, concurrency: int) -> Path:
    panel = {
        "name": "rate-limit-hold",
        "scoring": {"engine": "local"},
        "suites": [{"name": "trip", "source": str(source)}],
        "models": [
            {
                "name": MODEL,
                "model": f"openai/{MODEL}",
                "api_base": api_base,
                "rpm": rpm,
                "max_concurrency": concurrency,
            }
        ],
    }
    path.write_text(yaml.safe_dump(panel, sort_keys=False))
    return path


def per_minute(times: list[float]) -> list[int]:
    """Admissions in each whole minute from the first one."""
    if not times:
        return []
    start, end = times[0], times[-1]
    counts = []
    minute = 0
    while start + 60 * (minute + 1) <= end:
        low, high = start + 60 * minute, start + 60 * (minute + 1)
        counts.append(sum(1 for t in times if low <= t < high))
        minute += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--rpm", type=int, default=600)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    n_items = round(args.minutes * args.rpm)
    tests = Path(__file__).resolve().parents[1] / "tests"
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(tests), str(args.rpm), str(args.latency_ms / 1000)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdin is not None and server.stdout is not None
        api_base = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as folder:
            work = Path(folder)
            source = write_text_suite(work / "suite", n_items)
            panel = write_panel(work / "panel.yaml", source, api_base, args.rpm, args.concurrency)
            store = work / "store"
            print(
                f"{n_items} TRIP text items, server limit {args.rpm} rpm, "
                f"{args.latency_ms:.0f} ms per reply, max_concurrency {args.concurrency}; "
                f"roadeval from {Path(roadeval.__file__).parents[1]}",
                flush=True,
            )
            started = time.monotonic()
            with (work / "out.txt").open("w") as out:
                code = subprocess.run(
                    [str(ROADEVAL), "run", "--panel", str(panel), "--store", str(store)],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    check=False,
                ).returncode
            wall = time.monotonic() - started
            server.stdin.write("stats\n")
            server.stdin.flush()
            stats = json.loads(server.stdout.readline())
            if code != 0:
                print((work / "out.txt").read_text()[-4000:])
                raise SystemExit(f"roadeval run exited {code}")
            report(args.rpm, n_items, wall, stats, store)
    finally:
        server.kill()


def report(rpm: int, n_items: int, wall: float, stats: dict, store: Path) -> None:
    times: list[float] = stats["admitted"]
    span = times[-1] - times[0] if len(times) > 1 else 0.0
    achieved = (len(times) - 1) / span * 60 if span else 0.0
    run = query(store, "select n_items, n_scored, n_errors, n_requests from runs")[0]
    client_429 = query(
        store, "select count(*) as n from responses where error_kind = 'rate_limit'"
    )[0]["n"]
    failed = int(run["n_items"]) - int(run["n_scored"])
    minutes = per_minute(times)
    print(f"command wall time          {wall:8.1f} s (first to last request {span:.1f} s)")
    print(
        f"achieved rate              {achieved:8.1f} rpm = {100 * achieved / rpm:.1f}% of {rpm}"
        f" (over the command's wall time: {60 * len(times) / wall:.1f} rpm)"
    )
    print(f"per whole minute           {minutes}")
    print(f"exact 60 s window peak     {stats['peak_requests']:8d} requests")
    print(
        f"429s sent by the server    {stats['rejected']:8d}"
        f" ({1200 * stats['rejected'] / max(1, n_items):.1f} per 1,200 items;"
        f" the client recorded {client_429})"
    )
    print(
        f"failed items               {failed:8d} (errors {run['n_errors']},"
        f" requests sent {run['n_requests']}, server saw {stats['hits']})"
    )


if __name__ == "__main__":
    main()
