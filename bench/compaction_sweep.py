"""What a run's compaction costs with and without removing the parts it replaced and sweeping
what no reader sees (issue 40), and what a plain Parquet reader then counts.

    .venv/bin/python bench/compaction_sweep.py [--before DIR] [--runs 20] [--shards 40]
        [--rows 200] [--leftovers 30] [--repeat 3]

A folder store is built of `--runs` finished runs, each `--shards` shards landed into
`responses`, `parses` and `scores` of 2 suites x 2 models (`--rows` rows a part), each run
compacted as it finished, then a killed run's `--leftovers` parts written and never published
(its end recorded `failed`), then one more run is landed and compacted: that last compaction
is timed (best of `--repeat`, each on a fresh copy of the store). Per code tree (this checkout,
and `--before`: a checkout of main, e.g. `git archive main | tar -x -C DIR`), in one session:
the compaction's wall time (lower is better), the store requests it made (a counting store:
on S3 each is a request; lower is better), the Parquet files and bytes under `tables/` after
it, the rows `read_parquet('tables/scores/**/*.parquet')` counts next to `roadeval query`'s
(equal is right), and a `roadeval query` count over the compacted store (median of 5).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

FOLDERS = [(suite, model) for suite in ("s1", "s2") for model in ("m1", "m2")]
TABLES = ("responses", "parses", "scores")


def _rows(table: str, run_id: str, n: int, start: int, **values: Any) -> Any:
    """`n` rows of `table`'s schema: the given columns and numbered item ids, nulls elsewhere."""
    import pyarrow as pa

    from roadeval.storage.records import SCHEMAS

    schema = SCHEMAS[table]
    given = {"run_id": run_id, "item_id": [f"{start + i}" for i in range(n)], **values}
    columns = []
    for field in schema:
        value = given.get(field.name)
        if value is None:
            columns.append(pa.nulls(n, field.type))
        elif isinstance(value, list):
            columns.append(pa.array(value, field.type))
        else:
            columns.append(pa.array([value] * n, field.type))
    return pa.Table.from_arrays(columns, schema=schema)


def _run_id(k: int) -> str:
    return f"20261201T{k // 3600:02d}{k // 60 % 60:02d}{k % 60:02d}Z-{k:08x}"


def _land_run(store: Any, run_id: str, shards: int, rows: int) -> None:
    from roadeval.storage.landing import Part, land

    for shard in range(shards):
        parts = [
            Part(t, suite=s, model=m, copied=_rows(t, run_id, rows, shard * rows, suite=s, model=m))
            for s, m in FOLDERS
            for t in TABLES
        ]
        land(store, f"{run_id}-{shard:05d}", parts)


def _event(store: Any, run_id: str, status: str) -> None:
    from roadeval.storage.landing import Part, land

    when = datetime.now(UTC)
    row = _rows("run_events", run_id, 1, 0, seq=0, status=status, started_at=when, host="x")
    land(store, f"{run_id}-event-000", [Part("run_events", copied=row)])


def _build(root: Path, runs: int, shards: int, rows: int, leftovers: int) -> str:
    """The store described above, but for the last run's compaction; returns its run id."""
    from roadeval.storage.compaction import compact_run
    from roadeval.storage.store import LocalStore
    from roadeval.storage.tables import write_part

    store = LocalStore(root)
    for k in range(runs):
        run_id = _run_id(k)
        _land_run(store, run_id, shards, rows)
        compact_run(store, run_id)
        _event(store, run_id, "finished")
    killed = _run_id(runs)
    _event(store, killed, "failed")
    for n in range(leftovers):
        s, m = FOLDERS[n % len(FOLDERS)]
        write_part(
            store,
            "scores",
            f"{killed}-{n:05d}",
            [],
            suite=s,
            model=m,
            copied=_rows("scores", killed, rows, 0, suite=s, model=m),
        )
    last = _run_id(runs + 1)
    _land_run(store, last, shards, rows)
    return last


