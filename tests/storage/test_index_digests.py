"""Index digests: a snapshot's writer keeps the event parts' rows in one object, a reader takes
from it only what its own index view shows under the same key and number, and reads the rest;
on S3 the `runs` view then costs one GET for its events, not one per part."""

from __future__ import annotations

import io
import logging
import uuid
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import boto3
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from roadeval.storage import part_index
from roadeval.storage.catalog import query
from roadeval.storage.index_digests import PART_KEY, PART_NUMBER, digest_key, read_whole
from roadeval.storage.landing import Part, land
from roadeval.storage.part_cache import forget_parts
from roadeval.storage.part_index import PartIndex
from roadeval.storage.store import LocalStore, S3Store, Store, open_store
from roadeval.storage.tables import read_part

from support.rows import record

SEGMENT, SNAPSHOT = 4, 8


@pytest.fixture(autouse=True)
def small_folds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Snapshots every 8 landings, so that a few runs' events span several."""
    monkeypatch.setattr(part_index, "SEGMENT", SEGMENT)
    monkeypatch.setattr(part_index, "SNAPSHOT", SNAPSHOT)


def _run(n: int) -> str:
    return f"20261204T0000{n:02d}Z-{n:08x}"


def _event(store: Store, n: int, seq: int, status: str) -> None:
    row = record(
        "run_events",
        run_id=_run(n),
        seq=seq,
        status=status,
        started_at=datetime(2026, 12, 4, tzinfo=UTC),
        panel="p",
        manifest_json="{}",
    )
    land(store, f"{_run(n)}-event-{seq:03d}", [Part("run_events", [row])])


def _shard(store: Store, n: int, shard: int) -> None:
    rows = [record("scores", run_id=_run(n), suite="s", item_id=str(shard), model="m")]
    land(store, f"{_run(n)}-shard-{shard:05d}", [Part("scores", rows, suite="s", model="m")])


def _runs(store: Store, runs: range, shards: int = 3) -> None:
    """Each run: its running event, a few shards, its finished event."""
    for n in runs:
        _event(store, n, 1, "running")
        for shard in range(shards):
            _shard(store, n, shard)
        _event(store, n, 2, "finished")


def _events_by_parts(store: Store) -> list[tuple[str, int, str]]:
    view = PartIndex(store).load(["run_events"])
    assert view is not None
    parts = [read_part(store, "run_events", key) for key in view.keys("run_events")]
    return _rows(pa.concat_tables(parts))


def _rows(table: pa.Table) -> list[tuple[str, int, str]]:
    return sorted(
        zip(
            table.column("run_id").to_pylist(),
            table.column("seq").to_pylist(),
            table.column("status").to_pylist(),
            strict=True,
        )
    )


def _whole(store: Store) -> pa.Table:
    view = PartIndex(store).load(["run_events"])
    assert view is not None
    return read_whole(store, "run_events", view.of("run_events"), view.base)


