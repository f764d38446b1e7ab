"""A run on S3 at the speed of the calls (issue 19): the same panel on a local store and on a moto
S3 store side by side, through the real `roadeval` command, inline (no PREFECT_API_URL).

    .venv/bin/python bench/s3_speed.py [--items 2000] [--models 5] [--tree DIR]
        [--skip-trip] [--skip-demo] [--plain-moto] [--keep]

Two workloads: `roadeval demo` (the bundled suites against the offline baselines) and `roadeval
run` of `--models` models on an instant local OpenAI-compatible server (a process of its own)
over a TRIP-layout suite of `--items` text items (2,000 x 5 = 10,000 calls by default). Each on a
local folder, then on S3: moto on 127.0.0.1, by default moto_server's app one request at a time
with its prefix listings indexed (bench/contenders/locked_moto.py, as bench/rerun.py serves it);
`--plain-moto` runs moto_server itself. Per workload: both wall times and their ratio (target
<= 2x), the model calls (from the run's manifest), and the S3 requests the run made, counted from
moto's access log (one line per HTTP request) between the run's launch and its exit, per model
call (target <= 2), split by method (a GET on the bucket with `list-type` or `prefix` is a LIST;
a POST with `delete` is a DeleteObjects) and by the store's folder.

`--tree DIR` runs the roadeval of another source tree (its folder on PYTHONPATH, ahead of this
checkout's editable install), e.g. the code before a change: `git archive HEAD | tar -x -C DIR`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from gateway_contenders import start_server
from rerun import Moto, _s3_client, bench_env, s3_env, start_moto, write_panel
from trip_text_suite import write_text_suite

BENCH = Path(__file__).resolve().parent
BUCKET, PREFIX = "bench-s3", "store"
WALL_TARGET, REQUESTS_TARGET = 2.0, 2.0
ACCESS = re.compile(r'"(?P<method>[A-Z]+) (?P<target>\S+) HTTP/[\d.]+" (?P<status>\d{3})')
# The `roadeval` console script, importable from whichever tree PYTHONPATH names first.
CLI = (
    "import sys; from roadeval.flows.cli.main import app; sys.argv[0] = 'roadeval'; sys.exit(app())"
)


def roadeval(*args: str) -> list[str]:
    return [sys.executable, "-c", CLI, *args]


def classify(lines: list[str]) -> tuple[Counter[str], Counter[str]]:
    """S3 requests of access-log `lines` by method (with the status when not 2xx) and by method
    and store folder."""
    methods: Counter[str] = Counter()
    where: Counter[str] = Counter()
    for line in lines:
        match = ACCESS.search(line)
        if match is None:
            continue
        method = match["method"]
        url = urlsplit(match["target"])
        args = parse_qs(url.query, keep_blank_values=True)
        parts = [unquote(p) for p in url.path.split("/") if p]
        if parts and parts[0] == BUCKET:
            parts = parts[1:]
        if method == "GET" and not parts and ("list-type" in args or "prefix" in args):
            method = "LIST"
            parts = [p for p in args.get("prefix", [""])[0].split("/") if p]
        elif method == "POST" and "delete" in args:
            method = "DELETE-MANY"
        if not match["status"].startswith("2"):
            method = f"{method} {match['status']}"  # a 412 of a conditional put, a 404 HEAD
        if parts and parts[0] == PREFIX:
            parts = parts[1:]
        if not parts:
            folder = "(bucket)"
        elif parts[0] in ("tables", "cache") and len(parts) > 1:
            folder = f"{parts[0]}/{parts[1]}"
        elif parts[0].startswith(".roadeval-probe-"):
            folder = ".roadeval-probe-*"
        else:
            folder = parts[0]
        methods[method] += 1
        where[f"{method} {folder}"] += 1
    return methods, where


@dataclass
class Leg:
    """One workload on one store."""

    wall_s: float
    calls: int
    s3_methods: Counter[str] = field(default_factory=Counter)
    s3_where: Counter[str] = field(default_factory=Counter)
    pool_warnings: int = 0

    @property
    def s3_requests(self) -> int:
        return sum(self.s3_methods.values())


def manifest_calls(store: str, moto: Moto | None) -> int:
    """Model calls the store's one run made, from its manifest (`totals.calls`)."""
    if moto is not None:
        client = _s3_client(moto.endpoint)
        keys = [
            o["Key"]
            for o in client.list_objects_v2(Bucket=BUCKET, Prefix=f"{PREFIX}/runs/")["Contents"]
        ]
        [key] = [k for k in keys if k.endswith("/manifest.json")]
        manifest = json.loads(client.get_object(Bucket=BUCKET, Key=key)["Body"].read())
    else:
        [path] = list((Path(store) / "runs").glob("*/manifest.json"))
        manifest = json.loads(path.read_text())
    return int(manifest["totals"]["calls"])


