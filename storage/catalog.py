"""The DuckDB catalogue: one view per table over the store's Parquet parts, local or S3."""

from __future__ import annotations

from typing import Any

import duckdb
import pyarrow.dataset as ds

from roadeval.storage.store import Store
from roadeval.storage.tables import SCHEMAS

# Derived views, defined over the base tables so they never disagree with them.
DERIVED_VIEWS: dict[str, str] = {
    "costs": (
        "select run_id, suite, model, request_key, attempt, tokens_in, tokens_out, cost_usd, "
        "cached, error_kind, created_at from responses"
    ),
}


def _dataset(store: Store, table: str) -> ds.Dataset:
    keys = [k for k in store.list(f"tables/{table}/") if k.endswith(".parquet")]
    filesystem, root = store.arrow()
    # A dataset with the declared schema stays lazy: DuckDB pushes projections and filters down.
    return ds.dataset(
        [f"{root}/{key}" for key in keys],
        schema=SCHEMAS[table],
        format="parquet",
        filesystem=filesystem,
    )


def connect(store: Store) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with views items, responses, parses, scores, metrics, runs, costs."""
    con = duckdb.connect(
        config={"autoinstall_known_extensions": False, "autoload_known_extensions": False}
    )
    for table in SCHEMAS:
        con.register(f"_{table}_arrow", _dataset(store, table))
        con.execute(f"create view {table} as select * from _{table}_arrow")
    for name, sql in DERIVED_VIEWS.items():
        con.execute(f"create view {name} as {sql}")
    return con


def query(store: Store, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run SQL over the store; returns column names and rows."""
    con = connect(store)
    try:
        result = con.execute(sql)
        columns = [d[0] for d in result.description] if result.description else []
        return columns, result.fetchall()
    finally:
        con.close()
