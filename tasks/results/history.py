"""A panel's history: its finished runs in order, each suite x model's headline metrics with their
intervals per run, each run against the one before it (the paired `comparisons` it landed against
its baseline, or computed now where it landed none against that run), and drift: a model whose
headline moved beyond noise on unchanged items while its model string stayed the same, with what
its provider said served it before and after. Beyond noise for a drift flag is after Holm's
correction over the rows of one comparison (`multiplicity`), so a comparison of many models and
metrics raises a false flag at most 5% of the time, not at each row's 5%.

Read from corpus rows only (runs, headline metrics, comparisons): no item row of any run, so a
history of many large runs costs what their few thousand corpus rows cost.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import duckdb

from roadeval.storage.catalog import connect
from roadeval.storage.records import ComparisonRow
from roadeval.storage.store import Store
from roadeval.tasks.results.intervals import IntervalSettings
from roadeval.tasks.results.multiplicity import FAMILY_LEVEL, holm_adjusted
from roadeval.tasks.results.stored_compare import compare_stored

FINISHED = "finished"
SUITE_WIDE = "*"
NOT_RECORDED = "not recorded"


class HistoryError(ValueError):
    """A history that cannot be shown: a panel with no finished run in the store."""


@dataclass(frozen=True)
class HistoryRun:
    """One finished run of the panel: when, its models (label -> model string), its cost, and
    per model what its provider said served its answers (`served`)."""

    run_id: str
    started_at: datetime
    ended_at: datetime | None
    status: str
    models: Mapping[str, str]
    cost_usd: float
    served: Mapping[str, str]


@dataclass(frozen=True)
class Point:
    """A headline metric of one run, with its 95% interval, over `n` items."""

    run_id: str
    suite: str
    task: str
    model: str
    metric: str
    value: float
    ci_low: float | None
    ci_high: float | None
    n: int


@dataclass(frozen=True)
class Step:
    """One consecutive pair's comparison of a headline; `drift` when it moved beyond noise on
    unchanged items with the model string unchanged (its Holm-adjusted p-value, `p_adjusted`,
    at most 5% over the comparison's rows that could drift), then what served it before and
    after. `p_adjusted` is None for a row that could not drift (its model string changed)."""

    row: ComparisonRow
    drift: bool
    served_before: str = ""
    served_after: str = ""
    p_adjusted: float | None = None


@dataclass(frozen=True)
class History:
    panel: str
    runs: list[HistoryRun]
    points: list[Point]
    steps: list[Step]
    computed: list[tuple[str, str]] = field(default_factory=list)

    @property
    def drifts(self) -> list[Step]:
        return [step for step in self.steps if step.drift]


def _served(manifest: Mapping[str, Any]) -> dict[str, str]:
    """Per model, what its provider said served its answers this run (the manifest's `served`
    records, where the run kept them): 'served model / fingerprint' joined when several."""
    found: dict[str, list[str]] = {}
    for entry in manifest.get("served") or []:
        if entry.get("role", "answer") != "answer":
            continue
        named = entry.get("served_model") or "?"
        fingerprint = entry.get("system_fingerprint")
        found.setdefault(entry["model"], []).append(
            f"{named} / {fingerprint}" if fingerprint else str(named)
        )
    return {model: ", ".join(sorted(set(texts))) for model, texts in found.items()}


def labelled_models(specs: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """A manifest's model specs (as dumped) by label: `name`, else the model string."""
    return {str(m.get("name") or m.get("model")): str(m.get("model")) for m in specs}


def _runs(con: duckdb.DuckDBPyConnection, panel: str) -> list[HistoryRun]:
    rows = con.execute(
        "select run_id, started_at, ended_at, status, cost_usd, manifest_json from runs "
        "where panel = $panel and status = $finished order by started_at, run_id",
        {"panel": panel, "finished": FINISHED},
    ).fetchall()
    found = []
    for run_id, started, ended, status, cost, manifest_json in rows:
        try:
            manifest = json.loads(manifest_json) if manifest_json else {}
        except ValueError:
            manifest = {}
        models = labelled_models(manifest.get("models") or [])
        found.append(
            HistoryRun(run_id, started, ended, status, models, cost or 0.0, _served(manifest))
        )
    return found


def _points(con: duckdb.DuckDBPyConnection, ids: Sequence[str]) -> list[Point]:
    """The headline rows (those with an interval) of the runs, over all items."""
    rows = con.execute(
        "select run_id, suite, task, model, metric, value, ci_low, ci_high, n from metrics "
        "where list_contains($ids, run_id) and slice = '' and coalesce(variant, '') = '' "
        "and ci_low is not null",
        {"ids": list(ids)},
    ).fetchall()
    return [Point(*row) for row in rows]


def _landed_steps(
    con: duckdb.DuckDBPyConnection, ids: Sequence[str]
) -> dict[tuple[str, str], list[ComparisonRow]]:
    """The comparisons the runs landed, by (baseline run, run)."""
    result = con.execute(
        "select * exclude (variant) from comparisons "
        "where list_contains($ids, run_id) and coalesce(variant, '') = ''",
        {"ids": list(ids)},
    )
    columns = [d[0] for d in result.description or ()]
    found: dict[tuple[str, str], list[ComparisonRow]] = {}
    for values in result.fetchall():
        row = ComparisonRow(**dict(zip(columns, values, strict=True)))
        found.setdefault((row.baseline_run_id, row.run_id), []).append(row)
    return found


def panel_history(store: Store, panel: str, settings: IntervalSettings | None = None) -> History:
    """The panel's history (a HistoryError when it has no finished run). A consecutive pair
    whose later run landed no comparison against the earlier (its baseline was another run, or
    it predates comparisons) is compared now from the two runs' items (`compare_stored`)."""
    with closing(connect(store, tables=["run_events"])) as con:
        runs = _runs(con, panel)
    if not runs:
        raise HistoryError(
            f"panel {panel!r} has no finished run in the store {store.uri} "
            "(`roadeval runs` lists the runs and their panels)"
        )
    ids = [run.run_id for run in runs]
    with closing(connect(store, runs=ids, tables=["metrics", "comparisons"])) as con:
        points = _points(con, ids)
        landed = _landed_steps(con, ids)
    steps: list[Step] = []
    computed: list[tuple[str, str]] = []
    for before, after in itertools.pairwise(runs):
        rows = landed.get((before.run_id, after.run_id))
        # Rows landed before p-values were kept cannot be corrected for their many tests.
        if rows is None or any(row.p_value is None for row in rows):
            pairs = {(p.suite, p.model) for p in points if p.run_id == after.run_id}
            found = compare_stored(
                store, (before.run_id, after.run_id), pairs, None, settings or IntervalSettings()
            )
            rows = [row for compared in found.values() for row in compared.rows]
            computed.append((before.run_id, after.run_id))
        steps.extend(comparison_steps(rows, before, after))
    return History(panel, runs, points, steps, computed)


def comparison_steps(
    rows: Sequence[ComparisonRow], before: HistoryRun, after: HistoryRun
) -> list[Step]:
    """One comparison's rows as steps: the rows that could drift (model string unchanged,
    items compared, a p-value) are one family, each flagged when its Holm-adjusted p-value is
    at most 5% (and its interval leaves 0 out, as every move's does)."""

    def can_drift(row: ComparisonRow) -> bool:
        same = row.model in before.models and before.models[row.model] == after.models.get(
            row.model
        )
        return same and row.n > 0 and row.p_value is not None

    family = [row for row in rows if can_drift(row)]
    adjusted = dict(
        zip(map(id, family), holm_adjusted([row.p_value or 0.0 for row in family]), strict=True)
    )
    steps = []
    for row in rows:
        p = adjusted.get(id(row))
        steps.append(
            Step(
                row,
                p is not None and p <= FAMILY_LEVEL and row.significant,
                before.served.get(row.model, NOT_RECORDED),
                after.served.get(row.model, NOT_RECORDED),
                p,
            )
        )
    return steps


def shown_scopes(points: Sequence[Point]) -> set[tuple[str, str]]:
    """The (suite, task) rows a history shows: a suite's suite-wide rows where it has them,
    else its per-task rows (a suite whose headlines are all per task, as RoadBench's)."""
    wide = {p.suite for p in points if p.task == SUITE_WIDE}
    return {(p.suite, p.task) for p in points if p.suite not in wide or p.task == SUITE_WIDE}
