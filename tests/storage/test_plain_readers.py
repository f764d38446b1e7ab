"""Any Parquet reader reads the store: once a run has ended, DuckDB's `read_parquet` over
`tables/<table>/**/*.parquet` and pyarrow's dataset over `tables/<table>` count, for every table
in the store, the rows `roadeval query` counts (compaction removes the parts it replaced; what no
landing published and nothing will is swept; a write's temporary file is read by none), on a
folder and on S3."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import boto3
import duckdb
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
from fsspec.implementations.arrow import ArrowFSWrapper

from roadeval.storage.store import _open_temp

from support.trip_panel import invoke, query_csv, trip_gold, write_panel

pytestmark = pytest.mark.usefixtures("inline")

# Shards of 5 items: 9 parts per table, suite and model, folded into one when the run finishes.
PANEL = {
    "models": [
        {"name": "random", "model": "roadeval/random", "params": {"seed": 0}},
    ],
    "chunk_size": 5,
    "scoring": {"engine": "local"},
    "render": {"engine": "local"},
}


def _run(panel: Path, store: str) -> None:
    result = invoke("run", "--panel", str(panel), "--store", store, "--no-report")
    assert result.exit_code == 0, result.output


def _query_counts(store: str, tables: list[str]) -> dict[str, int]:
    """Each table's rows as `roadeval query` counts them (one statement over every view)."""
    sql = " union all ".join(f"select '{t}', count(*) from {t}" for t in tables)
    lines = query_csv(store, sql)[1:]
    return {table: int(n) for table, n in (line.split(",") for line in lines)}


def _count(con: duckdb.DuckDBPyConnection, relation: str) -> int:
    return int(con.execute(f"select count(*) from {relation}").fetchall()[0][0])


def _local_counts(root: Path) -> dict[str, dict[str, int]]:
    """Per reader, per table folder: the rows DuckDB's glob, pyarrow's dataset and pandas'
    `read_parquet` (pyarrow's `read_table`, as docs/store.md calls it) read."""
    tables = sorted(p.name for p in (root / "tables").iterdir())
    glob = "read_parquet('{}/tables/{}/**/*.parquet', union_by_name = true)"
    with duckdb.connect() as con:
        duck = {t: _count(con, glob.format(root, t)) for t in tables}
    folder = {t: root / "tables" / t for t in tables}
    return {
        "duckdb": duck,
        "pyarrow": {
            t: ds.dataset(path, format="parquet", partitioning="hive").count_rows()
            for t, path in folder.items()
        },
        "pandas": {
            t: pq.read_table(path, partitioning=None).num_rows for t, path in folder.items()
        },
    }


def _assert_plain_readers_agree(root: Path) -> dict[str, int]:
    read = _local_counts(root)
    counted = _query_counts(str(root), sorted(read["duckdb"]))
    for reader, found in read.items():
        assert (reader, found) == (reader, counted)
    return counted


