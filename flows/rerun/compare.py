"""`roadeval compare A B`: what `diff` shows of two runs of a panel (items, score changes, the
metrics that moved: `rerun.diff`), with each suite x model's headline metrics paired over the
items both scored with unchanged inputs (`tasks.results.stored_compare`), as tables or JSON."""

from __future__ import annotations

from contextlib import closing
from dataclasses import asdict, dataclass
from typing import Any

from roadeval.flows.rerun.diff import (
    RunDiff,
    between,
    diff_rules,
    item_counts,
    moved_metrics,
    score_lines,
)
from roadeval.storage.catalog import connect
from roadeval.storage.store import Store
from roadeval.tasks.rerun.changes import ChangeKind
from roadeval.tasks.results.compare_text import verdict
from roadeval.tasks.results.formats import SuiteRules
from roadeval.tasks.results.intervals import LEVEL, IntervalSettings
from roadeval.tasks.results.manifest import RunManifest
from roadeval.tasks.results.run_compare import ModelComparison
from roadeval.tasks.results.stored_compare import compare_stored


@dataclass(frozen=True)
class Compared:
    """Run `diff.run_b` against `diff.run_a`: the diff, and per suite x model the paired
    headline rows with the items that regressed and improved."""

    diff: RunDiff
    models: dict[tuple[str, str], ModelComparison]

    @property
    def rules(self) -> SuiteRules:
        return SuiteRules(
            {suite for suite, _ in self.models} | {r.suite for r in self.diff.changes}
        )


def settings_of(store: Store, run_id: str) -> IntervalSettings:
    """The resamples and seed the run drew its own intervals with (the defaults for a run
    that recorded none)."""
    with closing(connect(store, runs=[run_id], tables=["run_events"])) as con:
        row = con.execute(
            "select manifest_json from runs where run_id = $run", {"run": run_id}
        ).fetchone()
    try:
        record = RunManifest.from_json(row[0]).intervals if row and row[0] else None
    except ValueError:
        record = None
    if record is None:
        return IntervalSettings()
    return IntervalSettings(resamples=record.resamples, seed=record.seed)


def compared(store: Store, run_a: str, run_b: str, diff: RunDiff | None = None) -> Compared:
    """Run `run_b` against `run_a` (a DiffError for an unknown run or two panels); `diff`,
    when it was read already (what a run landed against its baseline)."""
    diff = diff if diff is not None else between(store, run_a, run_b)
    unchanged: dict[str, set[str]] = {}
    for row in diff.changes:
        ids = unchanged.setdefault(row.suite, set())
        if row.kind == ChangeKind.UNCHANGED:
            ids.add(row.item_id)
    pairs = {(row.suite, row.model) for row in diff.metric_deltas if not row.variant}
    models = compare_stored(store, (run_a, run_b), pairs, unchanged, settings_of(store, run_b))
    return Compared(diff, models)


def as_json(found: Compared) -> dict[str, Any]:
    """Everything `compare` prints, as one JSON object."""
    rules = found.rules
    diff = found.diff
    return {
        "run_a": diff.run_a,
        "run_b": diff.run_b,
        "panel": diff.panel,
        "level": LEVEL,
        "headlines": [
            {**asdict(row), "verdict": verdict(row, rules)}
            for (suite, model), model_rows in sorted(found.models.items())
            for row in model_rows.rows
        ],
        "regressed": {
            f"{suite} x {model}": m.regressed for (suite, model), m in sorted(found.models.items())
        },
        "improved": {
            f"{suite} x {model}": m.improved for (suite, model), m in sorted(found.models.items())
        },
        "not_compared": {
            f"{suite} x {model}": m.problem
            for (suite, model), m in sorted(found.models.items())
            if m.problem
        },
        "items": item_counts(diff),
        "scores": [asdict(line) for line in score_lines(diff)],
        "metrics_moved": [
            {**asdict(row), "verdict": verdict_of_delta(row.suite, row.metric, row.delta, rules)}
            for row in moved_metrics(diff)
        ],
    }


def verdict_of_delta(suite: str, metric: str, delta: float | None, rules: SuiteRules) -> str:
    if delta is None:
        return "absent on one side"
    return rules.metric(suite, metric).verdict(delta).value


__all__ = ["Compared", "as_json", "compared", "diff_rules"]
