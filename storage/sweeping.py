"""Parts no reader sees, removed from `tables/`, so that any Parquet reader over a table's folder
(DuckDB's `read_parquet('tables/<table>/**/*.parquet')`, pyarrow's dataset, pandas, polars)
reads the rows the views read.

A part is hidden from the views when a compaction replaced it (`compaction` removes those once
its landing is published) or when no landing published it: a run killed between writing a
landing's parts and publishing them, a compaction that failed. Such a part is removed once
nothing can publish it any more: its run's compacted part is published in its folder, or its
run has ended (its end recorded, its process seen gone on this machine, or its heartbeat silent
for `GONE_AFTER_S`). A suite's items are never removed: any run may land them again, under the
same keys.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from roadeval.storage.heartbeats import run_liveness
from roadeval.storage.landing import LANDINGS, read_table
from roadeval.storage.liveness import writer_alive
from roadeval.storage.part_index import PartIndex
from roadeval.storage.store import Store
from roadeval.storage.visibility import (
    COMPACTED,
    compacted_name,
    part_name,
    run_of,
    visible_keys,
)

# A `running` run whose heartbeat has been silent this long lands nothing more (as the claims
# of a process silent that long are swept: `tasks.cache.claim_records.RETENTION_S`).
GONE_AFTER_S = 6 * 3600.0
RUNNING = "running"


def visible(store: Store, listed: Mapping[str, Sequence[str]]) -> set[str]:
    """The keys readers see of the tables `listed` (each table's parts, as listed): from the
    part index, or from the landings' markers on a store that keeps none."""
    view = PartIndex(store).load(list(listed))
    if view is not None:
        return {key for table in listed for key in view.keys(table)}
    landed = {key.removeprefix(LANDINGS) for key in store.list(LANDINGS)}
    return {key for keys in listed.values() for key in visible_keys(keys, landed)}


def _folder(key: str) -> str:
    return key.rsplit("/", 1)[0]


def ended_runs(store: Store, runs: Collection[str]) -> set[str]:
    """Of `runs`, those that will land nothing more: their latest event is not `running`, or
    it is and their process is gone: seen gone on this machine, or dead by the rule `runs`
    reads (`heartbeats.run_liveness`) and silent for `GONE_AFTER_S`. A run with no event is not
    known to have ended."""
    names = ["run_id", "seq", "status", "started_at", "heartbeat_s", "host", "pid"]
    events = read_table(store, "run_events").select(names)
    wanted = pa.array(sorted(runs), pa.string())
    latest: dict[str, dict[str, Any]] = {}
    for row in events.filter(pc.is_in(events.column("run_id"), wanted)).to_pylist():
        seen = latest.get(row["run_id"])
        if seen is None or row["seq"] > seen["seq"]:
            latest[row["run_id"]] = row
    now = datetime.now(UTC)
    ended: set[str] = set()
    for run_id, event in latest.items():
        if event["status"] != RUNNING or writer_alive(event["host"], event["pid"]) is False:
            ended.add(run_id)
            continue
        last, living = run_liveness(store, run_id, event["started_at"], event["heartbeat_s"], now)
        if not living and (now - last).total_seconds() > GONE_AFTER_S:
            ended.add(run_id)
    return ended


def sweep(store: Store, listed: Mapping[str, Sequence[str]]) -> list[str]:
    """Remove the hidden parts of `listed` (each table's parts, listed before this call) that
    nothing can publish any more; returns their keys."""
    seen = visible(store, listed)
    hidden = [
        (key, run)
        for keys in listed.values()
        for key in keys
        if key not in seen and (run := run_of(part_name(key))) is not None
    ]
    compacted = {
        (_folder(key), name.removesuffix(COMPACTED))
        for key in seen
        if (name := part_name(key)).endswith(COMPACTED)
    }
    marked = _Markers(store)
    hidden = [(key, run) for key, run in hidden if not marked.shows(key, run, compacted)]
    gone = [key for key, run in hidden if (_folder(key), run) in compacted]
    others = [(key, run) for key, run in hidden if (_folder(key), run) not in compacted]
    if others:
        ended = ended_runs(store, {run for _, run in others})
        # Seen again, after the runs' ends were read: a run that ended since the first look
        # published everything it ever will before its end was recorded.
        seen = visible(store, listed) if ended else seen
        gone += [key for key, run in others if run in ended and key not in seen]
    store.delete_many(gone)
    return sorted(gone)


class _Markers:
    """Whether a reader by the markers (one that lists a folder: a rerun reading its baseline)
    still sees a part the index hides: its landing's marker exists and no marked compaction of
    its run replaces it. Only a compaction whose marker was never written (its index entry
    was) does that; its parts stay until the markers agree."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.known: dict[str, bool] = {}

    def _exists(self, name: str) -> bool:
        if name not in self.known:
            self.known[name] = self.store.exists(f"{LANDINGS}{name}")
        return self.known[name]

    def shows(self, key: str, run: str, compacted: Collection[tuple[str, str]]) -> bool:
        if not self._exists(part_name(key)):
            return False
        return (_folder(key), run) not in compacted or not self._exists(compacted_name(run))
