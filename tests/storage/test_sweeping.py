"""What no reader sees leaves `tables/` once nothing can publish it: the parts a compaction
replaced, and the parts of a landing cut short whose run has ended. A live run's landing in
progress and a suite's items stay, whatever the sweep."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from roadeval.storage import catalog
from roadeval.storage.catalog import query
from roadeval.storage.compaction import FOLD_FROM, compact_run
from roadeval.storage.heartbeats import Heartbeat, heartbeat_key
from roadeval.storage.landing import Part, compacted_name, land, visible_parts
from roadeval.storage.store import LocalStore, StoreError
from roadeval.storage.sweeping import GONE_AFTER_S
from roadeval.storage.tables import write_part

from support.crashing_store import Crash, CrashingStore
from support.rows import record

RUN, OTHER, LAST = (
    "20261202T000000Z-aaaaaaaa",
    "20261202T000001Z-bbbbbbbb",
    "20261202T000002Z-cccccccc",
)


def _scores(run_id: str, start: int, n: int) -> list[object]:
    return [
        record("scores", run_id=run_id, suite="s", item_id=f"{start + i}", model="m")
        for i in range(n)
    ]


def _shards(store: LocalStore, run_id: str, shards: int) -> None:
    for k in range(shards):
        land(store, f"{run_id}-s-m-{k:03d}", [Part("scores", _scores(run_id, 10 * k, 2), "s", "m")])


@pytest.fixture(autouse=True)
def _sweeps_fail_loudly(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """A sweep that raised is a warning in a run (the run stays finished): here, a failure."""
    yield
    said = [record.getMessage() for record in caplog.get_records("call")]
    assert not [line for line in said if "could not remove the parts no reader sees" in line]


def _event(store: LocalStore, run_id: str, status: str, host: str, pid: int) -> None:
    row = record(
        "run_events",
        run_id=run_id,
        seq=0,
        status=status,
        started_at=datetime.now(UTC),
        host=host,
        pid=pid,
        heartbeat_s=15.0,
    )
    land(store, f"{run_id}-event-000", [Part("run_events", [row])])


def _cut_short(store: LocalStore, run_id: str) -> str:
    """A shard's part written and never published (its process killed before the marker)."""
    key = write_part(
        store, "scores", f"{run_id}-s-m-999", _scores(run_id, 999, 3), suite="s", model="m"
    )
    assert key is not None
    return key


def _plain_count(root: Path, table: str = "scores") -> int:
    glob = f"read_parquet('{root}/tables/{table}/**/*.parquet', union_by_name = true)"
    with duckdb.connect() as con:
        return int(con.execute(f"select count(*) from {glob}").fetchall()[0][0])


def _agree(store: LocalStore, table: str = "scores") -> bool:
    counted = query(store, f"select count(*) from {table}")[1][0][0]
    return _plain_count(store.root, table) == counted


def _gone_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _finish(store: LocalStore, run_id: str) -> list[str]:
    """A run that lands its shards and finishes: its compaction sweeps."""
    _shards(store, run_id, FOLD_FROM)
    return list(compact_run(store, run_id).swept)


