"""Distributions over a run's per-item scores, binned in DuckDB (a run's score rows may number
millions): a reliability diagram's bins, histograms of a metric's values, a judge's scores with
the items it left unscored, and TRIP's Pareto of errors. The items as released only (a blind
ablation's rows have their own comparison)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb

from roadeval.storage.records import TABLES


@dataclass(frozen=True)
class ReliabilityBin:
    """One model's items whose confidence falls in bin `index` of the ECE's bins."""

    model: str
    index: int
    lo: float
    hi: float
    count: int
    mean_confidence: float
    accuracy: float


def _bin_case(column: str, edges: Sequence[float]) -> str:
    """SQL giving the bin of `column`, the ECE's own rule: [e0, e1], then (e_i, e_i+1]; null
    outside [0, 1]. Literal edges, so a value on an edge falls where the ECE puts it."""
    whens = [f"when {column} >= {edges[0]!r} and {column} <= {edges[1]!r} then 0"]
    whens += [
        f"when {column} > {edges[i]!r} and {column} <= {edges[i + 1]!r} then {i}"
        for i in range(1, len(edges) - 1)
    ]
    return "case " + " ".join(whens) + " end"


def reliability(
    con: duckdb.DuckDBPyConnection, run_id: str, suite: str, metric: str = "correct"
) -> list[ReliabilityBin]:
    """Per model, the non-empty bins of the items' confidence (`details_json` 'confidence' of
    their `metric` rows) with the mean confidence and accuracy in each; none when no item of the
    suite had a confidence."""
    from roadeval.benchmarks.v2xqa.calibration import N_BINS, bin_edges

    edges = bin_edges(N_BINS)
    sql = f"""
    with rated as (
        select model, value,
               try_cast(json_extract(details_json, '$.confidence') as double) as confidence
        from scores
        where run_id = $run_id and suite = $suite and metric = $metric and status = 'scored'
          and coalesce(variant, '') = '' and details_json is not null
    ), binned as (
        select model, value, confidence, {_bin_case("confidence", edges)} as bin
        from rated where confidence is not null
    )
    select model, bin, count(*), avg(confidence), avg(value)
    from binned where bin is not null group by all order by model, bin
    """
    rows = con.execute(sql, {"run_id": run_id, "suite": suite, "metric": metric}).fetchall()
    return [
        ReliabilityBin(str(m), int(b), edges[int(b)], edges[int(b) + 1], int(n), float(c), float(a))
        for m, b, n, c, a in rows
    ]


@dataclass(frozen=True)
class Histogram:
    """One metric's values over a run's items, per model, in `bins` equal bins from `lo` to
    `hi` (shared by every model, so their bars line up); `counts[model]` has one count per
    bin. `unscored` counts the items the metric could not be scored for, per model."""

    suite: str
    metric: str
    lo: float
    hi: float
    counts: dict[str, list[int]]
    unscored: dict[str, int]

    @property
    def bins(self) -> int:
        return len(next(iter(self.counts.values()), []))


def histogram(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    suite: str,
    metric: str,
    bins: int = 20,
    whole: tuple[int, int] | None = None,
) -> Histogram | None:
    """The metric's scored values in `bins` equal bins over their range, or, for a metric of
    whole numbers (a judge's 0-10), one bin per number over `whole` widened to the values seen;
    None when the run has no row of the metric."""
    if whole is None:
        bin_of = (
            "least(cast(floor((v.value - r.lo) / nullif(r.hi - r.lo, 0) * $bins) as integer), "
            "$bins - 1)"
        )
        span = "select min(value) as lo, max(value) as hi"
    else:
        bin_of = "cast(round(v.value) - r.lo as integer)"
        span = (
            f"select least({whole[0]}, floor(min(value))) as lo, "
            f"greatest({whole[1]}, ceil(max(value))) as hi"
        )
    sql = f"""
    with v as (
        select model, status, value from scores
        where run_id = $run_id and suite = $suite and metric = $metric
          and coalesce(variant, '') = ''
    ), r as ({span} from v where status = 'scored')
    select model, case when v.status = 'scored' then {bin_of} end as bin,
           count(*), any_value(r.lo), any_value(r.hi)
    from v, r group by all
    """
    params: dict[str, str | int] = {"run_id": run_id, "suite": suite, "metric": metric}
    if whole is None:
        params["bins"] = bins
    rows = con.execute(sql, params).fetchall()
    if not rows:
        return None
    lo, hi = rows[0][3], rows[0][4]
    if lo is None:
        lo = hi = 0.0  # nothing scored: every row is unscored
    if whole is not None:
        bins = int(hi - lo) + 1
    counts: dict[str, list[int]] = {}
    unscored: dict[str, int] = {}
    for model, index, n, _, _ in rows:
        per_model = counts.setdefault(str(model), [0] * bins)
        unscored.setdefault(str(model), 0)
        if index is None and lo == hi and whole is None:
            index = 0  # every value the same: one full bin
        if index is None:
            unscored[str(model)] += int(n)
        else:
            per_model[int(index)] += int(n)
    return Histogram(suite, metric, float(lo), float(hi), counts, unscored)


@dataclass(frozen=True)
class ParetoBar:
    """One category's errors in a Pareto chart of one model and group (TRIP: a role)."""

    model: str
    group: str
    category: str
    rank: int
    errors: int
    cumulative_share: float


def pareto(con: duckdb.DuckDBPyConnection, run_id: str, top: int) -> list[ParetoBar]:
    """TRIP's `pareto` rows of the run, the `top` categories of each model and role; none when
    the table is not there (TRIP not installed)."""
    if "pareto" not in TABLES:
        return []
    rows = con.execute(
        "select model, role, knowledge_point, rank, errors, cumulative_share from pareto "
        "where run_id = $run_id and rank <= $top order by model, role, rank",
        {"run_id": run_id, "top": top},
    ).fetchall()
    return [
        ParetoBar(str(m), str(r), str(k), int(n), int(e), float(c)) for m, r, k, n, e, c in rows
    ]
