"""How long `roadeval query` takes to start on a large store, and how many store requests it makes
(issue 20): a store of `--runs` runs x `--shards` landed shards, each shard a landing of
`--tables` parts (plan, responses, parses, scores), in the store's own layout.

    .venv/bin/python bench/query_start.py [--runs 100] [--shards 4000] [--skip-local] [--skip-s3]

The store is synthetic but laid out as roadeval lays it out: each run's `run_events` landed by the
real `land()` (its index entries and folds included), and every shard's parts and marker at their
keys, its index entries folded into one snapshot as the index folds them (`part_index.merged` of
`entry_rows`), numbered as if landed one by one. Shard parts are empty files except those of the
first run, which are real Parquet parts of a few rows, so that a query naming that run reads
real data. Two queries are timed through the real command, each three times (median): `select
count(*) from runs` (what opening the catalogue costs), and `--run FIRST select count(*), sum(value)
from scores` (a query that names its run).

Locally both run again with the index moved aside, so that the catalogue lists every part as it
did before the index. On S3 (moto on 127.0.0.1, one request at a time: bench/contenders/
locked_moto.py) only the index, the events and the first run's parts are uploaded: the other
parts are never read by either query through the index, and a listing of them, the old way, is
printed as the LIST requests it would take (1,000 keys a page) rather than made. Requests are
counted from moto's access log between the command's launch and its exit.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

import pyarrow as pa
import pyarrow.parquet as pq
from rerun import BENCH, _s3_client, bench_env, classify, s3_env, start_moto

from roadeval.storage.landing import LANDINGS, Part, land
from roadeval.storage.part_index import ROWS, SNAPSHOT, SNAPSHOTS, schema_fingerprint
from roadeval.storage.records import SCHEMAS, RunEventRow, ScoreRow
from roadeval.storage.store import LocalStore, Store, open_store
from roadeval.storage.tables import to_parquet

TABLES = ("plan", "responses", "parses", "scores")
BUCKET, PREFIX = "bench-query", "store"


def _run_id(n: int) -> str:
    at = datetime(2026, 11, 1, tzinfo=UTC) + timedelta(hours=n)
    return at.strftime("%Y%m%dT%H%M%SZ") + f"-{n:08x}"


def _folder(table: str, model: str) -> str:
    return f"tables/{table}/suite=trip/model={quote(model, safe='')}"


def _events(store: Store, run_id: str, n: int) -> None:
    started = datetime(2026, 11, 1, tzinfo=UTC) + timedelta(hours=n)
    for seq, status in enumerate(("running", "finished"), start=1):
        row = RunEventRow(
            **{
                f.name: None
                for f in RunEventRow.__dataclass_fields__.values()  # type: ignore[attr-defined]
            }
            | {
                "run_id": run_id,
                "seq": seq,
                "status": status,
                "started_at": started,
                "panel": "bench",
                "manifest_json": json.dumps({"run_id": run_id}),
            }
        )
        land(store, f"{run_id}-event-{seq:03d}", [Part("run_events", [row])])


def _score_part(run_id: str, model: str, shard: int) -> bytes:
    rows = [
        ScoreRow(
            **{f.name: None for f in ScoreRow.__dataclass_fields__.values()}  # type: ignore[attr-defined]
            | {
                "run_id": run_id,
                "suite": "trip",
                "task": "mcq",
                "item_id": f"{shard}-{i}",
                "content_hash": "h",
                "model": model,
                "metric": "correct",
                "value": float(i % 2),
                "status": "scored",
            }
        )
        for i in range(5)
    ]
    return to_parquet("scores", rows)


def build(root: Path | None, s3: Store | None, runs: int, shards: int) -> dict[str, int]:
    """The store: parts and markers (locally), the index snapshot of every shard landing, the
    events landed for real; returns counts of what it holds."""
    models = [f"model-{k}" for k in range(5)]
    names: list[str] = []
    run_of: list[str] = []
    tables: list[str] = []
    keys: list[str] = []
    for n in range(runs):
        run_id = _run_id(n)
        for shard in range(shards):
            model = models[shard % len(models)]
            name = f"{run_id}-trip-{quote(model, safe='')}-{shard:05d}"
            for table in TABLES:
                names.append(name)
                run_of.append(run_id)
                tables.append(table)
                keys.append(f"{_folder(table, model)}/{name}.parquet")
    landings = runs * shards
    top = -(-landings // SNAPSHOT) * SNAPSHOT
    fingerprints = {t: schema_fingerprint(SCHEMAS[t]) for t in TABLES}
    snapshot = pa.table(
        {
            "number": pa.array([1 + i // len(TABLES) for i in range(len(keys))], pa.int64()),
            "name": pa.array(names, pa.string()),
            "run_id": pa.array(run_of, pa.string()),
            "role": pa.array(["part"] * len(keys), pa.string()),
            "table": pa.array(tables, pa.string()),
            "key": pa.array(keys, pa.string()),
            "fingerprint": pa.array([fingerprints[t] for t in tables], pa.string()),
        },
        schema=ROWS,
    )
    sink = io.BytesIO()
    pq.write_table(snapshot, sink, compression="zstd")
    snapshot_key = f"{SNAPSHOTS}{top:012d}.parquet"
    first = _run_id(0)
    if root is not None:
        store: Store = LocalStore(root)
        for key in sorted({k.rsplit("/", 1)[0] for k in keys}):
            (root / key).mkdir(parents=True, exist_ok=True)
        (root / LANDINGS).mkdir(parents=True, exist_ok=True)
        for key, name in zip(keys, names, strict=True):
            path = root / key
            if name.startswith(first) and key.startswith("tables/scores/"):
                path.write_bytes(_score_part(first, key.split("model=")[1].split("/")[0], 0))
            else:
                path.touch()
        for name in dict.fromkeys(names):
            (root / LANDINGS / name).touch()
        (root / SNAPSHOTS).mkdir(parents=True, exist_ok=True)
        (root / snapshot_key).write_bytes(sink.getvalue())
    else:
        assert s3 is not None
        store = s3
        store.put(snapshot_key, sink.getvalue())
        for key, name in zip(keys, names, strict=True):
            if name.startswith(first) and key.startswith("tables/scores/"):
                store.put(key, _score_part(first, key.split("model=")[1].split("/")[0], 0))
    for n in range(runs):
        _events(store, _run_id(n), n)
    return {"landings": landings, "parts": len(keys), "markers": landings}


def timed(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
    return wall, done.stdout


def queries(store_uri: str, first: str) -> list[tuple[str, list[str]]]:
    roadeval = str(Path(sys.executable).parent / "roadeval")
    return [
        ("runs", [roadeval, "query", "--store", store_uri, "-f", "csv", "select count(*) from runs"]),  # noqa: E501
        (
            "one run's scores",
            [
                roadeval, "query", "--store", store_uri, "-f", "csv", "--run", first,
                "select count(*), sum(value) from scores",
            ],
        ),
    ]  # fmt: skip


def local(work: Path, runs: int, shards: int) -> None:
    root = work / "local-store"
    started = time.perf_counter()
    counts = build(root, None, runs, shards)
    print(f"[local] built {counts} in {time.perf_counter() - started:.0f} s", flush=True)
    env = bench_env(work)
    results: dict[str, list[float]] = {}
    for label in ("index", "listing"):
        if label == "listing":
            shutil.move(root / "index", work / "index-aside")
        for name, command in queries(str(root), _run_id(0)):
            walls = []
            for _ in range(3):
                wall, out = timed(command, env, work)
                walls.append(wall)
            results[f"{label}: {name}"] = walls
            median = statistics.median(walls)
            print(f"[local] {label:8} {name:18} {median:7.2f} s   {out.strip()!r}")
    help_wall = statistics.median(
        timed([str(Path(sys.executable).parent / "roadeval"), "--help"], env, work)[0]
        for _ in range(3)
    )
    print(f"[local] `roadeval --help` (the floor of any command): {help_wall:.2f} s")


def s3(work: Path, runs: int, shards: int) -> None:
    moto = start_moto(work / "moto.log", plain=False)
    try:
        _s3_client(moto.endpoint).create_bucket(Bucket=BUCKET)
        os.environ.update(s3_env(moto.endpoint))
        store = open_store(f"s3://{BUCKET}/{PREFIX}")
        started = time.perf_counter()
        counts = build(None, store, runs, shards)
        print(f"[s3] built {counts} in {time.perf_counter() - started:.0f} s", flush=True)
        env = bench_env(work) | s3_env(moto.endpoint)
        for name, command in queries(f"s3://{BUCKET}/{PREFIX}", _run_id(0)):
            walls, made = [], Counter[str]()
            for _ in range(3):
                before = len(moto.lines())
                wall, out = timed(command, env, work)
                walls.append(wall)
                made, _, _ = classify(moto.lines()[before:])
            print(
                f"[s3] index    {name:18} {statistics.median(walls):7.2f} s   "
                f"{sum(made.values())} requests ({dict(made)})   {out.strip()!r}"
            )
        per_table = -(-runs * shards // 1000)
        print(
            f"[s3] listing, the old way: {per_table * (len(TABLES) + 1)} LIST requests before "
            f"any query ({len(TABLES)} tables and the markers, {per_table} pages of 1,000 keys "
            "each), not made here"
        )
    finally:
        moto.process.terminate()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--shards", type=int, default=4000)
    parser.add_argument("--skip-local", action="store_true")
    parser.add_argument("--skip-s3", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-query-"))
    try:
        if not args.skip_local:
            local(work, args.runs, args.shards)
        if not args.skip_s3:
            s3(work, args.runs, args.shards)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, str(BENCH))
    main()
