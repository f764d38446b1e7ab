"""The DuckDB catalogue: one view per table over the store's landed Parquet parts, local or S3.

Only landed parts are visible (see `landing`), so a crash never makes a query count half a shard.
Queries are read-only: a statement that would write a file or change anything is refused.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.dataset as ds

from roadeval.storage.heartbeats import MISSED_BEATS, read_heartbeat
from roadeval.storage.landing import visible_parts
from roadeval.storage.store import Store
from roadeval.storage.tables import SCHEMAS

# Derived views, defined over the base tables so they never disagree with them.
DERIVED_VIEWS: dict[str, str] = {
    # Every request sent and every answer reused, with what it cost this run (0 when reused).
    "costs": (
        "select run_id, suite, model, model_string, api_base, role, request_key, attempt, "
        "try_number, tokens_in, tokens_out, cost_usd, original_cost_usd, may_be_billed, cached, "
        "origin_run_id, error_kind, created_at from responses"
    ),
    # The ledger's totals per run, model, suite and role: HTTP requests sent (retries
    # included; a call skipped as unreachable was not sent), answers reused, tokens, USD this
    # run, and the sent requests whose cost is not known: `unknown_cost` (no price: cost_usd
    # null) and `may_be_billed` (a timeout or cut-off reply, recorded at 0 but possibly billed).
    # Where either is above 0, cost_usd is a floor.
    "cost_totals": (
        "select run_id, model, suite, role, "
        "count(*) filter (where not cached and try_number > 0) as requests, "
        "count(*) filter (where cached) as cached, "
        "coalesce(sum(tokens_in) filter (where not cached), 0) as tokens_in, "
        "coalesce(sum(tokens_out) filter (where not cached), 0) as tokens_out, "
        "coalesce(sum(cost_usd), 0) as cost_usd, "
        "count(*) filter (where not cached and try_number > 0 and cost_usd is null) "
        "as unknown_cost, "
        "count(*) filter (where may_be_billed) as may_be_billed "
        "from responses group by run_id, model, suite, role"
    ),
}

# Statements that only read; anything else (COPY, ATTACH, CREATE, SET, INSTALL, ...) is refused.
_READ_ONLY = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}


class QueryRefused(ValueError):
    """A statement that `roadeval query` will not run, because it would write or change state."""


def _dataset(store: Store, table: str, keys: list[str]) -> ds.Dataset:
    filesystem, root = store.arrow()
    # A dataset with the declared schema stays lazy: DuckDB pushes projections and filters down.
    return ds.dataset(
        [f"{root}/{key}" for key in keys],
        schema=SCHEMAS[table],
        format="parquet",
        filesystem=filesystem,
    )


def _runs_view(con: duckdb.DuckDBPyConnection, store: Store) -> None:
    """`runs`: each run's latest event; a `running` run whose heartbeat stopped reads `died`."""
    con.execute(
        "create view _latest_runs as select * from run_events "
        "qualify row_number() over (partition by run_id order by seq desc) = 1"
    )
    running = con.execute(
        "select run_id, started_at, heartbeat_s from _latest_runs where status = 'running'"
    ).fetchall()
    now = datetime.now(UTC)
    ids, beats, alive = [], [], []
    for run_id, started_at, heartbeat_s in running:
        beat = read_heartbeat(store, run_id)
        ids.append(run_id)
        if beat is None:
            # No beat to read (the first is written before the `running` event, so this is
            # a foreign or damaged store): judge it by its start.
            last = started_at
            living = (now - started_at).total_seconds() <= MISSED_BEATS * (heartbeat_s or 0)
        else:
            last, living = beat.at, beat.alive(now)
        beats.append(last)
        alive.append(living)
    con.register(
        "_liveness",
        pa.table(
            {"run_id": ids, "heartbeat_at": beats, "alive": alive},
            schema=pa.schema(
                [
                    ("run_id", pa.string()),
                    ("heartbeat_at", pa.timestamp("us", tz="UTC")),
                    ("alive", pa.bool_()),
                ]
            ),
        ),
    )
    columns = ", ".join(
        "case when l.alive = false then 'died' else e.status end as status"
        if name == "status"
        else f"e.{name}"
        for name in SCHEMAS["run_events"].names
    )
    con.execute(
        f"create view runs as select {columns}, l.heartbeat_at "
        "from _latest_runs e left join _liveness l using (run_id)"
    )


def connect(store: Store, *, include_unlanded: bool = False) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with views items, responses, parses, scores, metrics, run_events,
    runs and costs over the store; `include_unlanded` also shows parts no landing published."""
    con = duckdb.connect(
        config={"autoinstall_known_extensions": False, "autoload_known_extensions": False}
    )
    parts = visible_parts(store, include_unlanded=include_unlanded)
    for table in SCHEMAS:
        con.register(f"_{table}_arrow", _dataset(store, table, parts[table]))
        con.execute(f"create view {table} as select * from _{table}_arrow")
    _runs_view(con, store)
    for name, sql in DERIVED_VIEWS.items():
        con.execute(f"create view {name} as {sql}")
    # From here on SQL cannot touch files: the views read through the datasets registered above.
    con.execute("set enable_external_access = false")
    con.execute("set lock_configuration = true")
    return con


def check_read_only(sql: str) -> None:
    """Refuse anything but SELECT / EXPLAIN statements."""
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryRefused(f"query does not parse: {exc}") from None
    for statement in statements:
        if statement.type not in _READ_ONLY:
            kind = statement.type.name
            raise QueryRefused(
                f"query refused: roadeval query is read-only, and this is a {kind} statement"
            )


def query(
    store: Store, sql: str, *, include_unlanded: bool = False
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run read-only SQL over the store; returns column names and rows."""
    check_read_only(sql)
    con = connect(store, include_unlanded=include_unlanded)
    try:
        result = con.execute(sql)
        columns = [d[0] for d in result.description] if result.description else []
        return columns, result.fetchall()
    finally:
        con.close()
