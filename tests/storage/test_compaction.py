"""Compaction: a finished run's parts folded into one per folder; readers see one or the other,
never both, whatever the crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from roadeval.storage.catalog import query
from roadeval.storage.compaction import FOLD_FROM, compact_run
from roadeval.storage.landing import Part, compacted_name, land, read_table, visible_parts
from roadeval.storage.store import LocalStore

from support.crashing_store import Crash, CrashingStore
from support.rows import record

RUN, OTHER = "20261202T000000Z-aaaaaaaa", "20261202T000001Z-bbbbbbbb"


def _rows(table: str, run_id: str, start: int, n: int, model: str = "m") -> list[object]:
    return [
        record(table, run_id=run_id, suite="s", item_id=f"{start + i}", model=model)
        for i in range(n)
    ]


def _shards(store: LocalStore, run_id: str, shards: int, model: str = "m") -> None:
    for k in range(shards):
        land(
            store,
            f"{run_id}-s-{model}-{k:03d}",
            [
                Part(
                    "responses",
                    _rows("responses", run_id, 10 * k, 3, model),
                    suite="s",
                    model=model,
                ),
                Part("scores", _rows("scores", run_id, 10 * k, 2, model), suite="s", model=model),
            ],
        )


def _items(store: LocalStore, table: str) -> list[tuple[str, str, str]]:
    _, rows = query(store, f"select run_id, model, item_id from {table} order by all")
    return rows


def test_a_compacted_run_reads_the_same_rows_from_one_part_per_folder(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    _shards(store, RUN, FOLD_FROM + 1)
    # Too few parts to be worth rewriting: read as they are.
    _shards(store, RUN, FOLD_FROM - 1, model="n")
    _shards(store, OTHER, FOLD_FROM)
    land(store, f"{RUN}-event-001", [Part("run_events", [record("run_events", run_id=RUN)])])
    before = {t: _items(store, t) for t in ("responses", "scores")}
    in_order = read_table(store, "responses").to_pylist()

    done = compact_run(store, RUN)

    # responses and scores for m; not n's few parts, nothing of the other run nor run_events.
    assert len(done.written) == 2 and len(done.replaced) == 2 * (FOLD_FROM + 1)
    assert all(compacted_name(RUN) in key for key in done.written)
    visible = visible_parts(store)
    run_parts = [k for k in visible["responses"] if f"/{RUN}-" in k and "model=m/" in k]
    assert run_parts == sorted(k for k in done.written if k.startswith("tables/responses/"))
    small = [k for k in visible["responses"] if f"/{RUN}-" in k and "model=n/" in k]
    assert len(small) == FOLD_FROM - 1 and not any(compacted_name(RUN) in k for k in small)
    assert len([k for k in visible["responses"] if f"/{OTHER}-" in k]) == FOLD_FROM
    assert len(visible["run_events"]) == 1
    assert {t: _items(store, t) for t in before} == before
    # The rows of a folder keep their order: parts by name, rows as landed.
    after = read_table(store, "responses").to_pylist()
    assert sorted(map(str, after)) == sorted(map(str, in_order))
    ours = [r["item_id"] for r in after if r["run_id"] == RUN and r["model"] == "m"]
    assert ours == [r["item_id"] for r in in_order if r["run_id"] == RUN and r["model"] == "m"]


def test_a_part_landed_after_the_compaction_outside_it_stays_visible(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    _shards(store, RUN, FOLD_FROM)
    land(store, f"{RUN}-event-001", [Part("run_events", [record("run_events", run_id=RUN)])])
    compact_run(store, RUN)
    land(store, f"{RUN}-event-002", [Part("run_events", [record("run_events", run_id=RUN)])])
    assert query(store, "select count(*) from run_events")[1] == [(2,)]


def test_compacting_twice_changes_nothing(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    _shards(store, RUN, FOLD_FROM)
    first = compact_run(store, RUN)
    before = _items(store, "responses")
    again = compact_run(store, RUN)
    assert first.written and not again.written and not again.replaced
    assert _items(store, "responses") == before


# Compaction writes two parts (responses, scores), its index entry, then its marker: it is
# published from its index entry on (the 4th write fails after it).
@pytest.mark.parametrize("crash_on", [1, 2, 3, 4])
def test_a_crash_mid_compaction_shows_the_small_parts_or_the_compacted_ones(
    tmp_path: Path, crash_on: int
) -> None:
    store = LocalStore(tmp_path)
    _shards(store, RUN, FOLD_FROM)
    before = {t: _items(store, t) for t in ("responses", "scores")}
    with pytest.raises(Crash):
        compact_run(CrashingStore(tmp_path, crash_on), RUN)
    assert {t: _items(store, t) for t in before} == before
    responses = visible_parts(store)["responses"]
    compacted = [k for k in responses if compacted_name(RUN) in k]
    assert len(responses) == (1 if crash_on == 4 else FOLD_FROM)
    assert len(compacted) == (crash_on == 4)
    # Compacting again (the next reader's or the run's resume) writes over the unpublished parts.
    compact_run(store, RUN)
    assert any(compacted_name(RUN) in k for k in visible_parts(store)["responses"])
    assert {t: _items(store, t) for t in before} == before


def test_unlanded_parts_asked_for_are_added_to_the_compacted_view(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    _shards(store, RUN, FOLD_FROM)
    compact_run(store, RUN)
    # A part of the run that no landing published (a crashed landing).
    from roadeval.storage.tables import write_part

    write_part(
        store, "responses", f"{RUN}-s-m-999", _rows("responses", RUN, 999, 1), suite="s", model="m"
    )
    _, landed = query(store, "select count(*) from responses")
    _, every = query(store, "select count(*) from responses", include_unlanded=True)
    assert landed == [(3 * FOLD_FROM,)] and every == [(3 * FOLD_FROM + 1,)]
