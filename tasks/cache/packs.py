"""Answers kept many to an object (packs), and the catalogue a process reads them by.

On a remote store every object written is a request, so a process keeps its answers in packs
(`journal`): `cache/packs/<journal>/<n>.jsonl`, one cache entry a line, written as answers
arrive, each pack holding what arrived while the one before was being written. A journal says
it exists when it writes its first pack (`cache/journals/<journal>.open`) and, when its process
closes it, where every answer of its packs is (`cache/journals/<journal>.json`, folded with
others as they accumulate: `pack_indexes`), so a reader finds closed journals' answers in a few
reads and lists and reads only the packs of journals still open (writing now, or whose process
died).

A `PackCatalogue` is one process's view of a store's packs: which pack holds which request,
loaded on first use and brought up to date when an answer is looked for and not found.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass

from roadeval.storage.part_cache import keep_part, part_bytes
from roadeval.storage.store import Store
from roadeval.tasks.cache.pack_indexes import INDEX, JOURNALS, OPENED, AnswerIndex, index_name

_log = logging.getLogger(__name__)

PACKS = "cache/packs/"
# Listings of the journals in one refresh at most, when indexes are folded away under it.
_LISTINGS = 3


def pack_key(journal: str, number: int) -> str:
    return f"{PACKS}{journal}/{number:06d}.jsonl"


def pack_body(entries: Iterable[bytes]) -> tuple[bytes, list[tuple[int, int]]]:
    """Cache entries (one JSON object each, no newline inside) as one pack, and where each
    entry lies in it (offset, length)."""
    spans: list[tuple[int, int]] = []
    parts: list[bytes] = []
    offset = 0
    for entry in entries:
        spans.append((offset, len(entry)))
        parts.append(entry)
        offset += len(entry) + 1
    parts.append(b"")
    return b"\n".join(parts), spans


_NAMED_KEY = re.compile(rb'"request_key":\s*"([^"]+)"')


def pack_entries(data: bytes) -> list[tuple[str, int, int]]:
    """(request key, offset, length) of each entry of a pack. A line that does not read as an
    entry but still names its request is kept, so that a look-up reads it and reports it
    corrupt (a miss, asked again); one that names none is skipped."""
    found: list[tuple[str, int, int]] = []
    offset = 0
    for line in data.split(b"\n"):
        if line:
            try:
                key = json.loads(line)["request_key"]
            except (ValueError, KeyError, TypeError):
                named = _NAMED_KEY.search(line)
                key = named.group(1).decode(errors="replace") if named else None
            if isinstance(key, str):
                found.append((key, offset, len(line)))
        offset += len(line) + 1
    return found


def journal_index(journal: str, packs: dict[int, list[tuple[str, int, int]]]) -> AnswerIndex:
    """A closed journal's index: per pack number, its entries (request key, offset, length)."""
    numbers = sorted(packs)
    entries = tuple(
        (key, position, offset, length)
        for position, number in enumerate(numbers)
        for key, offset, length in packs[number]
    )
    keys = tuple(pack_key(journal, number) for number in numbers)
    return AnswerIndex((journal,), keys, entries)


@dataclass(frozen=True, slots=True)
class Spot:
    """Where an answer is: a pack and the span of its entry (one per answer a process has
    read of: slots keep it small)."""

    pack: str
    offset: int
    length: int


def digest(request_key: str) -> bytes | str:
    """A request key as bytes when it is a lowercase hex digest, as request keys are (half the
    memory of its text); any other key as it is, so that `request_keys` gives it back."""
    try:
        packed = bytes.fromhex(request_key)
    except ValueError:
        return request_key
    return packed if packed.hex() == request_key else request_key


