"""A rerun after a small fix of the items (issue 18): `--models` models on an instant local
OpenAI-compatible server (a process of its own) over a TRIP-layout suite of `--items` text items,
through the real `roadeval run --panel P --store S` command, inline (no PREFECT_API_URL). One full
run, then `--fix-fraction` of the items are edited in items.jsonl (a third get another gold
answer, a third a reworded question, a third are removed) and the panel is run again: it compares
itself with the full run (its baseline), asks only the reworded items again and copies the rest.

    .venv/bin/python bench/rerun.py [--items 10000] [--models 5] [--fix-fraction 0.01]
        [--skip-local] [--skip-s3] [--plain-moto] [--profile DIR] [--keep]

Once on a local store, once on an S3 store: moto on 127.0.0.1 (bucket made with boto3), by
default moto_server's app one request at a time with its prefix listings indexed
(bench/contenders/locked_moto.py: moto 5.2's listing races concurrent deletes into 500s, and walks
the whole bucket for every prefix, quadratic at full size); `--plain-moto` runs moto_server itself.
Per store: the full run's and the rerun's wall time and calls (counted at the server), the check
that the rerun asked exactly (reworded items x models), the rerun's wall over the full run's
(targets: 5% local, 10% S3), the rerun manifest's `calls`, `cached`, `scores_reused`, and the
rerun's `changes` rows per kind (through `roadeval query`). On S3, the requests the rerun made:
moto_server's werkzeug access log (one line per HTTP request, on its stderr, captured to a file)
is counted between the rerun's launch and its exit, split by method (a GET on the bucket with
`list-type` or `prefix` is a LIST) and by key prefix (table or store folder).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import yaml
from gateway_contenders import Server, start_server
from trip_text_suite import ROADEVAL, write_text_suite

BENCH = Path(__file__).resolve().parent
LOCAL_TARGET, S3_TARGET = 0.05, 0.10
BUCKET, PREFIX = "bench-rerun", "store"
# werkzeug's access log: 127.0.0.1 - - [date] "PUT /bucket/key?query HTTP/1.1" 200 -
ACCESS = re.compile(r'"(?P<method>[A-Z]+) (?P<target>\S+) HTTP/[\d.]+" (?P<status>\d{3})')


def write_panel(path: Path, source: Path, api_base: str, models: int) -> Path:
    panel = {
        "name": "bench-rerun",
        "suites": [{"name": "trip", "source": str(source)}],
        # One served model under distinct names; a distinct seed each makes their request keys
        # differ (a name alone does not), so no model's answers are another's cache hits.
        "models": [
            {
                "name": f"instant-{k}",
                "model": "openai/instant",
                "api_base": api_base,
                "params": {"seed": k},
                "max_concurrency": 32,
            }
            for k in range(models)
        ],
        # Text items only: nothing is drawn, nothing is heavy; no Ray (and no namespace for it).
        "scoring": {"engine": "local"},
        "render": {"engine": "local"},
    }
    path.write_text(yaml.safe_dump(panel, sort_keys=False), encoding="utf-8")
    return path


@dataclass(frozen=True)
class Fix:
    gold: list[str]
    reworded: list[str]
    removed: list[str]


def fix_items(source: Path, fraction: float) -> Fix:
    """Edits `fraction` of the items in `source/items.jsonl`, spread evenly over the file: a third
    get another gold letter, a third a reworded question, a third are removed."""
    items = source / "items.jsonl"
    rows = [json.loads(line) for line in items.read_text(encoding="utf-8").splitlines()]
    n = max(3, round(len(rows) * fraction))
    n -= n % 3
    step = len(rows) / n
    picked = [int(k * step) for k in range(n)]
    fix = Fix([], [], [])
    drop = set()
    for k, index in enumerate(picked):
        row = rows[index]
        if k % 3 == 0:
            row["answer"] = next(c for c in "ABCD" if c != row["answer"] and c in row)
            fix.gold.append(row["id"])
        elif k % 3 == 1:
            row["question"] += " (Assume dry asphalt.)"
            fix.reworded.append(row["id"])
        else:
            drop.add(index)
            fix.removed.append(row["id"])
    kept = [json.dumps(row, ensure_ascii=False) for i, row in enumerate(rows) if i not in drop]
    items.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return fix


# -- moto --


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Moto:
    process: subprocess.Popen[bytes]
    endpoint: str
    log: Path

    def lines(self) -> list[str]:
        return self.log.read_text(errors="replace").splitlines()


def start_moto(log: Path, plain: bool) -> Moto:
    """moto on 127.0.0.1, its stderr (the access log) to `log`: `moto_server` itself (as
    tests/conftest.py's `s3_endpoint` starts it) if `plain`, else the same app one request at a
    time (bench/contenders/locked_moto.py: moto's listing races concurrent deletes)."""
    port = _free_port()
    if plain:
        executable = shutil.which("moto_server") or str(Path(sys.executable).parent / "moto_server")
        command = [executable, "-H", "127.0.0.1", "-p", str(port)]
    else:
        command = [sys.executable, str(BENCH / "contenders" / "locked_moto.py"), "127.0.0.1"]
        command.append(str(port))
    with log.open("wb") as err:
        process = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError:
            time.sleep(0.1)
    else:
        process.kill()
        raise RuntimeError("moto_server did not start")
    return Moto(process, f"http://127.0.0.1:{port}", log)


def s3_env(endpoint: str) -> dict[str, str]:
    return {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_DEFAULT_REGION": "us-east-1",
    }


def _s3_client(endpoint: str) -> Any:
    import boto3

    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id="test",
        aws_secret_access_key="test",
        region_name="us-east-1",
    )


def classify(lines: list[str]) -> tuple[Counter[str], Counter[str], int]:
    """Requests of access-log `lines` by method (LIST apart from GET) and by key prefix (the
    table, or the store's top folder); also how many lines were not requests."""
    methods: Counter[str] = Counter()
    prefixes: Counter[str] = Counter()
    other = 0
    for line in lines:
        match = ACCESS.search(line)
        if match is None:
            other += 1
            continue
        method = match["method"]
        url = urlsplit(match["target"])
        args = parse_qs(url.query, keep_blank_values=True)
        parts = [unquote(p) for p in url.path.split("/") if p]
        if parts and parts[0] == BUCKET:
            parts = parts[1:]
        key_prefix = args.get("prefix", [""])[0]
        if method == "GET" and not parts and ("list-type" in args or "prefix" in args):
            method = "LIST"
            parts = [p for p in key_prefix.split("/") if p]
        if parts and parts[0] == PREFIX:
            parts = parts[1:]
        if not parts:
            where = "(bucket)"
        elif parts[0] == "tables" and len(parts) > 1:
            where = f"tables/{parts[1]}"
        elif parts[0] in ("cache", "runs") and len(parts) > 1:
            where = f"{parts[0]}/{parts[1] if parts[0] == 'cache' else '<run>'}"
        elif parts[0].startswith(".roadeval-probe-"):
            where = ".roadeval-probe-*"
        else:
            where = parts[0]
        methods[method] += 1
        prefixes[f"{method} {where}"] += 1
    return methods, prefixes, other


# -- runs --


def bench_env(workdir: Path) -> dict[str, str]:
    """Inline (no PREFECT_API_URL), telemetry off, offline price map, a temporary HOME."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_API", "AWS_"))}
    env.update(
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        DO_NOT_TRACK="1",
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_HOME=str(workdir / "prefect-home"),
        HOME=str(workdir / "home"),
        COLUMNS="200",
    )
    (workdir / "home").mkdir(exist_ok=True)
    return env


@dataclass(frozen=True)
class Pass:
    wall_s: float
    calls: int  # requests the server saw


def run_once(
    panel: Path,
    store: str,
    env: dict[str, str],
    server: Server,
    log: Path,
    profile: Path | None = None,
) -> Pass:
    command = [str(ROADEVAL), "run", "--panel", str(panel), "--store", store]
    if profile is not None:
        command = [sys.executable, "-m", "cProfile", "-o", str(profile), *command]
    # What the pass before wrote (a full run: hundreds of MB) is flushed first, so that this
    # pass does not pay for that one's writeback.
    os.sync()
    launched = time.time()
    started = time.perf_counter()
    with log.open("wb") as out:
        code = subprocess.Popen(
            command,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        ).wait()
    wall = time.perf_counter() - started
    if code != 0:
        tail = log.read_text(errors="replace")[-3000:]
        raise SystemExit(f"roadeval run exited {code}; the end of {log}:\n{tail}")
    return Pass(wall, server.arrivals(launched)["count"])


def query_env(store: str, sql: str, env: dict[str, str]) -> list[dict[str, str]]:
    """Rows of `roadeval query --format csv` over `store` (as `trip_text_suite.query`), run with
    `env` (an S3 store's variables)."""
    done = subprocess.run(
        [str(ROADEVAL), "query", "--store", store, "--format", "csv", sql],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"roadeval query failed ({done.returncode}): {done.stderr[-2000:]}")
    return list(csv.DictReader(io.StringIO(done.stdout)))


@dataclass
class Result:
    store_kind: str
    items: int
    models: int
    fix: Fix
    full: Pass
    rerun: Pass
    totals: dict[str, Any]
    changes: dict[str, int]
    s3_methods: Counter[str] = field(default_factory=Counter)
    s3_prefixes: Counter[str] = field(default_factory=Counter)
    s3_full_requests: int = 0

    @property
    def expected_calls(self) -> int:
        return len(self.fix.reworded) * self.models

    @property
    def ratio(self) -> float:
        return self.rerun.wall_s / self.full.wall_s

    @property
    def target(self) -> float:
        return S3_TARGET if self.store_kind == "s3" else LOCAL_TARGET


def run_changes(store: str, env: dict[str, str], run_id: str) -> dict[str, int]:
    rows = query_env(
        store,
        "select kind, coalesce(what, '') as what, count(*) as n from changes "
        f"where run_id = '{run_id}' group by all order by all",
        env,
    )
    return {f"{r['kind']}{'/' + r['what'] if r['what'] else ''}": int(r["n"]) for r in rows}


def rerun_run_id(store: str, env: dict[str, str]) -> str:
    rows = query_env(store, "select run_id from runs order by started_at desc limit 1", env)
    return rows[0]["run_id"]


def bench_store(
    kind: str, args: argparse.Namespace, workdir: Path, server: Server, env: dict[str, str]
) -> Result:
    folder = workdir / kind
    folder.mkdir()
    source = write_text_suite(folder / "suite", args.items)
    panel = write_panel(folder / "panel.yaml", source, server.api_base, args.models)
    moto: Moto | None = None
    if kind == "s3":
        moto = start_moto(folder / "moto.log", args.plain_moto)
        env = {**env, **s3_env(moto.endpoint)}
        _s3_client(moto.endpoint).create_bucket(Bucket=BUCKET)
        store = f"s3://{BUCKET}/{PREFIX}"
    else:
        store = str(folder / "store")
    try:
        print(f"\n[{kind}] full run: {args.models} models x {args.items} items", flush=True)
        before_full = len(moto.lines()) if moto else 0
        full = run_once(panel, store, env, server, folder / "full.log")
        time.sleep(0.5 if moto else 0)  # the access log's last lines
        after_full = len(moto.lines()) if moto else 0
        print(
            f"[{kind}] full run {full.wall_s:.1f} s, {full.calls} calls "
            f"(load average now {os.getloadavg()[0]:.1f})",
            flush=True,
        )
        fix = fix_items(source, args.fix_fraction)
        print(
            f"[{kind}] fixed {len(fix.gold)} golds, reworded {len(fix.reworded)} questions, "
            f"removed {len(fix.removed)} items; rerun",
            flush=True,
        )
        profile = args.profile / f"rerun-{kind}.prof" if args.profile else None
        rerun = run_once(panel, store, env, server, folder / "rerun.log", profile)
        methods: Counter[str] = Counter()
        prefixes: Counter[str] = Counter()
        if moto:
            time.sleep(0.5)
            methods, prefixes, other = classify(moto.lines()[after_full:])
            if other:
                print(f"[{kind}] note: {other} lines of moto's log were not requests")
        print(
            f"[{kind}] rerun {rerun.wall_s:.1f} s, {rerun.calls} calls "
            f"(load average now {os.getloadavg()[0]:.1f})",
            flush=True,
        )
        run_id = rerun_run_id(store, env)
        if moto:
            body = _s3_client(moto.endpoint).get_object(
                Bucket=BUCKET, Key=f"{PREFIX}/runs/{run_id}/manifest.json"
            )["Body"]
            manifest = json.loads(body.read())
        else:
            manifest = json.loads((Path(store) / "runs" / run_id / "manifest.json").read_text())
        changes = run_changes(store, env, run_id)
        return Result(
            kind,
            args.items,
            args.models,
            fix,
            full,
            rerun,
            manifest.get("totals", {}),
            changes,
            methods,
            prefixes,
            after_full - before_full,
        )
    finally:
        if moto:
            moto.process.terminate()
            moto.process.wait(timeout=10)


def startup_floor(env: dict[str, str]) -> float:
    """Wall time of `roadeval run --help`: the command's imports, which every run pays."""
    started = time.perf_counter()
    subprocess.run([str(ROADEVAL), "run", "--help"], env=env, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def report(results: list[Result], floor: float) -> None:
    print(f"\nfigures (`roadeval run --help`: {floor:.2f} s)")
    for r in results:
        ok = "exact" if r.rerun.calls == r.expected_calls else "NOT exact"
        met = "met" if r.ratio <= r.target else "NOT met"
        t = r.totals
        print(f"  [{r.store_kind}] {r.models} models x {r.items} items")
        print(f"    full run wall        {r.full.wall_s:9.2f} s   calls {r.full.calls}")
        print(f"    rerun wall           {r.rerun.wall_s:9.2f} s   calls {r.rerun.calls}")
        print(
            f"    rerun calls          {r.rerun.calls} vs {len(r.fix.reworded)} reworded x "
            f"{r.models} models = {r.expected_calls} ({ok})"
        )
        print(
            f"    rerun / full wall    {100 * r.ratio:9.2f} %   (target <= {r.target:.0%}: {met})"
        )
        print(
            f"    manifest totals      calls {t.get('calls')}, cached {t.get('cached')}, "
            f"scores_reused {t.get('scores_reused')}"
        )
        print(
            "    changes              "
            + ", ".join(f"{kind} {n}" for kind, n in sorted(r.changes.items()))
        )
        print(
            f"    fix                  gold {len(r.fix.gold)}, reworded {len(r.fix.reworded)}, "
            f"removed {len(r.fix.removed)}"
        )
        if r.store_kind == "s3":
            total = sum(r.s3_methods.values())
            split = ", ".join(f"{m} {n}" for m, n in r.s3_methods.most_common())
            print(f"    S3 requests, full    {r.s3_full_requests}")
            print(f"    S3 requests, rerun   {total}   ({split})")
            print("    rerun's S3 requests by method and prefix:")
            for where, n in r.s3_prefixes.most_common():
                print(f"      {n:7d}  {where}")
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--models", type=int, default=5)
    parser.add_argument("--fix-fraction", type=float, default=0.01)
    parser.add_argument("--skip-local", action="store_true")
    parser.add_argument("--skip-s3", action="store_true")
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        metavar="DIR",
        help="run each rerun under cProfile, writing DIR/rerun-<store>.prof (its wall then "
        "includes the profiler's overhead)",
    )
    parser.add_argument(
        "--plain-moto",
        action="store_true",
        help="serve S3 with moto_server itself: requests concurrent (moto 5.2's listing then "
        "races deletes into 500s) and every listing a walk of the whole bucket",
    )
    parser.add_argument("--keep", action="store_true", help="keep the work folder (logs, stores)")
    args = parser.parse_args()
    if not 0 < args.fix_fraction < 1:
        parser.error("--fix-fraction must be between 0 and 1")
    if args.items < 3 or args.models < 1:
        parser.error("--items must be at least 3 and --models at least 1")
    kinds = [k for k, skip in (("local", args.skip_local), ("s3", args.skip_s3)) if not skip]
    if not kinds:
        parser.error("nothing to do: both --skip-local and --skip-s3")
    workdir = Path(tempfile.mkdtemp(prefix="bench-rerun-"))
    env = bench_env(workdir)
    server = start_server(sys.executable, BENCH.parent / "tests")
    print(f"instant server at {server.api_base}; work folder {workdir}", flush=True)
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
    floor = startup_floor(env)
    print(f"`roadeval run --help` takes {floor:.2f} s (imports: the floor of any run)", flush=True)
    try:
        results = [bench_store(kind, args, workdir, server, env) for kind in kinds]
        report(results, floor)
    finally:
        server.process.kill()
        server.process.wait()
        if args.keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