def test_a_compaction_removes_the_parts_it_replaced(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    _shards(store, RUN, FOLD_FROM)
    assert _plain_count(tmp_path) == 2 * FOLD_FROM

    done = compact_run(store, RUN)

    assert len(done.replaced) == FOLD_FROM
    assert not any((tmp_path / key).exists() for key in done.replaced)
    assert all((tmp_path / key).exists() for key in done.written)
    assert _agree(store)


@pytest.mark.parametrize("status", ["failed", "interrupted", "finished"])
def test_a_landing_cut_short_is_swept_once_its_run_recorded_its_end(
    tmp_path: Path, status: str
) -> None:
    store = LocalStore(tmp_path)
    _event(store, OTHER, status, "elsewhere", 1)
    left = _cut_short(store, OTHER)
    assert not _agree(store)
    assert _finish(store, LAST) == [left]
    assert not (tmp_path / left).exists() and _agree(store)


def test_a_landing_cut_short_by_a_kill_on_this_machine_is_swept(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    _event(store, OTHER, "running", socket.gethostname(), _gone_pid())
    left = _cut_short(store, OTHER)
    assert _finish(store, LAST) == [left]
    assert _agree(store)


def test_a_live_runs_landing_in_progress_is_left_alone(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    _event(store, OTHER, "running", socket.gethostname(), os.getpid())
    in_progress = _cut_short(store, OTHER)
    assert _finish(store, LAST) == []
    assert (tmp_path / in_progress).exists()


def test_a_run_elsewhere_is_swept_only_once_its_heartbeat_is_long_silent(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    _event(store, OTHER, "running", "elsewhere", 1)
    left = _cut_short(store, OTHER)
    beat = Heartbeat(OTHER, datetime.now(UTC) - timedelta(minutes=5), 15.0, "elsewhere", 1)
    store.put(heartbeat_key(OTHER), beat.to_json())
    # Silent for minutes (`runs` reads it died): it may still be landing; kept.
    assert _finish(store, LAST) == []
    silent = datetime.now(UTC) - timedelta(seconds=GONE_AFTER_S + 60)
    store.put(heartbeat_key(OTHER), Heartbeat(OTHER, silent, 15.0, "elsewhere", 1).to_json())
    assert _finish(store, "20261202T000003Z-dddddddd") == [left]


def test_a_part_of_no_known_run_and_a_suites_items_are_left_alone(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    items = write_part(
        store, "items", "items-abc", [record("items", suite="s", item_id="1")], suite="s"
    )
    unknown = _cut_short(store, OTHER)  # no event: nothing says its run ended
    assert _finish(store, LAST) == []
    assert items and (tmp_path / items).exists() and (tmp_path / unknown).exists()


class RefusingDeletes(LocalStore):
    """A folder whose deletes fail (a bucket policy without s3:DeleteObject, say)."""

    def delete_many(self, keys: Iterable[str]) -> None:
        if list(keys):
            raise StoreError(f"store {self.uri}: access denied")


def test_parts_a_compaction_could_not_remove_are_swept_by_the_next(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = LocalStore(tmp_path)
    _shards(store, RUN, FOLD_FROM)
    done = compact_run(RefusingDeletes(tmp_path), RUN)
    assert (
        done.written
        and f"could not remove the {FOLD_FROM} parts the compaction replaced" in caplog.text
    )
    assert all((tmp_path / key).exists() for key in done.replaced)
    assert not _agree(store)
    assert _finish(store, LAST) == sorted(done.replaced)
    assert _agree(store)


def test_a_compaction_published_by_its_index_entry_alone_keeps_what_it_replaced(
    tmp_path: Path,
) -> None:
    store = LocalStore(tmp_path)
    _shards(store, RUN, FOLD_FROM)
    # Its part and its index entry are written, its marker is not: the views read the
    # compacted part, a reader by the markers (a rerun's of its baseline) the small ones.
    with pytest.raises(Crash):
        compact_run(CrashingStore(tmp_path, crash_on=3), RUN)
    assert [k for k in visible_parts(store)["scores"] if RUN in k] == [
        f"tables/scores/suite=s/model=m/{compacted_name(RUN)}.parquet"
    ]
    assert _finish(store, LAST) == []
    assert len(list(tmp_path.glob(f"tables/scores/*/*/{RUN}-s-m-*.parquet"))) == FOLD_FROM


def test_a_compaction_the_store_refused_leaves_no_part_behind(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    _shards(store, RUN, FOLD_FROM)
    answer = record("responses", run_id=RUN, suite="s", model="n")
    for k in range(FOLD_FROM):
        land(store, f"{RUN}-s-n-{k:03d}", [Part("responses", [answer], "s", "n")])
    # The first compacted part (responses) is written, the second refused: nothing published.
    with pytest.raises(Crash):
        compact_run(CrashingStore(tmp_path, crash_on=2), RUN)
    assert not list(tmp_path.glob("tables/**/*-compacted.parquet"))
    assert _agree(store, "responses") and _agree(store)


def _compacting_under_a_reader(
    store: LocalStore, monkeypatch: pytest.MonkeyPatch, *, after_views: bool
) -> list[str]:
    """The run's small parts found by a reader, then compacted away (before its views are
    made, or after, while its statement is to run); returns what the reader looked up."""
    _shards(store, RUN, FOLD_FROM)
    looked: list[str] = []
    found, made = catalog._parts, catalog._views

    def parts(s: LocalStore, tables: list[str], *rest: object) -> object:
        looked.append("parts")
        return found(s, tables, *rest)  # type: ignore[arg-type]

    def views(s: LocalStore, *args: object, **kwargs: object) -> object:
        if looked.count("parts") == 1 and not after_views:
            compact_run(s, RUN)
        con = made(s, *args, **kwargs)  # type: ignore[arg-type]
        if looked.count("parts") == 1 and after_views:
            compact_run(s, RUN)
        return con

    monkeypatch.setattr(catalog, "_parts", parts)
    monkeypatch.setattr(catalog, "_views", views)
    return looked


@pytest.mark.parametrize("after_views", [False, True])
def test_a_reader_whose_parts_a_compaction_removed_reads_the_compacted_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, after_views: bool
) -> None:
    store = LocalStore(tmp_path)
    looked = _compacting_under_a_reader(store, monkeypatch, after_views=after_views)
    assert query(store, "select count(*) from scores")[1] == [(2 * FOLD_FROM,)]
    # Found, found again to see that they changed, and read anew.
    assert looked == ["parts"] * 3


def test_a_part_gone_while_the_index_still_names_it_is_an_error(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    _shards(store, RUN, 2)
    next((tmp_path / "tables" / "scores").rglob("*.parquet")).unlink()
    with pytest.raises(duckdb.IOException, match="No files found"):
        query(store, "select count(*) from scores")