def _fix_items(source: Path) -> None:
    """A gold answer fixed, a question reworded, an item removed: a rerun with changes."""
    rows = [json.loads(line) for line in (source / "items.jsonl").read_text().splitlines()]
    rows[0]["answer"] = "B" if rows[0]["answer"] != "B" else "C"
    rows[1]["question"] += " (Assume dry asphalt.)"
    (source / "items.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows[:-1]))


def _leave_a_temporary_file(table: Path) -> None:
    """A part whole in the temporary file of its atomic write, never renamed into place (its
    process was killed), named as every such file is."""
    part = next(table.rglob("*.parquet"))
    fd, _ = _open_temp(str(part.parent))
    with os.fdopen(fd, "wb") as handle:
        handle.write(part.read_bytes())


def _manifests(root: Path) -> list[dict[str, Any]]:
    found = [json.loads(p.read_text()) for p in (root / "runs").glob("*/manifest.json")]
    return sorted(found, key=lambda m: m["started_at"])


def test_plain_readers_count_what_query_counts_after_compacted_runs_and_a_rerun(
    tmp_path: Path,
) -> None:
    source, _ = trip_gold(tmp_path)
    panel = write_panel(tmp_path / "panel.yaml", source, **PANEL)
    root = tmp_path / "store"

    _run(panel, str(root))
    [first] = _manifests(root)
    assert first["compaction"]["parts_replaced"] > first["compaction"]["parts_written"] > 0
    _leave_a_temporary_file(root / "tables" / "scores")
    counted = _assert_plain_readers_agree(root)
    # Every layout: no partition folder, suite folders, suite and model folders, a suite's own.
    assert {"metrics", "run_events", "items", "changes", "scores", "pareto"} <= set(counted)
    assert counted["scores"] > 0

    _run(panel, str(root))  # every outcome copied from the first run
    _assert_plain_readers_agree(root)

    _fix_items(source)
    _run(panel, str(root))
    third = _manifests(root)[-1]
    assert third["totals"]["scores_reused"] > 0
    counted = _assert_plain_readers_agree(root)
    assert counted["score_changes"] > 0 and counted["metric_deltas"] > 0


@pytest.mark.s3
def test_plain_readers_of_an_s3_store_count_what_query_counts(
    tmp_path: Path, s3_endpoint: str
) -> None:
    bucket = f"plain-{uuid.uuid4().hex[:8]}"
    boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket=bucket)
    source, _ = trip_gold(tmp_path)
    panel = write_panel(tmp_path / "panel.yaml", source, **PANEL)
    store = f"s3://{bucket}/nightly"
    _run(panel, store)
    replaced = "select json_extract(manifest_json, '$.compaction.parts_replaced') from runs"
    assert int(query_csv(store, replaced)[1]) > 0

    host = s3_endpoint.removeprefix("http://")
    region = os.environ["AWS_DEFAULT_REGION"]
    s3 = pafs.S3FileSystem(endpoint_override=host, scheme="http", region=region)
    tables = sorted(
        info.base_name for info in s3.get_file_info(pafs.FileSelector(f"{bucket}/nightly/tables"))
    )
    dataset = {
        t: ds.dataset(
            f"{bucket}/nightly/tables/{t}", filesystem=s3, format="parquet", partitioning="hive"
        ).count_rows()
        for t in tables
    }
    with duckdb.connect() as con:
        # DuckDB's own S3 reader is an extension fetched from the internet: through fsspec.
        con.register_filesystem(ArrowFSWrapper(s3))
        glob = "read_parquet('s3://{}/nightly/tables/{}/**/*.parquet', union_by_name = true)"
        plain = {t: _count(con, glob.format(bucket, t)) for t in tables}
    counted = _query_counts(store, tables)
    assert dataset == counted and plain == counted and counted["scores"] > 0


@pytest.mark.parametrize("command", ["show", "diff"])
def test_show_and_diff_read_a_run_whole_while_it_compacts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """`show` and `diff` run several statements over the parts they found: a compaction that
    removes some of them meanwhile has them read the run again, whole, not fail on a file gone."""
    from roadeval.storage import catalog, compaction

    source, _ = trip_gold(tmp_path)
    panel = write_panel(tmp_path / "panel.yaml", source, **PANEL)
    root = tmp_path / "store"
    compact = compaction.compact_run
    # The first run ends uncompacted: its compaction is what the reader below meets.
    monkeypatch.setattr(compaction, "compact_run", lambda *_: compaction.Compaction((), ()))
    _run(panel, str(root))
    monkeypatch.undo()
    _run(panel, str(root))
    first, second = (m["run_id"] for m in _manifests(root))
    shown = [command, first] if command == "show" else [command, first, second]
    made, compacted = catalog._views, []

    def compacting_after_the_views(store: Any, *rest: Any, **kwargs: Any) -> Any:
        con = made(store, *rest, **kwargs)
        if not compacted:
            compacted.append(compact(store, first))
        return con

    monkeypatch.setattr(catalog, "_views", compacting_after_the_views)
    during = invoke(*shown, "--store", str(root))
    monkeypatch.undo()
    assert compacted and compacted[0].replaced
    after = invoke(*shown, "--store", str(root))
    assert during.exit_code == after.exit_code == 0, during.output
    assert during.output == after.output
