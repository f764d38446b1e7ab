"""The Parquet tables of a store: their schemas, declared once, and how parts are written."""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote

import pyarrow as pa
import pyarrow.parquet as pq

from roadeval.storage.store import Store

_TS = pa.timestamp("us", tz="UTC")

SCHEMAS: dict[str, pa.Schema] = {
    "items": pa.schema(
        [
            ("suite", pa.string()),
            ("suite_version", pa.string()),
            ("item_id", pa.string()),
            ("task", pa.string()),
            ("content_hash", pa.string()),
            ("answer_kind", pa.string()),
            ("question", pa.string()),
            ("options_json", pa.string()),
            ("reference_json", pa.string()),
            ("media_json", pa.string()),
            ("labels_json", pa.string()),
            ("extra_json", pa.string()),
        ]
    ),
    "responses": pa.schema(
        [
            ("run_id", pa.string()),
            ("suite", pa.string()),
            ("task", pa.string()),
            ("item_id", pa.string()),
            ("content_hash", pa.string()),
            ("model", pa.string()),
            ("request_key", pa.string()),
            ("attempt", pa.int32()),
            ("raw_text", pa.string()),
            ("finish_reason", pa.string()),
            ("tokens_in", pa.int64()),
            ("tokens_out", pa.int64()),
            ("cost_usd", pa.float64()),
            ("latency_s", pa.float64()),
            ("error_kind", pa.string()),
            ("error_message", pa.string()),
            ("cached", pa.bool_()),
            ("created_at", _TS),
        ]
    ),
    "parses": pa.schema(
        [
            ("run_id", pa.string()),
            ("suite", pa.string()),
            ("task", pa.string()),
            ("item_id", pa.string()),
            ("model", pa.string()),
            ("attempt", pa.int32()),
            ("request_key", pa.string()),
            ("status", pa.string()),
            ("rule", pa.string()),
            ("value_json", pa.string()),
            ("detail", pa.string()),
        ]
    ),
    "scores": pa.schema(
        [
            ("run_id", pa.string()),
            ("suite", pa.string()),
            ("task", pa.string()),
            ("item_id", pa.string()),
            ("model", pa.string()),
            ("metric", pa.string()),
            ("value", pa.float64()),
            ("details_json", pa.string()),
        ]
    ),
    # Corpus-level results: per task (slice '' = all items), per slice value, suite-wide (task '*').
    "metrics": pa.schema(
        [
            ("run_id", pa.string()),
            ("suite", pa.string()),
            ("task", pa.string()),
            ("model", pa.string()),
            ("slice", pa.string()),
            ("slice_value", pa.string()),
            ("metric", pa.string()),
            ("value", pa.float64()),
            ("n", pa.int64()),
        ]
    ),
    "runs": pa.schema(
        [
            ("run_id", pa.string()),
            ("status", pa.string()),
            ("started_at", _TS),
            ("ended_at", _TS),
            ("panel", pa.string()),
            ("code_version", pa.string()),
            ("n_calls", pa.int64()),
            ("n_cached", pa.int64()),
            ("n_errors", pa.int64()),
            ("n_abnormal", pa.int64()),
            ("n_unparsed", pa.int64()),
            ("cost_usd", pa.float64()),
            ("manifest_json", pa.string()),
        ]
    ),
}

TABLES = tuple(SCHEMAS)


def _segment(name: str, value: str) -> str:
    # Model strings carry '/' and ':'; quoting keeps one partition folder per value.
    return f"{name}={quote(value, safe='')}"


def part_key(table: str, name: str, *, suite: str | None = None, model: str | None = None) -> str:
    """Where a part lives: tables/<table>/suite=<s>/model=<m>/<name>.parquet."""
    if table not in SCHEMAS:
        raise KeyError(f"unknown table {table!r}")
    segments = ["tables", table]
    if suite is not None:
        segments.append(_segment("suite", suite))
    if model is not None:
        segments.append(_segment("model", model))
    segments.append(f"{name}.parquet")
    return "/".join(segments)


def to_parquet(table: str, rows: Iterable[Mapping[str, Any]]) -> bytes:
    """Encode rows with the table's declared schema; a missing or mistyped column fails here."""
    schema = SCHEMAS[table]
    columns: dict[str, list[Any]] = {name: [] for name in schema.names}
    for row in rows:
        extra = set(row) - set(columns)
        if extra:
            raise KeyError(f"table {table}: unknown columns {sorted(extra)}")
        for name in schema.names:
            columns[name].append(row.get(name))
    arrow_table = pa.Table.from_pydict(columns, schema=schema)
    sink = io.BytesIO()
    pq.write_table(arrow_table, sink, compression="zstd")
    return sink.getvalue()


def write_part(
    store: Store,
    table: str,
    name: str,
    rows: Iterable[Mapping[str, Any]],
    *,
    suite: str | None = None,
    model: str | None = None,
) -> str | None:
    """Publish one immutable part (atomically); returns its key, or None when there are no rows."""
    rows = list(rows)
    if not rows:
        return None
    key = part_key(table, name, suite=suite, model=model)
    store.put(key, to_parquet(table, rows))
    return key


def read_table(store: Store, table: str) -> pa.Table:
    """All parts of a table as one Arrow table (empty with the schema when there are none)."""
    import pyarrow.dataset as ds

    keys = [k for k in store.list(f"tables/{table}/") if k.endswith(".parquet")]
    if not keys:
        return SCHEMAS[table].empty_table()
    filesystem, root = store.arrow()
    dataset = ds.dataset(
        [f"{root}/{key}" for key in keys],
        schema=SCHEMAS[table],
        format="parquet",
        filesystem=filesystem,
    )
    return dataset.to_table()
