"""The index of landed parts: what readers see, loaded in a few requests however large the store.

Every landing appends one entry, its name and parts (and for a compaction the parts it
replaces), under the next number: `index/log/<n // 4096>/<n>.json`, taken with a conditional
create, so numbers are dense and in the order the landings were published. Entries are never
removed: a writer whose idea of the next number is stale only collides and moves on, and can
never take a number that was used (the threads of one process take theirs in turn). They are
folded as they accumulate, by the writer that took the number: every `SEGMENT` into a segment
(`index/segments/<n>.parquet`: the entries after the segment before), every `SNAPSHOT` into a
snapshot of every visible part up to `n` (`index/snapshots/<n>.parquet`). A reader lists the
snapshots, then the segments and the entries after the newest (listings that start after a key,
which never page through the past; once it has seen a snapshot, one listing of `index/` from the
entries after it), and reads them: while folding keeps up, one snapshot and at most 30 small
objects.

A snapshot's writer also digests the small tables every reader wants whole (`index_digests`).
Segments, snapshots and digests are removed one snapshot later, so a reader that listed just
before a fold still finds what it listed (one that does not, lists again). A folder, or an S3
endpoint that takes conditional writes, keeps an index; one that refuses them gets
`index/snapshots/unindexed`, and readers list its parts, as they do for a store written before
the index existed (markers and parts, no `index/`: its first new landing snapshots what a
listing shows, as number 0).
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import ClassVar

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from roadeval.storage.index_digests import retired_digests, write_digests
from roadeval.storage.index_memo import IndexMemo
from roadeval.storage.store import ConditionalWritesUnsupported, Store
from roadeval.storage.visibility import listed_parts, run_of

log = logging.getLogger(__name__)

INDEX = "index/"
LOG = "index/log/"
SEGMENTS = "index/segments/"
SNAPSHOTS = "index/snapshots/"
UNINDEXED = "index/snapshots/unindexed"
# Entries per folder of the log (a folder store's listing walks only the folders it needs).
_LOG_GROUP = 4096
# Entries per segment, and per snapshot (a multiple of SEGMENT).
SEGMENT = 16
SNAPSHOT = 256
_DIGITS = 12
# Objects read at once (on S3 a read is mostly waiting).
_READERS = 8

ROWS = pa.schema(
    [
        ("number", pa.int64()),
        ("name", pa.string()),
        ("run_id", pa.string()),
        # 'part' (a part the landing published) or 'replaces' (one it hides: a compaction).
        ("role", pa.string()),
        ("table", pa.string()),
        ("key", pa.string()),
        # The schema the part was written with (`schema_fingerprint`); None when not known.
        ("fingerprint", pa.string()),
    ]
)

# A part as a landing reports it: its table, key and schema fingerprint.
Published = tuple[str, str, str | None]


def schema_fingerprint(schema: pa.Schema) -> str:
    """Parts of one fingerprint have the same columns and types: one scan reads them all."""
    text = ";".join(f"{f.name}:{f.type}" for f in schema)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class IndexView:
    """The visible parts (`ROWS`, roles 'part' only, each key once) and the store requests
    loading them took."""

    rows: pa.Table
    requests: int
    # The tables loaded (None: every table).
    tables: frozenset[str] | None = None
    # The snapshot the view was loaded from (None: none), whose digests hold its parts' rows.
    base: int | None = None

    def of(self, table: str, runs: Iterable[str] | None = None) -> pa.Table:
        """The rows of `table`'s parts, of the runs named (with the items landings, which no
        run owns) or of all."""
        if self.tables is not None and table not in self.tables:
            raise KeyError(f"table {table!r} was not loaded from the part index")
        rows = self.rows.filter(pc.equal(self.rows.column("table"), table))
        if runs is not None:
            owned = pc.is_in(rows.column("run_id"), pa.array(sorted(set(runs)), pa.string()))
            rows = rows.filter(pc.or_(pc.is_null(rows.column("run_id")), owned))
        return rows

    def keys(self, table: str, runs: Iterable[str] | None = None) -> list[str]:
        return sorted(self.of(table, runs).column("key").to_pylist())

    def run_ids(self) -> set[str]:
        return {run for run in pc.unique(self.rows.column("run_id")).to_pylist() if run}


def _number_key(folder: str, number: int, suffix: str) -> str:
    return f"{folder}{number:0{_DIGITS}d}{suffix}"


def _entry_key(number: int) -> str:
    return f"{LOG}{number // _LOG_GROUP:08d}/{number:0{_DIGITS}d}.json"


def _number_of(key: str) -> int | None:
    stem = key.rsplit("/", 1)[-1].split(".", 1)[0]
    return int(stem) if stem.isdigit() else None


def _numbers(listed: Iterable[str], folder: str) -> list[int]:
    return sorted(n for k in listed if k.startswith(folder) and (n := _number_of(k)) is not None)


def entry_rows(
    number: int, name: str, parts: Sequence[Published], replaces: Sequence[str] = ()
) -> pa.Table:
    """One landing's rows: its parts, then the keys it replaces."""
    run = run_of(name)
    rows: list[dict[str, object]] = [
        {"number": number, "name": name, "run_id": run, "role": "part", "table": table,
         "key": key, "fingerprint": fingerprint}
        for table, key, fingerprint in parts
    ]  # fmt: skip
    rows += [
        {"number": number, "name": name, "run_id": run, "role": "replaces", "table": None,
         "key": key, "fingerprint": None}
        for key in replaces
    ]  # fmt: skip
    return pa.Table.from_pylist(rows, schema=ROWS)


