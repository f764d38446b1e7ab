"""The part index: every landing appends an entry, folds keep what a reader loads to a few
objects, and readers see exactly what the markers and parts say, whatever the interleaving."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from roadeval.storage import part_index
from roadeval.storage.compaction import compact_run
from roadeval.storage.landing import LANDINGS, Part, land, listed_parts, visible_parts
from roadeval.storage.listing import Listing
from roadeval.storage.part_index import (
    LOG,
    SEGMENTS,
    SNAPSHOTS,
    UNINDEXED,
    PartIndex,
)
from roadeval.storage.store import ConditionalWritesUnsupported, LocalStore
from roadeval.storage.tables import write_part

from support.rows import record

RUN = "20261202T000000Z-aaaaaaaa"

# Folds every 8 entries into a segment and every 32 into a snapshot (the store's are 16 and 256):
# the same folds and retirements, shown by a fifth to an eighth of the landings.
SEGMENT, SNAPSHOT = 8, 32


@pytest.fixture(autouse=True)
def _small_folds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(part_index, "SEGMENT", SEGMENT)
    monkeypatch.setattr(part_index, "SNAPSHOT", SNAPSHOT)


def _land(store: LocalStore, n: int, run: str = RUN, model: str = "m") -> None:
    rows = [record("scores", run_id=run, suite="s", item_id=str(n), model=model)]
    land(store, f"{run}-shard-{n:05d}", [Part("scores", rows, suite="s", model=model)])


def _index_keys(store: LocalStore, folder: str) -> list[str]:
    return store.list(folder)


def test_every_landing_is_visible_through_a_few_objects(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    total = 2 * SNAPSHOT + 3 * SEGMENT + 5
    for n in range(total):
        _land(store, n)
    PartIndex._bases.pop(store.uri)  # as a new process knows no snapshot yet
    view = PartIndex(store).load()
    assert view is not None
    assert view.keys("scores") == listed_parts(store)["scores"]
    assert len(view.keys("scores")) == total
    # Three listings, the newest snapshot, three segments and five entries.
    assert view.requests == 3 + 1 + 3 + 5
    # A process that has seen a snapshot lists once after it: its entries after the snapshot,
    # then every segment and snapshot (a later one too: its writer folded entries it listed).
    PartIndex._bases[store.uri] = SNAPSHOT
    again = PartIndex(store).load()
    assert again is not None and again.keys("scores") == view.keys("scores")
    assert again.requests == 1 + 1 + 3 + 5 and again.base == 2 * SNAPSHOT
    # The snapshot before the newest and the segments it folded are retired; the newest's
    # are kept for readers that listed before it; entries all stay.
    snapshots = [part_index._number_of(k) for k in _index_keys(store, SNAPSHOTS)]
    assert snapshots == [SNAPSHOT, 2 * SNAPSHOT]
    segments = [part_index._number_of(k) or 0 for k in _index_keys(store, SEGMENTS)]
    assert min(segments) == SNAPSHOT + SEGMENT
    assert len(_index_keys(store, LOG)) == total


def test_a_query_names_the_runs_it_needs(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    other = "20261202T000001Z-bbbbbbbb"
    for n in range(3):
        _land(store, n)
        _land(store, n, run=other)
    land(store, "items-abc", [Part("items", [record("items", suite="s", item_id="1")], suite="s")])
    mine = visible_parts(store, tables=["scores", "items"], runs=[RUN])
    assert len(mine["scores"]) == 3 and all(RUN in key for key in mine["scores"])
    assert len(mine["items"]) == 1  # the items belong to no run: always there
    view = PartIndex(store).load()
    assert view is not None and view.run_ids() == {RUN, other}


def test_a_compaction_hides_what_it_replaces_across_folds(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    for n in range(SEGMENT + 3):
        _land(store, n)
    compact_run(store, RUN)
    # Folds after the compaction put its entry and the parts it replaces in one snapshot.
    for n in range(SNAPSHOT):
        _land(store, n, run="20261202T000002Z-cccccccc")
    keys = visible_parts(store, tables=["scores"], runs=[RUN])["scores"]
    assert keys == [f"tables/scores/suite=s/model=m/{RUN}-compacted.parquet"]
    assert visible_parts(store, tables=["scores"], runs=[RUN]) == listed_parts(
        store, tables=["scores"], runs=[RUN]
    )


def test_writers_at_once_take_dense_numbers_and_lose_nothing(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)

    def writer(w: int) -> None:
        for n in range(60):
            _land(LocalStore(tmp_path), n, model=f"m{w}")

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    view = PartIndex(store).load()
    assert view is not None and len(view.keys("scores")) == 240
    assert view.keys("scores") == listed_parts(store)["scores"]


class CountingCreates(LocalStore):
    """A folder that counts the conditional creates it refused (a 412 each on S3)."""

    refused = 0
    _count = threading.Lock()

    def create(self, key: str, data: bytes) -> bool:
        taken = super().create(key, data)
        if not taken:
            with self._count:
                CountingCreates.refused += 1
        return taken


def test_threads_of_one_process_take_numbers_in_turn_not_by_refused_creates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(CountingCreates, "refused", 0)
    start = threading.Barrier(8)

    def writer(w: int) -> None:
        start.wait()
        for n in range(10):
            _land(CountingCreates(tmp_path), n, model=f"m{w}")

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    numbers = sorted(part_index._number_of(k) for k in LocalStore(tmp_path).list(LOG))
    assert numbers == list(range(1, 81))
    assert CountingCreates.refused == 0


class CountingLists(LocalStore):
    """A folder that counts its listings (a LIST request each on S3)."""

    lists = 0

    def list_entries(
        self, prefix: str, start_after: str | None = None, limit: int | None = None
    ) -> Listing:
        CountingLists.lists += 1
        return super().list_entries(prefix, start_after, limit)

    def list(self, prefix: str) -> list[str]:
        CountingLists.lists += 1
        return super().list(prefix)


def test_a_process_that_loaded_the_index_lands_without_listing_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(3):
        _land(LocalStore(tmp_path), n)
    PartIndex._next.pop(LocalStore(tmp_path).uri)  # as a new process (a rerun) knows no number
    store = CountingLists(tmp_path)
    assert PartIndex(store).load() is not None
    monkeypatch.setattr(CountingLists, "lists", 0)
    _land(store, 3)
    assert CountingLists.lists == 0
    numbers = sorted(part_index._number_of(k) for k in store.list(LOG))
    assert numbers == [1, 2, 3, 4]


def test_another_process_starts_from_the_top(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    for n in range(5):
        _land(store, n)
    PartIndex._next.pop(store.uri)  # as a new process knows no number yet
    _land(store, 5)
    numbers = sorted(part_index._number_of(k) for k in store.list(LOG))
    assert numbers == [1, 2, 3, 4, 5, 6]


def test_a_writer_whose_next_number_is_long_past_loses_nothing(tmp_path: Path) -> None:
    """A process that took a number, then slept while others landed past two snapshots (whose
    folds retire what they hold), lands its next entry above all of them, where readers see it."""
    store = LocalStore(tmp_path)
    _land(store, 0)
    stale = PartIndex._next[store.uri]
    for n in range(1, 2 * SNAPSHOT + 40):
        _land(store, n)
    PartIndex._next[store.uri] = stale  # as that process still believes
    _land(store, 99_999)
    view = PartIndex(store).load()
    assert view is not None and len(view.keys("scores")) == 2 * SNAPSHOT + 41
    assert any("99999" in key for key in view.keys("scores"))


def test_a_store_written_before_the_index_is_snapshotted_by_its_first_new_landing(
    tmp_path: Path,
) -> None:
    store = LocalStore(tmp_path)
    # As the code before the index landed: parts, then a marker, nothing under index/.
    for n in range(3):
        rows = [record("scores", run_id=RUN, suite="s", item_id=str(n), model="m")]
        key = write_part(store, "scores", f"{RUN}-old-{n}", rows, suite="s", model="m")
        store.put(f"{LANDINGS}{RUN}-old-{n}", json.dumps({"parts": [key]}).encode())
    assert PartIndex(store).load() is None  # no index: readers list
    assert len(visible_parts(store)["scores"]) == 3
    _land(store, 9)
    assert store.exists(f"{SNAPSHOTS}{0:012d}.parquet")
    view = PartIndex(store).load()
    assert view is not None and len(view.keys("scores")) == 4


class Unconditional(LocalStore):
    """A store whose endpoint refuses If-None-Match."""

    def create(self, key: str, data: bytes) -> bool:
        raise ConditionalWritesUnsupported("no conditional writes here")


def test_a_store_without_conditional_writes_keeps_no_index_and_is_listed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = Unconditional(tmp_path)
    for n in range(3):
        _land(store, n)
    assert store.exists(UNINDEXED) and "refuses conditional writes" in caplog.text
    assert PartIndex(store).load() is None
    assert len(visible_parts(store)["scores"]) == 3


def test_a_reader_that_lists_before_a_fold_lists_again(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    for n in range(SNAPSHOT + 2):
        _land(store, n)
    reader = PartIndex(store)
    listing = reader._listing()
    for n in range(SNAPSHOT + 2, 3 * SNAPSHOT):
        _land(store, n)  # the fold at 3 x SNAPSHOT retires the snapshot `listing` names
    assert listing is not None and listing.base == SNAPSHOT
    plan = listing.plan()
    assert plan is not None  # it was a full plan when listed...
    with pytest.raises(FileNotFoundError):
        reader._visible(plan)  # ...whose snapshot is gone
    view = reader.load()  # lists again
    assert view is not None and len(view.keys("scores")) == 3 * SNAPSHOT