class PackCatalogue:
    """Which pack of `store` holds which request, as far as this process has read them."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._spots: dict[bytes | str, Spot] = {}
        self._indexes: set[str] = set()  # indexes read (by name)
        self._covered: set[str] = set()  # journals an index read holds whole
        self._read: dict[str, str] = {}  # open journal -> its last pack read
        self._lock = threading.Lock()
        self._refreshing = threading.Lock()
        self._loaded = False
        self._last_refresh = float("-inf")  # monotonic time the last refresh began

    def find(self, request_key: str) -> Spot | None:
        if not self._loaded:
            with self._refreshing:
                if not self._loaded:  # one first reading, however many threads look at once
                    self._refresh()
        with self._lock:
            return self._spots.get(digest(request_key))

    def __contains__(self, request_key: str) -> bool:
        return self.find(request_key) is not None

    def refresh(self, looked_at: float | None = None) -> None:
        """Read what was packed since the last refresh: new journals' indexes, and the new
        packs of journals still open. `looked_at` (monotonic): a refresh begun since then
        already saw what was packed before it, so none is made."""
        with self._refreshing:
            if looked_at is None or self._last_refresh < looked_at:
                self._refresh()

    def _refresh(self) -> None:
        self._last_refresh = time.monotonic()
        for _ in range(_LISTINGS):
            names = {key[len(JOURNALS) :] for key in self.store.list(JOURNALS)}
            unread = sorted(
                name[: -len(INDEX)]
                for name in names
                if name.endswith(INDEX) and name[: -len(INDEX)] not in self._indexes
            )
            if all([self._read_index(name) for name in unread]):
                break  # else one was folded away meanwhile: the listing shows its successor
        for name in sorted(names):
            journal = name[: -len(OPENED)]
            if name.endswith(OPENED) and journal not in self._covered:
                self._read_open(journal)
        self._loaded = True

    def _read_index(self, name: str) -> bool:
        """Read the index `name`; False if it is gone (folded into another)."""
        try:
            index = AnswerIndex.from_json(self.store.get(index_name(name)))
        except FileNotFoundError:
            return False
        except ValueError as exc:
            # Its journal's packs are read instead (a merged index's journals are lost to
            # look-ups: their answers are asked again).
            _log.warning("%s: %s", self.store.location(index_name(name)), exc)
            self._indexes.add(name)
            return True
        spots = {
            digest(key): Spot(index.packs[pack], offset, length)
            for key, pack, offset, length in index.entries
        }
        with self._lock:
            _keep_latest(self._spots, spots)
        self._indexes.add(name)
        self._covered.update(index.journals)
        return True

    def _read_open(self, journal: str) -> None:
        """The packs of a journal with no index, since the last one read here."""
        folder = f"{PACKS}{journal}/"
        after = self._read.get(journal)
        while True:
            listed = self.store.list_entries(folder, start_after=after, limit=1000)
            for entry in listed.entries:
                try:
                    data = self.store.get(entry.key)
                except FileNotFoundError:
                    continue
                keep_part(self.store, entry.key, data, written=False)
                spots = {
                    digest(key): Spot(entry.key, offset, length)
                    for key, offset, length in pack_entries(data)
                }
                with self._lock:
                    _keep_latest(self._spots, spots)
                after = self._read[journal] = entry.key
            if not listed.truncated:
                return

    def request_keys(self) -> set[str]:
        """The requests answered in the packs read here."""
        with self._lock:
            return {found.hex() if isinstance(found, bytes) else found for found in self._spots}

    def answered(self) -> int:
        """How many requests the packs read here answer."""
        with self._lock:
            return len(self._spots)

    def mine(self, journal: str) -> None:
        """`journal` is this process's: what it packs is `add`ed here, never read back."""
        with self._refreshing:
            self._covered.add(journal)

    def add(self, request_key: str, spot: Spot) -> None:
        """An answer this process packed."""
        with self._lock:
            self._spots[digest(request_key)] = spot

    def entry(self, spot: Spot) -> bytes:
        """The cache entry at `spot` (its pack read once, then kept with the parts)."""
        data = part_bytes(self.store, spot.pack)
        return data[spot.offset : spot.offset + spot.length]


def _keep_latest(spots: dict[bytes | str, Spot], found: dict[bytes | str, Spot]) -> None:
    """Add `found` to `spots`; a request in both keeps the spot in the later pack. A request
    asked again (its answer grew older than a model's `reuse_for`) has an answer in each, and
    the later is the one to reuse, in whatever order the indexes are read (a folded index of
    old journals is read after a new journal's own). Pack keys sort as their journals began
    (a journal's name starts with its UTC start), then by number."""
    kept = [(key, spots[key]) for key in spots.keys() & found.keys()]
    spots.update(found)
    for key, spot in kept:
        if spot.pack > spots[key].pack:
            spots[key] = spot


_CATALOGUES: dict[str, PackCatalogue] = {}
_CATALOGUES_LOCK = threading.Lock()


def pack_catalogue(store: Store) -> PackCatalogue:
    """This process's catalogue of `store`'s packs."""
    with _CATALOGUES_LOCK:
        found = _CATALOGUES.get(store.uri)
        if found is None:
            found = _CATALOGUES[store.uri] = PackCatalogue(store)
        return found


def forget_catalogues() -> None:
    """Drop every catalogue (a test that deletes a store's objects behind its back)."""
    with _CATALOGUES_LOCK:
        _CATALOGUES.clear()
