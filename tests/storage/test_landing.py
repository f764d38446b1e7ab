"""Landings: a shard's parts become visible together or not at all, whatever the crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from roadeval.storage.catalog import query
from roadeval.storage.landing import Part, is_landed, land
from roadeval.storage.store import LocalStore

from support.crashing_store import Crash, CrashingStore
from support.rows import record


def _rows(table: str, n: int) -> list[object]:
    return [record(table, run_id="r", suite="s", item_id=str(i), model="m") for i in range(n)]


def _shard(store: LocalStore, name: str) -> None:
    land(
        store,
        name,
        [
            Part("responses", _rows("responses", 3), suite="s", model="m"),
            Part("parses", _rows("parses", 3), suite="s", model="m"),
            Part("scores", _rows("scores", 3), suite="s", model="m"),
        ],
    )


# The n-th write of the landing fails: 1 is its first part, 4 its index entry, which publishes
# it (all parts written); its marker (5) only names it.
@pytest.mark.parametrize("crash_on", [1, 2, 3, 4])
def test_a_crash_mid_landing_leaves_nothing_visible(tmp_path: Path, crash_on: int) -> None:
    _shard(LocalStore(tmp_path), "whole")
    with pytest.raises(Crash):
        _shard(CrashingStore(tmp_path, crash_on), "half")
    store = LocalStore(tmp_path)
    for table in ("responses", "parses", "scores"):
        assert query(store, f"select count(*) from {table}")[1] == [(3,)]
    # The parts are there, unpublished; a query that asks for them sees them.
    _, unlanded = query(store, "select count(*) from responses", include_unlanded=True)
    assert unlanded == [(3 if crash_on == 1 else 6,)]


def test_a_landing_is_visible_once_its_index_entry_is_written(tmp_path: Path) -> None:
    _shard(LocalStore(tmp_path), "whole")
    with pytest.raises(Crash):
        _shard(CrashingStore(tmp_path, 5), "half")  # the marker's write
    store = LocalStore(tmp_path)
    assert not is_landed(store, "half")
    for table in ("responses", "parses", "scores"):
        assert query(store, f"select count(*) from {table}")[1] == [(6,)]


@pytest.mark.parametrize("table", ["responses", "parses", "scores", "plan"])
def test_rows_read_back_are_the_records_landed(tmp_path: Path, table: str) -> None:
    """Parts are encoded by column and read back without `__init__` (both for speed): what
    comes back equals, field for field, what was landed."""
    from roadeval.storage.landing import read_rows, visible_parts

    store = LocalStore(tmp_path)
    rows = _rows(table, 5)
    land(store, "run-1", [Part(table, rows, suite="s", model="m")])
    back = read_rows(store, table, visible_parts(store)[table])
    assert back == rows and [type(r) for r in back] == [type(r) for r in rows]
