"""The Parquet tables of a store: their schemas (derived from their records, see `records`) and
how parts are written and read. Tables are looked up in the registry when a part is made, so a
suite's table registered after this module loaded is written like any other."""

from __future__ import annotations

import io
import operator
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

import pyarrow as pa
import pyarrow.parquet as pq

from roadeval.storage.part_cache import keep_part, part_bytes
from roadeval.storage.records import SCHEMAS, TABLES
from roadeval.storage.store import Store

__all__ = [
    "SCHEMAS",
    "TABLES",
    "UnreadablePart",
    "conformed",
    "part_key",
    "read_part",
    "to_parquet",
    "write_part",
]


def _segment(name: str, value: str) -> str:
    # Model strings carry '/' and ':'; quoting keeps one partition folder per value.
    return f"{name}={quote(value, safe='')}"


def manifest_key(run_id: str) -> str:
    """Where a run's manifest lives: runs/<run_id>/manifest.json."""
    return f"runs/{run_id}/manifest.json"


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


def to_parquet(table: str, rows: Iterable[Any], copied: pa.Table | None = None) -> bytes:
    """Encode records of `table` with its schema, then the rows of `copied` (an Arrow table of
    the same schema: rows landed again by column, never made into records); a row of another
    record type fails here."""
    if table not in TABLES:
        raise KeyError(f"unknown table {table!r}")
    record, schema = TABLES[table], SCHEMAS[table]
    rows = list(rows)
    for row in rows:
        if not isinstance(row, record):
            raise TypeError(f"table {table} takes {record.__name__} rows, not {type(row).__name__}")
    # One C-level attrgetter per row, then a transpose: a Python getattr per field per row
    # was most of the cost of landing a rerun's 50,000 copied rows.
    names = schema.names
    if not rows:
        arrow_table = schema.empty_table()
    else:
        values = operator.attrgetter(*names)
        rows_of = map(values, rows) if len(names) > 1 else ((values(row),) for row in rows)
        columns = list(zip(*rows_of, strict=True))
        arrays = [pa.array(col, type=kind.type) for col, kind in zip(columns, schema, strict=True)]
        arrow_table = pa.Table.from_arrays(arrays, schema=schema)
    if copied is not None and copied.num_rows:
        arrow_table = pa.concat_tables([arrow_table, copied.cast(schema)])
    sink = io.BytesIO()
    pq.write_table(arrow_table, sink, compression="zstd")
    return sink.getvalue()


def write_part(
    store: Store,
    table: str,
    name: str,
    rows: Iterable[Any],
    *,
    suite: str | None = None,
    model: str | None = None,
    copied: pa.Table | None = None,
) -> str | None:
    """Publish one immutable part (atomically) of `rows` and the `copied` table's rows; returns
    its key, or None when there are no rows."""
    rows = list(rows)
    if not rows and (copied is None or not copied.num_rows):
        return None
    key = part_key(table, name, suite=suite, model=model)
    data = to_parquet(table, rows, copied)
    store.put(key, data)
    keep_part(store, key, data)
    return key


class UnreadablePart(ValueError):
    """A landed part whose bytes are not a Parquet table (damaged or edited by hand)."""


def read_part(store: Store, table: str, key: str) -> pa.Table:
    """One part of `table` as an Arrow table of exactly the table's schema (columns a part
    predates as nulls); an UnreadablePart when its bytes are not such a table."""
    schema = SCHEMAS[table]
    data = part_bytes(store, key)
    try:
        # One file's reader, not `read_table`'s dataset machinery: a fifth of the time on
        # the small parts a baseline is made of (hundreds per suite x model).
        return conformed(pq.ParquetFile(pa.BufferReader(data)).read(), schema)
    except (pa.ArrowException, OSError) as exc:
        raise UnreadablePart(f"{store.location(key)}: not a readable part ({exc})") from None


def conformed(part: pa.Table, schema: pa.Schema) -> pa.Table:
    """`part` with exactly `schema`'s columns, in its order: a column it predates (written by
    older code) as nulls, one the schema no longer has left out."""
    missing = [name for name in schema.names if name not in part.column_names]
    for name in missing:
        part = part.append_column(name, pa.nulls(part.num_rows, schema.field(name).type))
    part = part.select(schema.names)
    # Parts written by this code already have the schema: a cast would copy every column.
    return part if part.schema == schema else part.cast(schema)
