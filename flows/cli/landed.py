"""What a run that died landed, counted as a run counts itself (`tasks.shard.counts`): a died
run's only event is its start's, which counts nothing but its planned items, so `roadeval runs`
counts its scored items, errors, calls and cost from the rows its shards landed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb

from roadeval.storage.catalog import read_views
from roadeval.storage.records import EVERY_METRIC
from roadeval.storage.store import Store

# Per item outcome (item, sample, variant of a suite x model): whether its last try failed with
# a model error (a stop's `interrupted` is no error: the item is unfinished), its first tries
# sent (calls) and answers reused (cached), and whether its score rows are its scorer's error.
_LANDED = """
with answers as (
    select run_id, suite, model, coalesce(variant, '') as variant, item_id,
           coalesce(sample, 1) as sample,
           arg_max(coalesce(error_kind <> 'interrupted', false), attempt * 1000000 + try_number)
               as failed,
           count(*) filter (where not cached and try_number = 1) as calls,
           count(*) filter (where cached) as cached
    from responses where role = 'answer' group by all
), scored as (
    select run_id, suite, model, coalesce(variant, '') as variant, item_id,
           coalesce(sample, 1) as sample, bool_or(metric = $every) as scorer_error
    from scores group by all
), outcomes as (
    select run_id, count(*) filter (where not scorer_error) as n_scored,
           count(*) filter (where scorer_error) as n_scorer_errors,
           count(*) filter (where scorer_error is null and failed) as n_errors,
           coalesce(sum(calls), 0) as n_calls, coalesce(sum(cached), 0) as n_cached
    from answers full join scored using (run_id, suite, model, variant, item_id, sample)
    group by run_id
), paid as (
    select run_id, sum(cost_usd) as cost_usd,
           count(*) filter (where not cached and try_number > 0 and cost_usd is null)
               as n_unknown_cost
    from responses group by run_id
)
select outcomes.*, coalesce(paid.cost_usd, 0) as cost_usd,
       coalesce(paid.n_unknown_cost, 0) as n_unknown_cost
from outcomes left join paid using (run_id)
"""

# The counts `landed_counts` gives, as the `runs` columns they stand for.
LANDED_COLUMNS = (
    "n_scored",
    "n_scorer_errors",
    "n_errors",
    "n_calls",
    "n_cached",
    "cost_usd",
    "n_unknown_cost",
)


def landed_counts(store: Store, run_ids: Sequence[str]) -> dict[str, dict[str, float]]:
    """Per run named, its `LANDED_COLUMNS` over the rows it landed (a run that landed nothing:
    none). Reads those runs' parts alone: one read per part on S3."""

    def rows(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
        result = con.execute(_LANDED, {"every": EVERY_METRIC})
        names = [d[0] for d in result.description or ()]
        return [dict(zip(names, row, strict=True)) for row in result.fetchall()]

    found = read_views(store, rows, runs=run_ids, tables=["responses", "scores"])
    return {str(row["run_id"]): {name: row[name] for name in LANDED_COLUMNS} for row in found}