def run_leg(
    command: list[str], kind: str, folder: Path, env: dict[str, str], plain_moto: bool
) -> Leg:
    """`command` (a roadeval run, its store appended) on a fresh store of `kind`."""
    moto: Moto | None = None
    if kind == "s3":
        moto = start_moto(folder / "moto.log", plain_moto)
        env = {**env, **s3_env(moto.endpoint)}
        _s3_client(moto.endpoint).create_bucket(Bucket=BUCKET)
        store = f"s3://{BUCKET}/{PREFIX}"
    else:
        store = str(folder / "store")
    log = folder / f"{kind}.log"
    try:
        before = len(moto.lines()) if moto else 0
        started = time.perf_counter()
        with log.open("wb") as out:
            # In the leg's folder: `python -c` puts the working directory first on sys.path,
            # and a checkout's own roadeval there would shadow the --tree on PYTHONPATH.
            code = subprocess.Popen(
                [*command, "--store", store],
                env=env,
                cwd=folder,
                stdout=out,
                stderr=subprocess.STDOUT,
            ).wait()
        wall = time.perf_counter() - started
        if code != 0:
            tail = log.read_text(errors="replace")[-3000:]
            raise SystemExit(f"{' '.join(command[3:])} exited {code}; the end of {log}:\n{tail}")
        methods: Counter[str] = Counter()
        where: Counter[str] = Counter()
        if moto:
            time.sleep(0.5)  # the access log's last lines
            methods, where = classify(moto.lines()[before:])
        text = log.read_text(errors="replace")
        return Leg(
            wall,
            manifest_calls(store, moto),
            methods,
            where,
            text.count("Connection pool is full"),
        )
    finally:
        if moto:
            moto.process.terminate()
            moto.process.wait(timeout=10)


@dataclass(frozen=True)
class Workload:
    name: str
    local: Leg
    s3: Leg


def bench(
    name: str,
    command: list[str],
    workdir: Path,
    env: dict[str, str],
    plain: bool,
    kinds: tuple[str, ...] = ("local", "s3"),
) -> Workload:
    legs = {}
    for kind in kinds:
        folder = workdir / name.split()[0] / kind
        folder.mkdir(parents=True)
        print(f"[{name}] {kind} store ...", flush=True)
        legs[kind] = leg = run_leg(command, kind, folder, env, plain)
        print(f"[{name}] {kind}: {leg.wall_s:.1f} s, {leg.calls} calls", flush=True)
    empty = Leg(float("nan"), 0)
    return Workload(name, legs.get("local", empty), legs.get("s3", empty))


def report(done: list[Workload], tree: str) -> None:
    print(f"\nfigures (roadeval from {tree})")
    for w in done:
        ratio = w.s3.wall_s / w.local.wall_s
        per_call = w.s3.s3_requests / w.s3.calls if w.s3.calls else float("nan")
        wall_met = "met" if ratio <= WALL_TARGET else "NOT met"
        req_met = "met" if per_call <= REQUESTS_TARGET else "NOT met"
        split = ", ".join(f"{m} {n}" for m, n in w.s3.s3_methods.most_common())
        print(f"  [{w.name}] {w.s3.calls} model calls")
        print(f"    wall, local store    {w.local.wall_s:9.2f} s")
        print(f"    wall, S3 store       {w.s3.wall_s:9.2f} s")
        print(f"    S3 / local wall      {ratio:9.2f} x   (target <= {WALL_TARGET:g}x: {wall_met})")
        print(f"    S3 requests          {w.s3.s3_requests:9d}     ({split})")
        print(
            f"    S3 requests per call {per_call:9.2f}     "
            f"(target <= {REQUESTS_TARGET:g}: {req_met})"
        )
        print(f"    'Connection pool is full' in the S3 run's log: {w.s3.pool_warnings}")
        print("    S3 requests by method and folder:")
        for where, n in w.s3.s3_where.most_common():
            print(f"      {n:7d}  {where}")
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--models", type=int, default=5)
    parser.add_argument(
        "--tree",
        type=Path,
        default=None,
        help="the source tree whose roadeval to run (default: this checkout's install)",
    )
    parser.add_argument("--skip-trip", action="store_true")
    parser.add_argument("--skip-demo", action="store_true")
    parser.add_argument("--plain-moto", action="store_true", help="serve S3 with moto_server")
    parser.add_argument(
        "--stores", default="local,s3", help="which stores to run on (default: local,s3)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the work folder (logs, stores)")
    args = parser.parse_args()
    if args.items < 1 or args.models < 1:
        parser.error("--items and --models must be at least 1")
    kinds = tuple(k for k in ("local", "s3") if k in args.stores.split(","))
    if not kinds:
        parser.error("--stores names neither local nor s3")
    workdir = Path(tempfile.mkdtemp(prefix="bench-s3-"))
    env = bench_env(workdir)
    tree = "this checkout"
    if args.tree is not None:
        tree = str(args.tree.resolve())
        if not (args.tree / "roadeval" / "__init__.py").is_file():
            parser.error(f"--tree {args.tree}: no roadeval/__init__.py there")
        env["PYTHONPATH"] = os.pathsep.join([tree, *filter(None, [env.get("PYTHONPATH")])])
    server = start_server(sys.executable, BENCH.parent / "tests")
    print(f"instant server at {server.api_base}; work folder {workdir}", flush=True)
    done: list[Workload] = []
    try:
        if not args.skip_demo:
            done.append(bench("demo", roadeval("demo"), workdir, env, args.plain_moto, kinds))
        if not args.skip_trip:
            source = write_text_suite(workdir / "suite", args.items)
            panel = write_panel(workdir / "panel.yaml", source, server.api_base, args.models)
            command = roadeval("run", "--panel", str(panel))
            name = f"trip {args.items} x {args.models}"
            done.append(bench(name, command, workdir, env, args.plain_moto, kinds))
        report(done, tree)
    finally:
        server.process.kill()
        server.process.wait()
        if args.keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
