"""Digests: the rows of the tables every reader wants whole (`run_events`, which the `runs` view
is made of), as of an index snapshot, in one object. On S3 a reader then makes one GET for them,
not one per part: a store of 100 runs holds hundreds of small event parts.

A digest is a cache, never the truth. It keeps each part's rows with the part's key and the
number of the index entry that published it, and a reader takes from it only the rows of parts
its own index view shows under the same key and number; every other visible part (landed after
the snapshot, or missing from the digest) it reads itself. A digest that is missing or cannot
be read costs time, never rows.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from roadeval.storage.store import Store
from roadeval.storage.tables import SCHEMAS, conformed, read_part

log = logging.getLogger(__name__)

DIGESTS = "index/digests/"
# The tables digested: small, and read whole by every reader of the catalogue.
WHOLE = frozenset({"run_events"})
# Where each digested row came from (no record has a field named with a leading underscore).
PART_KEY = "_part_key"
PART_NUMBER = "_part_number"
# Parts read at once (on S3 a read is mostly waiting).
_READERS = 32


def digest_key(table: str, number: int) -> str:
    return f"{DIGESTS}{table}/{number:012d}.parquet"


def _schema(table: str) -> pa.Schema:
    return (
        SCHEMAS[table]
        .append(pa.field(PART_KEY, pa.string()))
        .append(pa.field(PART_NUMBER, pa.int64()))
    )


def _read_digest(store: Store, table: str, number: int | None) -> pa.Table | None:
    """The digest of `table` at snapshot `number`; None when there is none (not written yet,
    retired, or written before digests existed) or it does not read as one."""
    if number is None:
        return None
    key = digest_key(table, number)
    try:
        data = store.get(key)
    except FileNotFoundError:
        return None
    try:
        return conformed(pq.ParquetFile(pa.BufferReader(data)).read(), _schema(table))
    except (pa.ArrowException, OSError, ValueError) as exc:
        log.warning(
            "%s is unreadable as a digest (%s): the %s parts it covers are read one by one",
            store.location(key),
            exc,
            table,
        )
        return None


def _parts_rows(
    store: Store, table: str, keys: list[str], numbers: list[int], base: pa.Table | None
) -> pa.Table:
    """The rows of the parts named, tagged with their keys and numbers: from `base` (a
    digest) where it holds a part under the same key and number, else read from the store."""
    schema = _schema(table)
    found: list[pa.Table] = []
    wanted = set(zip(keys, numbers, strict=True))
    if base is not None and base.num_rows:
        held = list(
            zip(
                base.column(PART_KEY).to_pylist(), base.column(PART_NUMBER).to_pylist(), strict=True
            )
        )
        hits = wanted.intersection(held)
        if hits:
            found.append(base.filter(pa.array([part in hits for part in held], pa.bool_())))
        wanted -= hits

    def read(part: tuple[str, int]) -> pa.Table:
        key, number = part
        rows = read_part(store, table, key)
        rows = rows.append_column(PART_KEY, pa.array([key] * rows.num_rows, pa.string()))
        return rows.append_column(PART_NUMBER, pa.array([number] * rows.num_rows, pa.int64()))

    missing = sorted(wanted)
    if missing:
        found.extend(_each(read, missing))
    return pa.concat_tables([schema.empty_table(), *found])


def _each(
    read: Callable[[tuple[str, int]], pa.Table], parts: list[tuple[str, int]]
) -> list[pa.Table]:
    if len(parts) == 1:
        return [read(parts[0])]
    with ThreadPoolExecutor(max_workers=min(_READERS, len(parts))) as pool:
        return list(pool.map(read, parts))


def _of(index_rows: pa.Table, table: str) -> tuple[list[str], list[int]]:
    rows = index_rows.filter(pc.equal(index_rows.column("table"), table))
    return rows.column("key").to_pylist(), rows.column("number").to_pylist()


def write_digests(store: Store, number: int, visible: pa.Table, previous: int | None) -> None:
    """Digest each `WHOLE` table's parts of the snapshot `number` (`visible`: its index rows),
    taking what the digest of the snapshot before (`previous`) holds and reading the rest. A
    failure leaves no digest (readers read the parts) and is logged: the landing that folded
    the snapshot stands."""
    for table in sorted(WHOLE):
        try:
            keys, numbers = _of(visible, table)
            rows = _parts_rows(store, table, keys, numbers, _read_digest(store, table, previous))
            sink = io.BytesIO()
            pq.write_table(rows, sink, compression="zstd")
            store.put(digest_key(table, number), sink.getvalue())
        except Exception as exc:  # a cache not written: readers read the parts themselves
            log.warning(
                "store %s: no %s digest at index snapshot %d (%s)", store.uri, table, number, exc
            )


def retired_digests(store: Store, before: int) -> list[str]:
    """The digests of snapshots older than `before` (retired with their snapshots)."""
    retired = []
    for key in store.list(DIGESTS):
        stem = key.rsplit("/", 1)[-1].split(".", 1)[0]
        if stem.isdigit() and int(stem) < before:
            retired.append(key)
    return retired


def read_whole(store: Store, table: str, index_rows: pa.Table, base: int | None) -> pa.Table:
    """Every visible part of `table` (`index_rows`: the index view's rows of it) as one Arrow
    table of its schema: from the digest of snapshot `base` where it holds them, the rest (and
    all, without a digest) read part by part."""
    keys, numbers = _of(index_rows, table)
    digest = _read_digest(store, table, base) if keys else None
    rows = _parts_rows(store, table, keys, numbers, digest)
    return rows.drop_columns([PART_KEY, PART_NUMBER])
