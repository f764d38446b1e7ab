"""Landings: a set of table parts that becomes visible at once, or not at all.

Parts of one landing share a name (a shard's responses, parses and scores, say). They are written
first, then the landing is published: an entry in the store's part index (`part_index`), then
one marker `landings/<name>`. Readers see only published parts: through the index, or on a store
that keeps none, parts whose marker exists. A crash before the publication leaves parts nobody
reads, never half a shard that a query would count, and no part is ever rewritten. (A crash
between the index entry and the marker leaves a landing readers see but `is_landed` denies: a
run's shards are never landed twice, and the items of a suite version land again, the same
parts under the same keys.)

A finished run's parts are compacted (`storage.compaction`): one landing, `<run_id>-compacted`,
holds all of the run's rows of a partition (a table, suite and model folder) in one part. Where
that part is landed, readers see it and none of the run's other parts there (`visible_keys`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from roadeval.storage.part_index import PartIndex, Published, schema_fingerprint
from roadeval.storage.store import Store
from roadeval.storage.tables import SCHEMAS, UnreadablePart, read_part, write_part
from roadeval.storage.visibility import (
    COMPACTED,
    LANDINGS,
    compacted_name,
    listed_parts,
    part_name,
    table_keys,
    visible_keys,
)

__all__ = [
    "COMPACTED",
    "LANDINGS",
    "Part",
    "UnreadablePart",
    "compacted_name",
    "is_landed",
    "land",
    "listed_parts",
    "part_name",
    "publish",
    "read_part",
    "read_rows",
    "read_table",
    "records_of",
    "table_keys",
    "visible_keys",
    "visible_parts",
]


@dataclass(frozen=True)
class Part:
    """Rows for one table partition (records, and rows `copied` by column as an Arrow table of
    the table's schema); empty parts are not written."""

    table: str
    rows: Sequence[Any] = field(default_factory=list)
    suite: str | None = None
    model: str | None = None
    copied: pa.Table | None = None


def land(store: Store, name: str, parts: Iterable[Part]) -> list[str]:
    """Write every part under `name`, then the marker that publishes them; returns the part keys.

    The marker lists the keys it publishes, for audits; readers match parts by name alone.
    """
    published: list[Published] = []
    for part in parts:
        key = write_part(
            store,
            part.table,
            name,
            part.rows,
            suite=part.suite,
            model=part.model,
            copied=part.copied,
        )
        if key is not None:
            published.append((part.table, key, schema_fingerprint(SCHEMAS[part.table])))
    publish(store, name, published)
    return [key for _, key, _ in published]


def publish(
    store: Store, name: str, parts: Sequence[Published], replaces: Sequence[str] = ()
) -> None:
    """Make `parts` (written already) visible as the landing `name`, and hide the parts it
    `replaces` (a compaction's): its index entry, then its marker (which lists both)."""
    PartIndex(store).append(name, parts, replaces)
    about: dict[str, Any] = {"parts": [key for _, key, _ in parts]}
    if replaces:
        about["replaces"] = list(replaces)
    store.put(f"{LANDINGS}{name}", json.dumps(about).encode())


def is_landed(store: Store, name: str) -> bool:
    return store.exists(f"{LANDINGS}{name}")


def visible_parts(
    store: Store,
    *,
    include_unlanded: bool = False,
    tables: Iterable[str] | None = None,
    runs: Iterable[str] | None = None,
) -> dict[str, list[str]]:
    """Each table's parts that readers see, for every table or those named, of the runs named
    (with the suites' items, which no run owns) or of all: from the part index, or by a
    listing on a store that keeps none. `include_unlanded` adds the parts no landing
    published (a listing)."""
    names = list(SCHEMAS if tables is None else tables)
    view = None if include_unlanded else PartIndex(store).load(names)
    if view is not None:
        return {table: view.keys(table, runs) for table in names}
    return listed_parts(store, tables=names, runs=runs, include_unlanded=include_unlanded)


def read_table(store: Store, table: str) -> pa.Table:
    """A table's landed parts as one Arrow table (empty with the schema when there are none)."""
    from roadeval.storage.part_files import parts_dataset

    keys = visible_parts(store, tables=[table])[table]
    if not keys:
        return SCHEMAS[table].empty_table()
    return parts_dataset(store, SCHEMAS[table], keys).to_table()


def read_rows(store: Store, table: str, keys: Sequence[str]) -> list[Any]:
    """The rows of the given parts of `table` (keys that exist), as its records: one read per
    part (a GET on S3), columns a part predates (landed by older code) as None. A part that
    does not read as Parquet is an UnreadablePart naming it (the store's own errors pass)."""
    rows: list[Any] = []
    for key in keys:
        rows.extend(records_of(table, read_part(store, table, key)))
    return rows


def records_of(table: str, part: pa.Table) -> list[Any]:
    """The records of an Arrow table of `table`'s schema (`read_part`), row by row."""
    from roadeval.storage.records import TABLES

    names = SCHEMAS[table].names
    return _records(TABLES[table], names, [part.column(n).to_pylist() for n in names])


def _records(record: type, names: Sequence[str], columns: list[list[Any]]) -> list[Any]:
    """Records from a part's columns. They are made without `__init__`: the part was read with
    the record's own schema (derived from its fields), so its values are the fields, typed, and
    a frozen dataclass's per-field `setattr` (most of the cost of reading a baseline's 150,000
    rows) would check nothing."""
    if {field.name for field in dataclasses.fields(record)} != set(names):
        raise TypeError(f"{record.__name__}'s fields are not its table's columns")
    new = object.__new__
    made: list[Any] = []
    for values in zip(*columns, strict=True):
        row: Any = new(record)
        row.__dict__.update(zip(names, values, strict=True))
        made.append(row)
    return made
