"""What a rerun landed against its baseline run (`changes`, `score_changes`, `metric_deltas`),
counted in DuckDB: items per suite and kind of change, the items that changed by id (the first
`CHANGED_SHOWN`), score changes and flipped verdicts per suite x model, and the metrics that
moved, counted as `roadeval changes` counts them (`deltas.moved_metrics`)."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from roadeval.storage.records import MetricDeltaRow
from roadeval.tasks.rerun.changes import CHANGED_SHOWN
from roadeval.tasks.rerun.deltas import moved_metrics, one_task_suites

# The kinds of item change, as `roadeval changes` names them (kind, and what changed).
KINDS = ("added", "removed", "changed:prompt", "changed:reference", "unchanged")
# Moved metrics the report lists (the largest moves); the count of all is given beside.
MOVED_SHOWN = 200


@dataclass(frozen=True)
class ScoreMoves:
    """One suite x model (x variant): item metrics whose score changed, verdicts that flipped
    (1 to 0: `lost`, 0 to 1: `gained`), and the items they are on."""

    suite: str
    model: str
    variant: str
    changes: int
    flipped: int
    lost: int
    gained: int
    items: int


@dataclass(frozen=True)
class ChangedItem:
    """An item the rerun added, removed or changed (and in what)."""

    suite: str
    item_id: str
    kind: str
    what: str | None
    fields: str | None


@dataclass(frozen=True)
class Changes:
    """Everything the report says about a rerun; empty when the run had no baseline."""

    baseline_run_id: str | None
    items: dict[str, dict[str, int]]
    scores: list[ScoreMoves]
    moved: list[MetricDeltaRow]
    moved_total: int
    changed: list[ChangedItem]
    changed_total: int


def changes(con: duckdb.DuckDBPyConnection, run_id: str, baseline: str | None) -> Changes:
    params = {"run_id": run_id}
    items: dict[str, dict[str, int]] = {}
    for suite, kind, n in con.execute(
        "select suite, kind || coalesce(':' || what, '') as kind, count(*) from changes "
        "where run_id = $run_id group by all order by all",
        params,
    ).fetchall():
        items.setdefault(str(suite), dict.fromkeys(KINDS, 0))[str(kind)] = int(n)
    scores = [
        ScoreMoves(str(s), str(m), str(v), *map(int, numbers))
        for s, m, v, *numbers in con.execute(
            "select suite, model, coalesce(variant, '') as variant, count(*), "
            "count(*) filter (where flipped), "
            "count(*) filter (where flipped and new_value < old_value), "
            "count(*) filter (where flipped and new_value > old_value), "
            "count(distinct item_id) from score_changes where run_id = $run_id "
            "group by all order by all",
            params,
        ).fetchall()
    ]
    changed_sql = "from changes where run_id = $run_id and kind <> 'unchanged'"
    changed_row = con.execute(f"select count(*) {changed_sql}", params).fetchone()
    changed = [
        ChangedItem(*row)
        for row in con.execute(
            f"select suite, item_id, kind, what, fields {changed_sql} "
            f"order by suite, kind, what, item_id limit {CHANGED_SHOWN}",
            params,
        ).fetchall()
    ]
    # Every moved row, few beside the score rows; which suites have one task, from all rows.
    keys = con.execute(
        "select distinct suite, task from metric_deltas where run_id = $run_id", params
    ).fetchall()
    result = con.execute(
        "select * exclude (variant), coalesce(variant, '') as variant from metric_deltas "
        "where run_id = $run_id and (delta is null or delta <> 0)",
        params,
    )
    names = [d[0] for d in result.description]
    rows = [MetricDeltaRow(**dict(zip(names, row, strict=True))) for row in result.fetchall()]
    moved = moved_metrics(rows, one_task_suites((str(s), str(t)) for s, t in keys))
    return Changes(
        baseline,
        items,
        scores,
        moved[:MOVED_SHOWN],
        len(moved),
        changed,
        int(changed_row[0]) if changed_row else 0,
    )
