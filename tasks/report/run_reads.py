"""What the report and `roadeval show` read of one run, each an aggregate query over the store's
DuckDB views: the run's record and manifest, its metrics and paired differences, per suite x model
x variant the items whose answers were not read or ended in errors, and its cost per model, suite
and role. Nothing pulls per-item rows into Python."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb

from roadeval.storage.records import MetricPairRow, MetricRow
from roadeval.tasks.results.leaderboard import ItemHealth
from roadeval.tasks.results.manifest import RunManifest


class ReportError(ValueError):
    """A run that cannot be reported: not in the store, or with nothing scored."""


@dataclass(frozen=True)
class RunRecord:
    """The run's latest `runs` row and its manifest (None when the row's manifest does not read:
    a run recorded by other code)."""

    run_id: str
    status: str
    panel: str
    started_at: datetime
    ended_at: datetime | None
    code_version: str
    baseline_run_id: str | None
    message: str | None
    manifest: RunManifest | None


@dataclass(frozen=True)
class CostRow:
    """One model x suite x role of a run: HTTP requests sent, answers reused, tokens, USD this
    run (a floor when `unknown` requests have no known cost), and the sent requests that failed
    (calls skipped unsent are errors of their items, in the health table)."""

    model: str
    suite: str
    role: str
    requests: int
    reused: int
    tokens_in: int
    tokens_out: int
    usd: float
    unknown: int
    failed: int


def _rows(con: duckdb.DuckDBPyConnection, sql: str, **params: Any) -> list[dict[str, Any]]:
    result = con.execute(sql, params)
    names = [d[0] for d in result.description]
    return [dict(zip(names, row, strict=True)) for row in result.fetchall()]


def latest_run(con: duckdb.DuckDBPyConnection) -> str | None:
    """The run started last in the store (whatever its status), or None for a store with none."""
    row = con.execute("select run_id from runs order by started_at desc, run_id desc").fetchone()
    return None if row is None else str(row[0])


def run_record(con: duckdb.DuckDBPyConnection, run_id: str) -> RunRecord:
    found = _rows(
        con,
        "select run_id, status, panel, started_at, ended_at, code_version, baseline_run_id, "
        "message, manifest_json from runs where run_id = $run_id",
        run_id=run_id,
    )
    if not found:
        raise ReportError(f"no run {run_id!r} in the store (`roadeval runs` lists them)")
    row = found[0]
    try:
        manifest = RunManifest.from_json(row.pop("manifest_json") or "")
    except ValueError:
        manifest = None
    return RunRecord(**row, manifest=manifest)


def scored_count(con: duckdb.DuckDBPyConnection, run_id: str) -> int:
    """Score rows of the run with a value (0: nothing to report)."""
    row = con.execute(
        "select count(*) from scores where run_id = $run_id and status = 'scored'",
        {"run_id": run_id},
    ).fetchone()
    return int(row[0]) if row else 0


def require_outcomes(
    con: duckdb.DuckDBPyConnection,
    run: RunRecord,
    nothing_to: str,
    health: dict[tuple[str, str, str], ItemHealth] | None = None,
) -> None:
    """A ReportError for a run with no item outcome: nothing scored, no answer failed or went
    unread (a dry run, a run stopped before it scored). Reports, `show` and the run diffs all
    refuse such a run with this one line; a run whose every item failed has outcomes (its
    health says why). `health`: the run's, when already read."""
    if health is None:
        health = item_health(con, run.run_id)
    if health or scored_count(con, run.run_id):
        return
    raise ReportError(
        f"run {run.run_id} has no scores ({run.status}): nothing to {nothing_to}"
        + (f"; {run.message}" if run.message else "")
    )


def metrics(con: duckdb.DuckDBPyConnection, run_id: str) -> list[MetricRow]:
    rows = _rows(
        con,
        "select * exclude (variant), coalesce(variant, '') as variant from metrics "
        "where run_id = $run_id order by suite, task, model, slice, slice_value, metric",
        run_id=run_id,
    )
    return [MetricRow(**row) for row in rows]


def metric_pairs(con: duckdb.DuckDBPyConnection, run_id: str) -> list[MetricPairRow]:
    rows = _rows(
        con,
        "select * exclude (variant), coalesce(variant, '') as variant from metric_pairs "
        "where run_id = $run_id order by suite, task, metric, model_a, model_b",
        run_id=run_id,
    )
    return [MetricPairRow(**row) for row in rows]


# Per item (and sample), the answer's last try and its final parse: an item whose last try
# failed ended in a model error (never scored as a wrong answer); else its final parse says
# whether the answer was read, read by a fallback (abnormal), or not read (unparsed).
_HEALTH = """
with answers as (
    select suite, model, coalesce(variant, '') as variant, item_id, sample,
           arg_max(error_kind is not null, attempt * 1000000 + try_number) as failed
    from responses where run_id = $run_id and role = 'answer' group by all
), parsed as (
    select suite, model, coalesce(variant, '') as variant, item_id, sample,
           arg_max(status, attempt) as status
    from parses where run_id = $run_id group by all
)
select suite, model, variant,
       count(*) filter (where not coalesce(failed, false) and status = 'unparsed') as unparsed,
       count(*) filter (where not coalesce(failed, false) and status = 'abnormal') as abnormal,
       count(*) filter (where failed) as errors
from answers full join parsed using (suite, model, variant, item_id, sample)
group by all
"""


def item_health(
    con: duckdb.DuckDBPyConnection, run_id: str
) -> dict[tuple[str, str, str], ItemHealth]:
    """(suite, model, variant) -> its items not read, read by a fallback, and ended in errors."""
    return {
        (row["suite"], row["model"], row["variant"]): ItemHealth(
            int(row["unparsed"]), int(row["abnormal"]), int(row["errors"])
        )
        for row in _rows(con, _HEALTH, run_id=run_id)
    }


_COSTS = """
select model, suite, role,
       count(*) filter (where not cached and try_number > 0) as requests,
       count(*) filter (where cached) as reused,
       coalesce(sum(tokens_in) filter (where not cached), 0) as tokens_in,
       coalesce(sum(tokens_out) filter (where not cached), 0) as tokens_out,
       coalesce(sum(cost_usd), 0) as usd,
       count(*) filter (where not cached and try_number > 0 and cost_usd is null) as unknown,
       count(*) filter (where not cached and try_number > 0 and error_kind is not null) as failed
from responses where run_id = $run_id
group by all order by model, suite, role
"""


def costs(con: duckdb.DuckDBPyConnection, run_id: str) -> list[CostRow]:
    return [
        CostRow(
            str(r["model"]),
            str(r["suite"]),
            str(r["role"]),
            int(r["requests"]),
            int(r["reused"]),
            int(r["tokens_in"]),
            int(r["tokens_out"]),
            float(r["usd"]),
            int(r["unknown"]),
            int(r["failed"]),
        )
        for r in _rows(con, _COSTS, run_id=run_id)
    ]
