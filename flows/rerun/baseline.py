"""A run's baseline: the finished run it is compared with and reuses (the last of its panel,
or the one `--against` names), and what the plan stage may take from it.

Everything is read in bulk from what the baseline landed: its `run_events` row (with its
manifest), then per suite x model its responses, parses and scores parts, each read once.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from roadeval.flows.panel.file import Panel
from roadeval.storage.heartbeats import run_liveness
from roadeval.storage.landing import read_table
from roadeval.storage.records import RunStatus
from roadeval.storage.store import Store
from roadeval.tasks.rerun.answers import CopyFreshness
from roadeval.tasks.results.manifest import BaselineRecord, RunManifest, SuiteRecord

if TYPE_CHECKING:
    from roadeval.flows.stages.plan import CopyCandidates
    from roadeval.storage.records import ChangeRow
    from roadeval.tasks.rerun.answers import BaselineAnswers, ShardBaseline

FINISHED = RunStatus.FINISHED


class BaselineError(ValueError):
    """A baseline that cannot be one: an unknown run, another panel's, or one not finished."""


@dataclass(frozen=True)
class BaselineRun:
    """The finished run a run is compared with, and why it was chosen."""

    run_id: str
    chosen_by: str
    manifest: RunManifest

    def suite(self, name: str) -> SuiteRecord | None:
        return next((s for s in self.manifest.suites if s.name == name), None)

    def record(
        self, rescored: Iterable[str], changes: Mapping[str, dict[str, int]]
    ) -> BaselineRecord:
        return BaselineRecord(
            run_id=self.run_id,
            chosen_by=self.chosen_by,
            started_at=self.manifest.started_at,
            code_version=self.manifest.code_version,
            rescored_suites=sorted(rescored),
            changes=dict(changes),
        )


def latest_events(store: Store) -> dict[str, dict[str, Any]]:
    """Each run's latest event (status, panel, start, heartbeat period, manifest), by run id."""
    table = read_table(store, "run_events").select(
        ["run_id", "seq", "status", "panel", "started_at", "heartbeat_s", "manifest_json"]
    )
    latest: dict[str, dict[str, Any]] = {}
    for row in table.to_pylist():
        seen = latest.get(row["run_id"])
        if seen is None or row["seq"] > seen["seq"]:
            latest[row["run_id"]] = row
    return latest


def _seen_status(store: Store, event: dict[str, Any]) -> str:
    """What a run's latest event says it is, as `runs` reads it: a `running` run whose
    heartbeat stopped died."""
    if event["status"] == RunStatus.RUNNING:
        last, living = run_liveness(
            store, event["run_id"], event["started_at"], event["heartbeat_s"]
        )
        if not living:
            return f"died (its last heartbeat was at {last:%Y-%m-%d %H:%M:%S %Z})"
    return f"is {event['status']}"


def find_baseline(store: Store, panel: Panel, against: str | None) -> BaselineRun | None:
    """The run given by `against` (it must exist, be of this panel and have finished), else
    the last finished run of the panel's name; None when it has none."""
    latest = latest_events(store)
    if against is not None:
        event = latest.get(against)
        if event is None:
            raise BaselineError(f"--against {against}: no run of that id in the store {store.uri}")
        if event["panel"] != panel.name:
            raise BaselineError(
                f"--against {against}: that run is of panel {event['panel']!r}, not "
                f"{panel.name!r}; a baseline must be a run of the same panel"
            )
        if event["status"] != FINISHED:
            raise BaselineError(
                f"--against {against}: that run {_seen_status(store, event)}, not finished; a "
                "baseline must be a finished run (resume it first: run its panel again)"
            )
        return BaselineRun(against, "--against", RunManifest.from_json(event["manifest_json"]))
    finished = [
        event
        for event in latest.values()
        if event["panel"] == panel.name and event["status"] == FINISHED
    ]
    if not finished:
        return None
    last = max(finished, key=lambda event: (event["started_at"], event["run_id"]))
    return BaselineRun(
        last["run_id"],
        f"the last finished run of panel {panel.name!r}",
        RunManifest.from_json(last["manifest_json"]),
    )


@dataclass
class BaselineReader:
    """The baseline's answers per suite x model, each read once (the first shard of the pair
    to be planned reads them; the others wait and share). A suite's scores are copied only
    where its scoring key is the baseline's and the run is no rescore."""

    store: Store
    baseline: BaselineRun
    copy_suites: frozenset[str]
    # How old its answers and verdicts may be to be reused (default: any age).
    freshness: CopyFreshness = field(default_factory=CopyFreshness)
    _read: dict[tuple[str, str], BaselineAnswers] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _pair_locks: dict[tuple[str, str], threading.Lock] = field(default_factory=dict)
    _index: dict[str, list[str]] | None = None
    _index_loaded: bool = False

    @property
    def parts_read(self) -> int:
        return sum(answers.parts_read for answers in self._read.values())

    def prefetch(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Read the baseline's rows of these suite x model pairs now, a few at once (each is
        a few store requests per baseline shard: on S3, latency, not work)."""
        wanted = [pair for pair in dict.fromkeys(pairs) if self.baseline.suite(pair[0])]
        with ThreadPoolExecutor(max_workers=min(8, len(wanted) or 1)) as pool:
            list(pool.map(lambda pair: self.for_shard(*pair), wanted))

    def candidates(self, changes: Mapping[str, Sequence[ChangeRow]]) -> CopyCandidates:
        """Per suite x model x sample x variant, the items whose baseline outcome a plan may
        copy: the item unchanged, scored by the same rules, and scored by the baseline shown
        the same way (one its scorer raised on has no outcome: it is scored again); the plan
        still checks every request key."""
        unchanged = {
            suite: frozenset(row.item_id for row in rows if row.kind == "unchanged")
            for suite, rows in changes.items()
        }

        def copied(suite: str, model: str, sample: int, variant: str) -> frozenset[str]:
            if suite not in self.copy_suites:
                return frozenset()
            taken = self.for_shard(suite, model)
            if taken is None:
                return frozenset()
            same = unchanged.get(suite, frozenset())
            return frozenset(
                item_id
                for (item_id, of, shown), outcome in taken.answers.outcomes.items()
                if of == sample
                and shown == variant
                and item_id in same
                and self.freshness.copyable(model, outcome)
            )

        return copied

    def _indexed(self) -> dict[str, list[str]] | None:
        """The baseline's parts from the store's part index, loaded once for every pair."""
        from roadeval.tasks.rerun.answers import indexed_parts

        with self._lock:
            if not self._index_loaded:
                self._index = indexed_parts(self.store, self.baseline.run_id)
                self._index_loaded = True
            return self._index

    def for_shard(self, suite: str, model: str) -> ShardBaseline | None:
        from roadeval.tasks.rerun.answers import BaselineAnswers, ShardBaseline

        if self.baseline.suite(suite) is None:
            return None
        with self._lock:
            pair_lock = self._pair_locks.setdefault((suite, model), threading.Lock())
        with pair_lock:
            answers = self._read.get((suite, model))
            if answers is None:
                run_id = self.baseline.run_id
                indexed = self._indexed()
                answers = BaselineAnswers.read(self.store, run_id, suite, model, indexed)
                self._read[(suite, model)] = answers
        return ShardBaseline(
            answers,
            copy_scores=suite in self.copy_suites,
            verdicts_since=self.freshness.verdicts,
        )
