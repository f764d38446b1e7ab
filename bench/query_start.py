"""How long `roadeval query` takes to start on a large store, and how many store requests it makes
(issue 20): a store of `--runs` runs x `--shards` landed shards, each shard a landing of
`--tables` parts (plan, responses, parses, scores), in the store's own layout.

    .venv/bin/python bench/query_start.py [--runs 100] [--shards 4000] [--skip-local] [--skip-s3]

The store is synthetic but laid out as roadeval lays it out: every landing's parts and marker at
their keys (each run's events, written by the real `write_part`, its shards between them), their
index entries folded into one snapshot, numbered as if landed one by one, with the snapshot's
digest of the events made by the real `write_digests`; then the last run's finished event landed
by the real `land()`, after the snapshot as a run's last event is. Shard parts are empty files
except those of the first run, which are real Parquet parts of a few rows, so that a query
naming that run reads real data, and those of the second, which is compacted as a finished run
is (one part per table x model folder). Three queries are timed through the real command, each
three times (median): `select count(*) from runs` (what opening the catalogue costs), and
`--run RUN select count(*), sum(value) from scores` for the first run (4,000 small parts) and
for the compacted one.

Locally they run again with the index moved aside, so that the catalogue lists every part as it
did before the index. On S3 (moto on 127.0.0.1, one request at a time: bench/contenders/
locked_moto.py) only the index, the events and the parts the queries read are uploaded: the
others are never read through the index, and a listing of them, the old way, is printed as the
LIST requests it would take (1,000 keys a page) rather than made. The `runs` query runs again
with the events' digest removed (the control: events read part by part, as before digests).
Requests are counted from moto's access log between the command's launch and its exit.
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

from roadeval.storage.index_digests import DIGESTS, write_digests
from roadeval.storage.landing import LANDINGS, Part, land
from roadeval.storage.part_index import ROWS, SNAPSHOT, SNAPSHOTS, schema_fingerprint
from roadeval.storage.records import SCHEMAS, RunEventRow, ScoreRow
from roadeval.storage.store import LocalStore, Store, open_store
from roadeval.storage.tables import part_key, to_parquet, write_part

TABLES = ("plan", "responses", "parses", "scores")
# The run whose parts are compacted (every other run's are one part per shard and table).
COMPACTED_RUN = 1
BUCKET, PREFIX = "bench-query", "store"


def _run_id(n: int) -> str:
    at = datetime(2026, 11, 1, tzinfo=UTC) + timedelta(hours=n)
    return at.strftime("%Y%m%dT%H%M%SZ") + f"-{n:08x}"


def _folder(table: str, model: str) -> str:
    return f"tables/{table}/suite=trip/model={quote(model, safe='')}"


def _event(run_id: str, n: int, seq: int) -> RunEventRow:
    """Run `n`'s event `seq` (1 running, 2 finished), with a manifest of a real one's size."""
    started = datetime(2026, 11, 1, tzinfo=UTC) + timedelta(hours=n)
    manifest = {
        "run_id": run_id,
        "models": [
            {"name": f"model-{k}", "api_base": f"http://127.0.0.1:{8000 + k}/v1", "seed": k}
            for k in range(5)
        ],
        "suites": [{"name": "trip", "version": "1.0", "items": 10_000, "hash": "ab" * 32}],
        "settings": {f"setting_{k}": k for k in range(40)},
    }
    return RunEventRow(
        **{
            f.name: None
            for f in RunEventRow.__dataclass_fields__.values()  # type: ignore[attr-defined]
        }
        | {
            "run_id": run_id,
            "seq": seq,
            "status": ("running", "finished")[seq - 1],
            "started_at": started,
            "panel": "bench",
            "manifest_json": json.dumps(manifest),
        }
    )


def _score_part(run_id: str, model: str, shard: int, rows: int = 5) -> bytes:
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
        for i in range(rows)
    ]
    return to_parquet("scores", rows)


def build(root: Path | None, s3: Store | None, runs: int, shards: int) -> dict[str, int]:
    """The store: parts and markers (locally), the index snapshot of every landing and its
    digest of the events (`write_digests`, as a snapshot's writer makes it), and the last
    run's finished event landed for real after it; returns counts of what it holds."""
    store: Store = LocalStore(root) if root is not None else s3  # type: ignore[assignment]
    models = [f"model-{k}" for k in range(5)]
    numbers: list[int] = []
    names: list[str] = []
    run_of: list[str] = []
    tables: list[str] = []
    keys: list[str] = []
    events: list[tuple[str, RunEventRow]] = []
    number = 0

    def landed(name: str, run_id: str, parts: list[tuple[str, str]]) -> None:
        nonlocal number
        number += 1
        for table, key in parts:
            numbers.append(number)
            names.append(name)
            run_of.append(run_id)
            tables.append(table)
            keys.append(key)

    for n in range(runs):
        run_id = _run_id(n)
        for seq in (1, 2):
            if (n, seq) == (runs - 1, 2):
                continue  # landed for real below
            name = f"{run_id}-event-{seq:03d}"
            events.append((name, _event(run_id, n, seq)))
            landed(name, run_id, [("run_events", part_key("run_events", name))])
            if seq == 1 and n == COMPACTED_RUN:
                # Finished and compacted, as roadeval leaves a finished run: one part per
                # table x model folder, the shards' parts hidden (`storage.compaction`).
                name = f"{run_id}-compacted"
                landed(
                    name,
                    run_id,
                    [(t, f"{_folder(t, m)}/{name}.parquet") for m in models for t in TABLES],
                )
            elif seq == 1:
                for shard in range(shards):
                    model = models[shard % len(models)]
                    shard_name = f"{run_id}-trip-{quote(model, safe='')}-{shard:05d}"
                    landed(
                        shard_name,
                        run_id,
                        [(t, f"{_folder(t, model)}/{shard_name}.parquet") for t in TABLES],
                    )
    top = -(-number // SNAPSHOT) * SNAPSHOT
    fingerprints = {t: schema_fingerprint(SCHEMAS[t]) for t in (*TABLES, "run_events")}
    snapshot = pa.table(
        {
            "number": pa.array(numbers, pa.int64()),
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
    for name, row in events:
        write_part(store, "run_events", name, [row])
    if root is not None:
        for key in sorted({k.rsplit("/", 1)[0] for k in keys}):
            (root / key).mkdir(parents=True, exist_ok=True)
        (root / LANDINGS).mkdir(parents=True, exist_ok=True)
        for key, name, table in zip(keys, names, tables, strict=True):
            if table == "run_events":
                continue
            path = root / key
            content = _content(key, name, first, shards)
            if content is not None:
                path.write_bytes(content)
            else:
                path.touch()
        for name in dict.fromkeys(names):
            (root / LANDINGS / name).touch()
        (root / SNAPSHOTS).mkdir(parents=True, exist_ok=True)
        (root / snapshot_key).write_bytes(sink.getvalue())
    else:
        store.put(snapshot_key, sink.getvalue())
        for key, name in zip(keys, names, strict=True):
            content = _content(key, name, first, shards)
            if content is not None:
                store.put(key, content)
    write_digests(store, top, snapshot, None)
    last = _run_id(runs - 1)
    land(store, f"{last}-event-002", [Part("run_events", [_event(last, runs - 1, 2)])])
    return {"landings": number + 1, "parts": len(keys) + 1, "markers": number + 1}


def _content(key: str, name: str, first: str, shards: int) -> bytes | None:
    """Real rows for the scores parts the queries read (the first run's shards, the compacted
    run's folders: as many rows as its shards held); None for a part no query reads."""
    if not key.startswith("tables/scores/"):
        return None
    model = key.split("model=")[1].split("/")[0]
    if name.startswith(first):
        return _score_part(first, model, 0)
    if name.endswith("-compacted"):
        return _score_part(name.removesuffix("-compacted"), model, 0, rows=5 * shards // 5)
    return None


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
        (
            "compacted run's",
            [
                roadeval, "query", "--store", store_uri, "-f", "csv", "--run",
                _run_id(COMPACTED_RUN), "select count(*), sum(value) from scores",
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
            print(f"[local] {label:9} {name:18} {median:7.2f} s   {out.strip()!r}")
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
        measured = queries(f"s3://{BUCKET}/{PREFIX}", _run_id(0))
        for label in ("index", "no digest"):
            if label == "no digest":
                # The control: the events read part by part, as before digests.
                store.delete_many(store.list(DIGESTS))
                measured = measured[:1]
            for name, command in measured:
                walls, made = [], Counter[str]()
                for _ in range(3):
                    before = len(moto.lines())
                    wall, out = timed(command, env, work)
                    walls.append(wall)
                    made, _, _ = classify(moto.lines()[before:])
                print(
                    f"[s3] {label:9} {name:18} {statistics.median(walls):7.2f} s   "
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
