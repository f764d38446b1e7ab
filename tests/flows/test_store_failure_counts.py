"""After the store fails under a run, the command's last line and the `runs` row agree on what
landed and what is left: counted from the shards whose landing succeeded, every other item left
(`not_landed`); and when the store refuses the run's last record too, the line says so instead
of claiming it was recorded."""

from __future__ import annotations

import errno
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from roadeval.storage import landing
from roadeval.storage.part_index import Published
from roadeval.storage.store import LocalStore, Store

from support.trip_panel import invoke, query_csv, trip_gold, write_panel

pytestmark = pytest.mark.usefixtures("inline")

FULL = OSError(errno.ENOSPC, "No space left on device")


def _panel(tmp_path: Path) -> tuple[Path, int]:
    source, gold = trip_gold(tmp_path)
    models = [{"model": "roadeval/always-a"}]
    return write_panel(tmp_path / "p.yaml", source, models, chunk_size=5), len(gold)


def _line(result: Any) -> str:
    return " ".join(result.output.split())


def _kept(line: str) -> tuple[int, int, int]:
    """(answered and landed, left, of them in shards that did not land) as the line says."""
    found = re.search(
        r"(\d+) items answered and landed, (\d+) left(?: \((\d+) of them in shards that did "
        r"not land\))?",
        line,
    )
    assert found is not None, line
    return int(found[1]), int(found[2]), int(found[3] or 0)


def _landed_items(store: Path) -> int:
    [count] = query_csv(str(store), "select count(distinct item_id) from scores")[1:]
    return int(count)


def test_the_last_line_and_the_runs_row_count_what_landed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    panel, n = _panel(tmp_path)
    store = tmp_path / "store"
    put = LocalStore.put

    def put_or_fail(self: LocalStore, key: str, data: bytes) -> None:
        # The second shard's scores cannot be written: that shard does not land.
        if key.startswith("tables/scores/") and key.endswith("-00001.parquet"):
            raise FULL
        put(self, key, data)

    monkeypatch.setattr(LocalStore, "put", put_or_fail)
    result = invoke("run", "--panel", str(panel), "--store", str(store))
    assert result.exit_code == 1, result.output
    line = _line(result)
    assert f"error: store {store}: No space left on device" in line, line
    assert "recorded failed" in line
    answered, left, not_landed = _kept(line)
    assert not_landed == 5 and answered + left == n
    [row] = query_csv(
        str(store), "select status, n_items, n_scored, n_interrupted + n_not_run from runs"
    )[1:]
    assert row == f"failed,{n},{answered},{left}"
    assert _landed_items(store) == answered


def test_a_last_record_the_store_refused_is_said_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    panel, n = _panel(tmp_path)
    store = tmp_path / "store"
    put, create, publish = LocalStore.put, LocalStore.create, landing.publish
    gone = {"now": False}
    # One writer at a time: the store is gone from one instant on, for every writer (a shard's
    # landing that passed the check while another landed would otherwise land as well). A
    # landing's publication (its index entry, then its marker) is one write here: another
    # shard's index entry between them would be visible to readers, yet not landed.
    writing = threading.RLock()

    def put_or_fail(self: LocalStore, key: str, data: bytes) -> None:
        with writing:
            if gone["now"]:
                raise FULL
            put(self, key, data)
            # Once one shard has landed, the store is gone: nothing more is written, the last
            # `runs` event neither.
            if re.fullmatch(r"landings/\d{8}T\d{6}Z-[0-9a-f]{8}-\d{5}", key):
                gone["now"] = True

    def create_or_fail(self: LocalStore, key: str, data: bytes) -> bool:
        with writing:
            if gone["now"]:
                raise FULL
            return create(self, key, data)

    def publish_or_fail(store: Store, name: str, parts: Sequence[Published]) -> None:
        with writing:
            if gone["now"]:
                raise FULL
            publish(store, name, parts)

    monkeypatch.setattr(LocalStore, "put", put_or_fail)
    monkeypatch.setattr(LocalStore, "create", create_or_fail)
    monkeypatch.setattr(landing, "publish", publish_or_fail)
    result = invoke("run", "--panel", str(panel), "--store", str(store))
    assert result.exit_code == 1, result.output
    line = _line(result)
    assert "recorded failed" not in line
    assert f"could not record its end (store {store}: No space left on device)" in line, line
    answered, left, not_landed = _kept(line)
    assert answered + left == n and not_landed >= 5
    monkeypatch.undo()
    assert _landed_items(store) == answered
    # What `runs` holds is the run's first record: it never claimed the counts above.
    [row] = query_csv(str(store), "select n_scored from runs")[1:]
    assert row == "0"