def _counting(root: Path) -> tuple[Any, Counter[str]]:
    """A folder store that counts its calls (each a request on S3)."""
    from roadeval.storage.store import LocalStore

    calls: Counter[str] = Counter()

    class Counting(LocalStore):
        quiet = False

        def __getattribute__(self, name: str) -> Any:
            counted = {"put", "create", "get", "exists", "list", "list_entries", "delete"}
            if name in counted and not object.__getattribute__(self, "quiet"):
                calls[name] += 1
            return super().__getattribute__(name)

        def delete_many(self, keys: Any) -> None:
            keys = list(keys)
            calls["delete_many"] += -(-len(keys) // 1000)  # S3's DeleteObjects: 1,000 a request
            self.quiet = True
            try:
                super().delete_many(keys)
            finally:
                self.quiet = False

    return Counting(root), calls


def _measure(args: argparse.Namespace) -> dict[str, Any]:
    import duckdb

    from roadeval.storage.catalog import query
    from roadeval.storage.compaction import compact_run
    from roadeval.storage.store import LocalStore

    work = Path(tempfile.mkdtemp(prefix="compaction-bench-"))
    try:
        built = work / "built"
        last = _build(built, args.runs, args.shards, args.rows, args.leftovers)
        walls: list[float] = []
        calls: Counter[str] = Counter()
        for k in range(args.repeat):
            root = work / f"copy{k}"
            shutil.copytree(built, root)
            store, calls = _counting(root)
            t0 = time.perf_counter()
            compact_run(store, last)
            walls.append(time.perf_counter() - t0)
        tables = root / "tables"
        files = list(tables.rglob("*.parquet"))
        glob = f"read_parquet('{tables}/scores/**/*.parquet', union_by_name = true)"
        with duckdb.connect() as con:
            plain = con.execute(f"select count(*) from {glob}").fetchall()[0][0]
        queries: list[float] = []
        for _ in range(5):
            t0 = time.perf_counter()
            counted = query(LocalStore(root), "select count(*) from scores")[1][0][0]
            queries.append(time.perf_counter() - t0)
        return {
            "compaction_s": min(walls),
            "requests": sum(calls.values()),
            "deletes": calls["delete_many"] + calls["delete"],
            "files": len(files),
            "mib": sum(p.stat().st_size for p in files) / 2**20,
            "plain_scores": plain,
            "query_scores": counted,
            "query_s": statistics.median(queries),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


ROWS = [
    ("compaction_s", "last run's compaction, wall s (best of --repeat; lower is better)", "{:.3f}"),
    ("requests", "store requests the compaction made (lower is better)", "{:d}"),
    ("deletes", "  of which delete requests", "{:d}"),
    ("files", "Parquet files under tables/ after it (fewer is better)", "{:d}"),
    ("mib", "MiB under tables/ after it (smaller is better)", "{:.1f}"),
    ("plain_scores", "scores rows read_parquet counts (right: = query's)", "{:d}"),
    ("query_scores", "scores rows roadeval query counts", "{:d}"),
    ("query_s", "query count(*) from scores, wall s (median of 5)", "{:.3f}"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, help="a checkout of main (its code is timed too)")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--shards", type=int, default=40)
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--leftovers", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(_measure(args)))
        return
    trees = {"after": Path(__file__).resolve().parent.parent}
    if args.before is not None:
        trees = {"before": args.before.resolve(), **trees}
    passed = [a for a in sys.argv[1:] if not a.startswith("--before") and a != str(args.before)]
    found: dict[str, dict[str, Any]] = {}
    for name, tree in trees.items():
        env = {**os.environ, "PYTHONPATH": str(tree)}
        out = subprocess.run(
            [sys.executable, __file__, "--one", *passed],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        found[name] = json.loads(out.strip().splitlines()[-1])
    print(
        f"store: {args.runs} finished runs + 1 timed, {args.shards} shards x {len(TABLES)} tables "
        f"x {len(FOLDERS)} folders, {args.rows} rows a part; a killed run's {args.leftovers} "
        "unpublished parts"
    )
    print(f"{'':60}" + "".join(f"{name:>12}" for name in found))
    for key, label, fmt in ROWS:
        print(f"{label:60}" + "".join(f"{fmt.format(f[key]):>12}" for f in found.values()))


if __name__ == "__main__":
    main()
