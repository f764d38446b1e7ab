"""Compaction: a finished run's small parts folded into one part per table partition.

A run lands a part per shard and table, so that a crash loses at most a shard; a run of 10,000
items lands hundreds of them per suite x model, and every later reader (a rerun reading its
baseline, a query) pays a read per part. Once the run has landed its last shard and its metrics,
`compact_run` reads its parts once more and writes one part per folder (table, suite, model),
all published by one landing, `<run_id>-compacted`, whose index entry says which parts they
replace. Readers see, in a folder where that part is published, it alone of the run's parts
(through the part index, or by a listing: `landing.visible_keys`): before its publication they
see the small parts, after it the large one, never both. The small parts stay (parts are never
rewritten or removed), hidden.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from roadeval.storage.landing import (
    compacted_name,
    part_name,
    publish,
    read_part,
    visible_parts,
)
from roadeval.storage.part_index import Published, schema_fingerprint
from roadeval.storage.records import SCHEMAS
from roadeval.storage.store import Store

# Tables a run lands into after it is compacted: its last `run_events` row comes after.
NOT_COMPACTED = frozenset({"run_events"})
# Rows per row group of a compacted part: large enough for a scan to pay little per group,
# small enough that a reader decodes a part's groups in parallel.
ROW_GROUP_ROWS = 128 * 1024
# Parts read at once: on S3 a read is mostly waiting.
READERS = 8
# The fewest parts a folder must hold to be folded: below it, a reader's few extra reads cost
# less than rewriting every row of the folder (a rerun lands its copies as one part and the few
# items it asks as one or two more: folding those rewrote 50,000 rows to save two reads).
FOLD_FROM = 4


@dataclass(frozen=True)
class Compaction:
    """What `compact_run` did: the parts it wrote, and the parts they replace for readers."""

    written: tuple[str, ...]
    replaced: tuple[str, ...]


def compact_run(store: Store, run_id: str, fold_from: int = FOLD_FROM) -> Compaction:
    """Fold each folder's landed parts of `run_id` (`fold_from` or more) into one part, and
    publish them all as the run's compacted landing. Call it once the run lands nothing more outside
    `NOT_COMPACTED`; a folder's rows keep their order (parts by name, rows as landed)."""
    prefix = f"{run_id}-"
    name = compacted_name(run_id)
    written: list[Published] = []
    replaced: list[str] = []
    # The run's visible parts from the part index (a listing of every table only on a store
    # that keeps none): a few requests, not a listing per table of every run's parts.
    tables = [table for table in SCHEMAS if table not in NOT_COMPACTED]
    visible = visible_parts(store, tables=tables, runs=[run_id])
    with ThreadPoolExecutor(max_workers=READERS) as pool:
        for table in tables:
            by_folder: dict[str, list[str]] = {}
            for key in visible[table]:
                if part_name(key).startswith(prefix):
                    by_folder.setdefault(key.rsplit("/", 1)[0], []).append(key)
            for folder, keys in sorted(by_folder.items()):
                if len(keys) < max(fold_from, 2):
                    continue  # few parts (one once compacted): read as they are
                key = f"{folder}/{name}.parquet"
                parts = pool.map(lambda part, t=table: read_part(store, t, part), keys)
                store.put(key, _encode(table, parts))
                written.append((table, key, schema_fingerprint(SCHEMAS[table])))
                replaced.extend(keys)
    if written:
        publish(store, name, written, replaced)
    return Compaction(tuple(key for _, key, _ in written), tuple(replaced))


def _encode(table: str, parts: Iterable[pa.Table]) -> bytes:
    """One Parquet file of `parts` (each of the table's schema) in their order, written a row
    group at a time so that a large folder is never whole in memory as Arrow."""
    sink = io.BytesIO()
    pending: list[pa.Table] = []
    rows = 0
    with pq.ParquetWriter(sink, SCHEMAS[table], compression="zstd") as writer:
        for part in parts:
            pending.append(part)
            rows += part.num_rows
            if rows >= ROW_GROUP_ROWS:
                writer.write_table(pa.concat_tables(pending), row_group_size=ROW_GROUP_ROWS)
                pending, rows = [], 0
        if pending:
            writer.write_table(pa.concat_tables(pending), row_group_size=ROW_GROUP_ROWS)
    return sink.getvalue()