def merged(base: pa.Table, newer: pa.Table) -> pa.Table:
    """The visible parts of `base` (visible already: a snapshot) with the entries `newer` (in
    number order) on top: a part landed again is kept once, as the newer landing's; a part a
    newer compaction replaces is left out."""
    roles = newer.column("role").to_pylist()
    keys = newer.column("key").to_pylist()
    replaced = {key for key, role in zip(keys, roles, strict=True) if role == "replaces"}
    keep: list[int] = []
    seen: set[str] = set()
    for at in range(newer.num_rows - 1, -1, -1):
        if roles[at] == "part" and keys[at] not in replaced and keys[at] not in seen:
            seen.add(keys[at])
            keep.append(at)
    keep.reverse()
    drop = pa.array(sorted(seen | replaced), pa.string())
    kept = base.filter(pc.invert(pc.is_in(base.column("key"), drop))) if len(drop) else base
    return pa.concat_tables([kept, newer.take(pa.array(keep, pa.int64()))])


def _encode(rows: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(rows, sink, compression="zstd")
    return sink.getvalue()


def _decode(data: bytes) -> pa.Table:
    return pq.ParquetFile(pa.BufferReader(data)).read().cast(ROWS)


@dataclass(frozen=True)
class _Listing:
    """What the index's listings showed: every snapshot, the newest (`base`, under a bound if
    asked; None: none), and the segments and entries after it."""

    snapshots: list[int]
    base: int | None
    segments: list[int]
    entries: list[int]
    # The listing requests they took.
    listings: int = 3

    @property
    def empty(self) -> bool:
        return self.base is None and not self.entries

    @property
    def top(self) -> int:
        return max([self.base or 0, *self.segments, *self.entries])

    def plan(self, upto: int | None = None) -> list[tuple[str, int]] | None:
        """What to read for everything up to `upto` (or all): the snapshot, the chain of
        segments after it, the entries after them. None when the entries are not dense."""
        plan: list[tuple[str, int]] = [] if self.base is None else [("snapshot", self.base)]
        done = self.base or 0
        segments = set(self.segments)
        while done + SEGMENT in segments and (upto is None or done + SEGMENT < upto):
            done += SEGMENT
            plan.append(("segment", done))
        entries = [n for n in self.entries if n > done and (upto is None or n <= upto)]
        last = upto if upto is not None else max(entries, default=done)
        if entries != list(range(done + 1, last + 1)):
            return None
        return plan + [("entry", n) for n in entries]


class IndexChanging(RuntimeError):
    """The index kept changing under a reader (a fold retired what it listed, again and again)."""


class PartIndex:
    """One store's index: `append` from every landing, `load` for readers."""

    # The next number per store, shared by the writers of a process.
    _next: ClassVar[dict[str, int]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()
    # Per store, held while a writer of this process takes a number: its threads take numbers
    # in turn (one create each) instead of racing to the same one, all but one refused (a 412
    # on S3) and again at the next. The conditional create settles it with other processes.
    _taking: ClassVar[dict[str, threading.Lock]] = {}
    # The newest snapshot (-1: none) this process has seen per store: later listings start at
    # the entries after it.
    _bases: ClassVar[dict[str, int]] = {}

    def __init__(self, store: Store) -> None:
        self.store = store

    # -- writing --

    def append(self, name: str, parts: Sequence[Published], replaces: Sequence[str] = ()) -> None:
        """Add a landing's entry under the next free number, and fold when that number closes
        a segment or a snapshot. Nothing on a store that keeps no index."""
        body = json.dumps(
            {"name": name, "parts": [list(p) for p in parts], "replaces": list(replaces)}
        ).encode()
        number = self._take(body)
        if number is None:
            return
        # Kept: the fold that closes its segment, and this process's loads, need not read it.
        IndexMemo.keep(self.store.uri, "entry", number, entry_rows(number, name, parts, replaces))
        if number % SEGMENT == 0:
            self._fold(number)

    @classmethod
    def _forked(cls) -> None:
        """In a forked child: locks a thread of the parent held at the fork are held by no one."""
        cls._lock = threading.Lock()
        cls._taking = {}

    def _take(self, body: bytes) -> int | None:
        with self._lock:
            taking = self._taking.setdefault(self.store.uri, threading.Lock())
        with taking:
            return self._take_in_turn(body)

    def _take_in_turn(self, body: bytes) -> int | None:
        uri = self.store.uri
        misses = 0
        while True:
            with self._lock:
                number = self._next.get(uri)
            if number is None:
                number = self._discover()
                if number is None:
                    return None
            try:
                taken = self.store.create(_entry_key(number), body)
            except ConditionalWritesUnsupported:
                log.warning(
                    "store %s refuses conditional writes: it keeps no part index, and its "
                    "readers list every part",
                    uri,
                )
                self.store.put(UNINDEXED, b"the endpoint refuses conditional writes\n")
                return None
            with self._lock:
                self._next[uri] = max(self._next.get(uri, 0), number + 1)
            if taken:
                return number
            misses += 1
            if misses % 8 == 0:
                with self._lock:
                    self._next.pop(uri, None)  # others land fast: start from the top again

    def _discover(self) -> int | None:
        """The next free number (None: the store keeps no index). A store with landings and no
        index yet gets its snapshot 0 from a listing first."""
        listing = self._listing()
        if listing is None:
            return None
        landed_before = listing.empty and not listing.segments
        if landed_before and self.store.list_entries("landings/", limit=1).entries:
            self._bootstrap()
        return listing.top + 1

    def _bootstrap(self) -> None:
        """Snapshot 0: what a store written before the index shows (a listing of its markers'
        parts), so that its landings stay visible."""
        rows = [
            entry_rows(0, key.rsplit("/", 1)[-1].removesuffix(".parquet"), [(table, key, None)])
            for table, keys in listed_parts(self.store).items()
            for key in keys
        ]
        snapshot = pa.concat_tables([ROWS.empty_table(), *rows])
        self.store.create(_number_key(SNAPSHOTS, 0, ".parquet"), _encode(snapshot))

    def _fold(self, number: int) -> None:
        """Fold the entries up to `number`: into a segment, or at a snapshot's number into a
        snapshot of everything, then retire the segments and snapshots the one before holds."""
        if number % SNAPSHOT:
            entries = self._read([("entry", n) for n in range(number - SEGMENT + 1, number + 1)])
            self.store.put(_number_key(SEGMENTS, number, ".parquet"), _encode(entries))
            IndexMemo.keep(self.store.uri, "segment", number, entries)
            return
        listing = self._listing(below=number)
        plan = None if listing is None else listing.plan(upto=number)
        if listing is None or plan is None:
            # Not expected (numbers are dense and entries stay): the next snapshot's writer
            # folds these entries instead; readers read them meanwhile.
            log.warning(
                "store %s: part index entries before %d are missing", self.store.uri, number
            )
            return
        visible = self._visible(plan)
        self.store.put(_number_key(SNAPSHOTS, number, ".parquet"), _encode(visible))
        write_digests(self.store, number, visible, listing.base)
        if listing.base:
            # Segments up to the snapshot before: the listing above started after it.
            stale = [
                key
                for key in self.store.list(SEGMENTS)
                if (n := _number_of(key)) is not None and n <= listing.base
            ]
            stale += [
                _number_key(SNAPSHOTS, n, ".parquet") for n in listing.snapshots if n < listing.base
            ]
            stale += retired_digests(self.store, listing.base)
            self.store.delete_many(stale)

    # -- reading --

    def _listing(self, below: int | None = None) -> _Listing | None:
        """Every snapshot, the newest (below `below` if given), and the segments and entries
        after it: three listings, or one once this process has seen a snapshot (or none) of
        the store. None: the store keeps no index."""
        with self._lock:
            seen = self._bases.get(self.store.uri) if below is None else None
        listing = self._listed(below) if seen is None else self._listed_after(seen)
        if listing is not None and below is None:
            with self._lock:
                self._bases[self.store.uri] = -1 if listing.base is None else listing.base
            if listing.base is not None:
                IndexMemo.forget_through(self.store.uri, listing.base)
        return listing

    def _listed_after(self, seen: int) -> _Listing | None:
        """`_listing` in one listing of `index/` from the entries after snapshot `seen` (the
        newest this process saw; -1: none), which sort before every segment and snapshot: no
        snapshot before `seen` is newest, and entries are never removed."""
        start = _entry_key(max(seen, 0))
        listed = [entry.key for entry in self.store.list_entries(INDEX, start_after=start).entries]
        if UNINDEXED in listed:
            return None
        snapshots = _numbers(listed, SNAPSHOTS)
        base = max(snapshots, default=None)
        after = -1 if base is None else base
        segments = [n for n in _numbers(listed, SEGMENTS) if n > after]
        entries = [n for n in _numbers(listed, LOG) if n > after]
        return _Listing(snapshots, base, segments, entries, listings=1)

    def _listed(self, below: int | None) -> _Listing | None:
        listed = self.store.list(SNAPSHOTS)
        if UNINDEXED in listed:
            return None
        snapshots = _numbers(listed, SNAPSHOTS)
        base = max((n for n in snapshots if below is None or n < below), default=None)
        after = -1 if base is None else base

        def numbers(folder: str, start: str) -> list[int]:
            listed = self.store.list_entries(folder, start_after=start).entries
            return _numbers((entry.key for entry in listed), folder)

        segments = numbers(SEGMENTS, _number_key(SEGMENTS, after, ".parquet"))
        entries = numbers(LOG, _entry_key(max(after, 0)))
        return _Listing(snapshots, base, segments, [n for n in entries if n > after])

    def load(self, tables: Iterable[str] | None = None) -> IndexView | None:
        """Every visible part (of the `tables` named, or of all), from the newest snapshot,
        the segments after it and the entries after them; None when the store keeps no index
        (list its parts instead)."""
        wanted = None if tables is None else frozenset(tables)
        for _ in range(8):
            listing = self._listing()
            if listing is None or listing.empty:
                return None
            plan = listing.plan()
            if plan is None:
                continue  # an entry was being written as it was listed: list again
            try:
                rows = self._visible(plan, wanted)
            except FileNotFoundError:
                continue  # retired since listed: list again
            base = plan[0][1] if plan and plan[0][0] == "snapshot" else None
            with self._lock:
                # This process's first landing takes the number after those seen without
                # listing again (a number taken since is refused by its create: it moves on).
                self._next.setdefault(self.store.uri, listing.top + 1)
            return IndexView(rows, listing.listings + len(plan), wanted, base)
        raise IndexChanging(f"store {self.store.uri}: its part index kept changing while read")

    def _visible(
        self, plan: list[tuple[str, int]], wanted: frozenset[str] | None = None
    ) -> pa.Table:
        tables = self._read_each(plan)
        if plan and plan[0][0] == "snapshot":
            base, newer = tables[0], tables[1:]
        else:
            base, newer = ROWS.empty_table(), tables
        later = pa.concat_tables([ROWS.empty_table(), *newer])
        if wanted is not None:
            # Only the tables asked for are merged: a store of millions of parts merges the
            # few thousand of a query's tables, not all (what a compaction replaces is kept:
            # its rows name no table).
            names = pa.array(sorted(wanted), pa.string())
            base = base.filter(pc.is_in(base.column("table"), names))
            later = later.filter(
                pc.or_kleene(
                    pc.equal(later.column("role"), "replaces"),
                    pc.is_in(later.column("table"), names),
                )
            )
        return merged(base, later)

    def _read(self, plan: list[tuple[str, int]]) -> pa.Table:
        return pa.concat_tables([ROWS.empty_table(), *self._read_each(plan)])

    def _read_each(self, plan: list[tuple[str, int]]) -> list[pa.Table]:
        uri = self.store.uri

        def read(step: tuple[str, int]) -> pa.Table:
            kind, number = step
            kept = IndexMemo.get(uri, kind, number)
            if kept is not None:
                return kept
            if kind == "entry":
                body = json.loads(self.store.get(_entry_key(number)))
                parts = [(t, k, f) for t, k, f in body["parts"]]
                rows = entry_rows(number, body["name"], parts, body.get("replaces", []))
            else:
                folder = SNAPSHOTS if kind == "snapshot" else SEGMENTS
                rows = _decode(self.store.get(_number_key(folder, number, ".parquet")))
            IndexMemo.keep(uri, kind, number, rows)
            return rows

        if len(plan) <= 1:
            return [read(step) for step in plan]
        with ThreadPoolExecutor(max_workers=_READERS) as pool:
            return list(pool.map(read, plan))


os.register_at_fork(after_in_child=PartIndex._forked)