class CountingGets:
    """Counts a store's GETs by folder (`tables/run_events`, `index/digests`, ...)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, store: Store) -> None:
        self.counts: Counter[str] = Counter()
        original = type(store).get

        def get(this: Store, key: str) -> bytes:
            self.counts["/".join(key.split("/")[:2])] += 1
            return original(this, key)

        monkeypatch.setattr(type(store), "get", get)


def test_a_snapshot_digests_the_events_and_a_reader_reads_only_those_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LocalStore(tmp_path)
    _runs(store, range(3))  # 15 landings: a snapshot at 8, entries after it
    assert store.exists(digest_key("run_events", SNAPSHOT))
    view = PartIndex(store).load(["run_events"])
    assert view is not None and view.base == SNAPSHOT
    after = pc.sum(pc.greater(view.of("run_events").column("number"), SNAPSHOT)).as_py()
    assert after == 3  # run 1's finished event and run 2's two
    gets = CountingGets(monkeypatch, store)
    whole = _whole(store)
    assert gets.counts["index/digests"] == 1 and gets.counts["tables/run_events"] == after
    assert _rows(whole) == _events_by_parts(store)
    assert (
        len(whole) == 6
        and whole.schema == read_part(store, "run_events", view.keys("run_events")[0]).schema
    )


def test_the_next_snapshot_reads_only_the_parts_the_digest_before_lacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LocalStore(tmp_path)
    _runs(store, range(3))  # 15 landings
    gets = CountingGets(monkeypatch, store)
    _shard(store, 9, 0)  # landing 16: the snapshot at 16 folds three new events
    assert store.exists(digest_key("run_events", 2 * SNAPSHOT))
    assert gets.counts["tables/run_events"] == 3
    # The digest before is retired with its snapshot once the next one lands.
    _runs(store, range(3, 5))  # to landing 26: the snapshot at 24 retires the one at 8
    assert not store.exists(digest_key("run_events", SNAPSHOT))
    assert _rows(_whole(store)) == _events_by_parts(store)


def _rewrite_digest(store: Store, number: int, edit) -> None:
    key = digest_key("run_events", number)
    digest = pq.ParquetFile(pa.BufferReader(store.get(key))).read()
    sink = io.BytesIO()
    pq.write_table(edit(digest), sink)
    store.put(key, sink.getvalue())


def _renamed_runs(digest: pa.Table, number_shift: int = 0) -> pa.Table:
    """The digest with every run id changed (and its numbers moved by `number_shift`)."""
    columns = {name: digest.column(name) for name in digest.column_names}
    columns["run_id"] = pa.array(["edited"] * len(digest), pa.string())
    columns[PART_NUMBER] = pc.add(digest.column(PART_NUMBER), number_shift)
    return pa.table(columns)


def test_a_digest_is_taken_only_for_parts_under_the_same_key_and_number(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    _runs(store, range(3))
    truth = _events_by_parts(store)
    # Under the numbers the index shows, the digest is what is read: its edits show.
    _rewrite_digest(store, SNAPSHOT, _renamed_runs)
    assert sum(run == "edited" for run, _, _ in _rows(_whole(store))) == 3
    # Under other numbers (a key landed again since, say) it is not: the parts are read.
    _rewrite_digest(store, SNAPSHOT, lambda d: _renamed_runs(d, number_shift=1000))
    assert _rows(_whole(store)) == truth
    # A digest's rows of a key the index no longer shows are left out.
    _rewrite_digest(
        store,
        SNAPSHOT,
        lambda d: d.set_column(
            d.column_names.index(PART_KEY), PART_KEY, pa.array(["gone"] * len(d), pa.string())
        ),
    )
    assert _rows(_whole(store)) == truth


def test_a_missing_or_damaged_digest_costs_reads_not_rows(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = LocalStore(tmp_path)
    _runs(store, range(3))
    truth = _events_by_parts(store)
    store.put(digest_key("run_events", SNAPSHOT), b"not parquet")
    with caplog.at_level(logging.WARNING, logger="roadeval.storage.index_digests"):
        assert _rows(_whole(store)) == truth
    assert "unreadable" in caplog.text
    store.delete_many([digest_key("run_events", SNAPSHOT)])
    assert _rows(_whole(store)) == truth


def test_runs_on_s3_reads_its_events_from_the_digest(
    s3_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    bucket = f"digests-{uuid.uuid4().hex[:8]}"
    boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket=bucket)
    store = open_store(f"s3://{bucket}/store")
    assert isinstance(store, S3Store)
    _runs(store, range(6))  # 30 landings: a snapshot at 24, six landings after it
    forget_parts()  # read as a process that did not land them would
    gets = CountingGets(monkeypatch, store)
    _, rows = query(store, "select status, count(*) from runs group by status")
    assert rows == [("finished", 6)]
    # Run 4's finished event and run 5's two landed after the snapshot; the other nine
    # are in its digest.
    assert gets.counts["tables/run_events"] == 3 and gets.counts["index/digests"] == 1
