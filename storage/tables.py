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

# The run counts that are columns of `run_events` (and so of the `runs` view), as n_<name>.
RUN_COUNT_COLUMNS = (
    "items",
    "scored",
    "calls",
    "requests",
    "cached",
    "errors",
    "interrupted",
    "not_run",
    "abnormal",
    "unparsed",
)

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
    # One row per HTTP request sent (retries included) and per answer reused from the store.
    "responses": pa.schema(
        [
            ("run_id", pa.string()),
            ("suite", pa.string()),
            ("task", pa.string()),
            ("item_id", pa.string()),
            ("content_hash", pa.string()),
            ("model", pa.string()),
            ("model_string", pa.string()),
            ("api_base", pa.string()),
            ("request_key", pa.string()),
            ("attempt", pa.int32()),
            ("try_number", pa.int32()),
            ("raw_text", pa.string()),
            ("finish_reason", pa.string()),
            ("tokens_in", pa.int64()),
            ("tokens_out", pa.int64()),
            # What this run paid: 0 for a reused answer, whose first cost is original_cost_usd.
            ("cost_usd", pa.float64()),
            ("original_cost_usd", pa.float64()),
            ("latency_s", pa.float64()),
            ("error_kind", pa.string()),
            ("error_message", pa.string()),
            # A timed-out or cancelled request may still be billed by the provider.
            ("may_be_billed", pa.bool_()),
            ("cached", pa.bool_()),
            ("origin_run_id", pa.string()),
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
            ("content_hash", pa.string()),
            ("model", pa.string()),
            ("request_key", pa.string()),
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
    # A run's life as events (running, then finished / failed / interrupted); the `runs` view
    # shows each run's latest event.
    "run_events": pa.schema(
        [
            ("run_id", pa.string()),
            ("seq", pa.int32()),
            ("status", pa.string()),
            ("started_at", _TS),
            ("ended_at", _TS),
            ("panel", pa.string()),
            ("code_version", pa.string()),
            ("host", pa.string()),
            ("pid", pa.int64()),
            ("heartbeat_s", pa.float64()),
            *[(f"n_{name}", pa.int64()) for name in RUN_COUNT_COLUMNS],
            ("cost_usd", pa.float64()),
            ("message", pa.string()),
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
