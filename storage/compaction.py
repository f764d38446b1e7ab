"""Compaction: a finished run's small parts folded into one part per table partition.

A run lands a part per shard and table, so that a crash loses at most a shard; a run of 10,000
items lands hundreds of them per suite x model, and every later reader (a rerun reading its
baseline, a query) pays a read per part. Once the run has landed its last shard and its metrics,
`compact_run` reads its parts once more and writes one part per folder (table, suite, model),
all published by one landing, `<run_id>-compacted`, whose index entry says which parts they
replace. Readers see, in a folder where that part is published, it alone of the run's parts
(through the part index, or by a listing: `landing.visible_keys`): before its publication they
see the small parts, after it the large one, never both. Once it is published the small parts
are removed, so that a plain Parquet reader of the folder (a glob, pyarrow's dataset) reads no
row twice; a reader that loaded the index before and finds one gone loads it again
(`catalog.query`). What no reader sees and nothing can publish any more (a crashed landing's
parts, a failed compaction's) is swept at the same time (`sweeping`).
"""

from __future__ import annotations

import contextlib
import io
import logging
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from roadeval.storage.landing import (
    LANDINGS,
    compacted_name,
    part_name,
    publish,
    read_part,
    visible_keys,
)
from roadeval.storage.part_index import Published, schema_fingerprint
from roadeval.storage.records import SCHEMAS
from roadeval.storage.store import Store, describe_store_error
from roadeval.storage.sweeping import sweep
from roadeval.storage.visibility import every_table_keys

log = logging.getLogger(__name__)

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
    """What `compact_run` did: the parts it wrote, the parts they replace for readers (removed
    from the store once replaced), and the hidden parts of ended runs it swept."""

    written: tuple[str, ...]
    replaced: tuple[str, ...]
    swept: tuple[str, ...] = ()


def compact_run(store: Store, run_id: str, fold_from: int = FOLD_FROM) -> Compaction:
    """Fold each folder's landed parts of `run_id` (`fold_from` or more) into one part, publish
    them all as the run's compacted landing, then remove the parts they replace and sweep what
    no reader sees (`sweeping`). Call it once the run lands nothing more outside
    `NOT_COMPACTED`; a folder's rows keep their order (parts by name, rows as landed)."""
    prefix = f"{run_id}-"
    landed = {key.removeprefix(LANDINGS) for key in store.list(f"{LANDINGS}{prefix}")}
    name = compacted_name(run_id)
    # Every table's parts, in one listing before anything is written: what the sweep looks at.
    listed = every_table_keys(store)
    written: list[Published] = []
    replaced: list[str] = []
    try:
        with ThreadPoolExecutor(max_workers=READERS) as pool:
            for table, keys in listed.items():
                if table in NOT_COMPACTED:
                    continue
                ours = [k for k in keys if part_name(k).startswith(prefix)]
                by_folder: dict[str, list[str]] = {}
                for key in visible_keys(ours, landed):
                    by_folder.setdefault(key.rsplit("/", 1)[0], []).append(key)
                for folder, parts in sorted(by_folder.items()):
                    if len(parts) < max(fold_from, 2):
                        continue  # few parts (one once compacted): read as they are
                    key = f"{folder}/{name}.parquet"
                    read = pool.map(lambda part, t=table: read_part(store, t, part), parts)
                    store.put(key, _encode(table, read))
                    written.append((table, key, schema_fingerprint(SCHEMAS[table])))
                    replaced.extend(parts)
    except BaseException:
        # Nothing published: what was written would only be read twice by a plain reader.
        with contextlib.suppress(Exception):
            store.delete_many(key for _, key, _ in written)
        raise
    if written:
        publish(store, name, written, replaced)
        _remove(store, replaced)
    left = set(replaced)
    swept = _sweep(store, {t: [k for k in keys if k not in left] for t, keys in listed.items()})
    return Compaction(tuple(key for _, key, _ in written), tuple(replaced), tuple(swept))


def _remove(store: Store, replaced: Sequence[str]) -> None:
    """Remove the parts a published compaction replaced; a store that refuses keeps them
    (hidden from the views, read by plain readers) until a later compaction sweeps them."""
    try:
        store.delete_many(replaced)
    except Exception as exc:
        log.warning(
            "could not remove the %d parts the compaction replaced (a later run's compaction "
            "removes them; until then plain Parquet readers count their rows twice): %s",
            len(replaced),
            describe_store_error(store.uri, exc),
        )


def _sweep(store: Store, listed: dict[str, list[str]]) -> list[str]:
    """`sweeping.sweep`, whose failure leaves the run compacted (and warns)."""
    try:
        return sweep(store, listed)
    except Exception as exc:
        log.warning(
            "could not remove the parts no reader sees (a later run's compaction will): %s",
            describe_store_error(store.uri, exc),
        )
        return []


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
