"""Responses stored in the object store under their request key: a journal and a cache at once.

Each successful answer is written the moment it arrives (its asker waits for it), so a crashed
run loses only the calls in flight, and any later run with the same request pays for nothing
twice. A folder keeps an entry per answer (`cache/responses/<xx>/<key>.json`); a remote store,
where each object costs a request, keeps them in packs (`journal`, `packs`), and both are read.
An entry that cannot be read back (truncated, emptied, edited by hand) is a miss that is
reported, never a crash.

On a remote store a run's plans are answered from a listing of the cache (`StoredKeys`) where
it reaches, rather than by a GET per look-up: an answer kept after the listing (by another run,
or another process of this one) is found by the run's claims, which read what every claim since
the run began answered (see `claims`). So a listing serves one run, never one begun after it.

A dry run asks nothing, so nothing it plans can be answered while it plans: it lists the cache
once (`AnsweredKeys`) on a folder too, and looks its requests up there, a set membership each,
instead of a missing file each (millions of them at `samples: 100`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

from roadeval.storage.store import Store
from roadeval.tasks.cache.journal import journal_for
from roadeval.tasks.cache.packs import PackCatalogue, Spot, digest, pack_catalogue
from roadeval.tasks.cache.store_calls import call_store
from roadeval.tasks.calls.stopping import StopSignal
from roadeval.tasks.requests.freshness import is_fresh
from roadeval.tasks.requests.request import CorruptCacheEntry, ModelCall, ModelRequest


@dataclass(frozen=True)
class CorruptEntry:
    """A cache entry that was ignored, and why; listed in the run's manifest."""

    request_key: str
    location: str
    reason: str

    def __str__(self) -> str:
        return f"{self.location}: {self.reason}"


PREFIX = "cache/responses/"
# A page of the listing for this many look-ups it could not answer: at worst a tenth more
# requests than a GET per look-up (a large cache), at best one request for a whole plan.
LOOKUPS_PER_PAGE = 10
PAGE = 1000


@dataclass
class StoredKeys:
    """The cache's keys as far as it has been listed, in order: a key at or before the last
    one listed is stored or not as the listing said; one past it, nobody knows yet. The
    listing goes on a page at a time as look-ups need it."""

    store: Store
    digests: set[bytes | str] = field(default_factory=set)
    after: str | None = None  # the last key listed
    complete: bool = False
    owed: int = LOOKUPS_PER_PAGE  # look-ups since the last page (the first lists at once)
    lock: threading.Lock = field(default_factory=threading.Lock)
    begun: float = field(default_factory=time.monotonic)
    packs_read: bool = False

    def packs(self) -> PackCatalogue:
        """The store's packs, read since this listing began (once per listing: a process's
        catalogue may be older than the run)."""
        catalogue = pack_catalogue(self.store)
        if not self.packs_read:
            catalogue.refresh(self.begun)
            self.packs_read = True
        return catalogue

    def knows(self, key: str) -> bool | None:
        """Whether the cache key `key` was listed (True), was not where it would have been
        (False), or lies past the listing (None)."""
        with self.lock:
            if self.owed >= LOOKUPS_PER_PAGE and not self.complete:
                self._list_page()
            if _digest(key) in self.digests:
                return True
            if self.complete or (self.after is not None and key <= self.after):
                return False
            self.owed += 1
            return None

    def add(self, key: str) -> None:
        with self.lock:
            self.digests.add(_digest(key))

    def holds_none(self) -> bool:
        """Whether the cache, listed whole, held no entry and its packs no answer."""
        with self.lock:
            if self.after is None and not self.complete:
                self._list_page()
            listed_none = self.complete and not self.digests
        return listed_none and not self.packs().answered()

    def _list_page(self) -> None:
        self.owed = 0
        listed = self.store.list_entries(PREFIX, start_after=self.after, limit=PAGE)
        self.digests.update(_digest(entry.key) for entry in listed.entries)
        if listed.entries:
            self.after = listed.entries[-1].key
        self.complete = not listed.truncated


def _request_key(key: str) -> str:
    """The request key a cache entry's key names (`cache/responses/<xx>/<key>.json`)."""
    return key.rsplit("/", 1)[-1].removesuffix(".json")


def _digest(key: str) -> bytes | str:
    """A cache entry's key as its request key's `digest` (bytes: half the memory of the text)."""
    return digest(_request_key(key))


def stored_request_keys(store: Store) -> set[str]:
    """Every request `store`'s cache answers, as the store says now: its entries and what its
    packs hold."""
    entries = {_request_key(key) for key in store.list(PREFIX)}
    catalogue = PackCatalogue(store)
    catalogue.refresh()
    return entries | catalogue.request_keys()


@dataclass(frozen=True)
class AnsweredKeys:
    """The requests a store's cache answered when a dry run listed it, once: its entries and
    what its packs hold, as digests. A key outside it has no answer for the dry run; one in
    it is still read, so an entry that does not read back is a miss, as for the run."""

    digests: frozenset[bytes | str]

    @classmethod
    def listed(cls, store: Store) -> AnsweredKeys:
        """`store`'s answers now (its packs read again first)."""
        catalogue = pack_catalogue(store)
        catalogue.refresh()
        entries = {_digest(key) for key in store.list(PREFIX)}
        return cls(frozenset(entries | {digest(key) for key in catalogue.request_keys()}))


# Per store, the listing of the run whose plans use it (the latest run in this process).
_STORED: dict[str, tuple[str, StoredKeys]] = {}
_ANSWERED: dict[str, tuple[str, AnsweredKeys]] = {}
_STORED_LOCK = threading.Lock()


def stored_keys(store: Store, run_id: str) -> StoredKeys:
    """The run's listing of `store`'s cache in this process, shared by all its plans."""
    with _STORED_LOCK:
        found = _STORED.get(store.uri)
        if found is None or found[0] != run_id:
            found = _STORED[store.uri] = (run_id, StoredKeys(store))
        return found[1]


def answered_keys(store: Store, run_id: str) -> AnsweredKeys:
    """A dry run's one listing of `store`'s cache in this process, shared by all its plans
    (listed under the lock: its planners wait for one listing rather than make several)."""
    with _STORED_LOCK:
        found = _ANSWERED.get(store.uri)
        if found is None or found[0] != run_id:
            found = _ANSWERED[store.uri] = (run_id, AnsweredKeys.listed(store))
        return found[1]


@dataclass(frozen=True)
class Stored:
    """What the store holds for a request, as a look-up sees it: an answer that may be reused
    (`answer`), or else the one passed over for being older than the model's `reuse_for`
    (`stale`); neither when it holds none."""

    answer: ModelCall | None = None
    stale: ModelCall | None = None


class ResponseCache:
    """The answers `store` keeps. With `run_id`, a plan of that run: look-ups on a remote
    store are answered from the run's listing where it reaches, and a dry run's (`counted`)
    on a folder from its one listing (see the module). With `fresh_since`, as one model of
    the run sees them: an answer bought before then is not reused (`freshness`)."""

    def __init__(
        self,
        store: Store,
        run_id: str | None = None,
        *,
        fresh_since: datetime | None = None,
        counted: bool = False,
    ) -> None:
        self.store = store
        self.run_id = run_id
        self.fresh_since = fresh_since
        self.counted = counted
        self._corrupt: dict[str, CorruptEntry] = {}
        self._lock = threading.Lock()
        # A folder's look-ups cost a syscall each: no listing there, but for a dry run, which
        # looks up every sample of every item and keeps nothing.
        listed = run_id is not None and not store.runs_inline
        self._listed = stored_keys(store, run_id) if listed and run_id else None
        once = counted and run_id is not None and store.runs_inline
        self._answered = answered_keys(store, run_id) if once and run_id else None
        self._made = time.monotonic()
        self._packs_read = False

    def as_of(self, fresh_since: datetime | None) -> ResponseCache:
        """The same store's answers for the same run, reused only if bought since
        `fresh_since` (None: whenever)."""
        return ResponseCache(self.store, self.run_id, fresh_since=fresh_since, counted=self.counted)

    @property
    def corrupt(self) -> list[CorruptEntry]:
        """Entries found unreadable so far, each once however often it was looked up."""
        with self._lock:
            return list(self._corrupt.values())

    @staticmethod
    def key(request_key: str) -> str:
        return f"{PREFIX}{request_key[:2]}/{request_key}.json"

    def get(self, request_key: str, *, recent: bool = False) -> ModelCall | None:
        """The stored answer to `request_key` that may be reused, read from the store now.
        `recent`: it may have been packed since this process last read the store's packs (a
        claim says it was answered), so they are read again before it is called missing."""
        return self.find(request_key, recent=recent).answer

    def find(self, request_key: str, *, recent: bool = False) -> Stored:
        """`get`, saying too which stored answer was passed over as too old."""
        stale: ModelCall | None = None
        for answer in self._candidates(request_key, recent):
            if is_fresh(answer.answered_at, self.fresh_since):
                return Stored(answer)
            stale = stale or answer
        return Stored(stale=stale)

    def _candidates(self, request_key: str, recent: bool) -> Iterator[ModelCall]:
        """The store's answers to `request_key`, read as far as they are wanted: its pack's,
        then its own entry's, then (`recent`, on a remote store) that of a pack written since
        the packs were last read here. A request asked again after its answer grew old has
        two: the later pack's wins where both are read (`PackCatalogue`)."""
        looked_at = time.monotonic()
        catalogue = self._packs()
        spot = catalogue.find(request_key)
        if spot is not None:
            yield from self._at(catalogue, spot, request_key)
        key = self.key(request_key)
        # A remote store's entries are few (its answers are packed): where its listing says
        # there is none, passing over a pack's answer costs no GET.
        listed = self._listed
        skip = spot is not None and listed is not None and listed.knows(key) is False
        data: bytes | None = None
        if not skip:
            try:
                data = self.store.get(key)
            except FileNotFoundError:
                data = None
        if data is not None:
            answer = self._read(data, request_key, self.store.location(key))
            if answer is not None:
                yield answer
        if not recent or self.store.runs_inline:
            return
        catalogue.refresh(looked_at)
        newer = catalogue.find(request_key)
        if newer is not None and newer != spot:
            yield from self._at(catalogue, newer, request_key)

    def _at(self, catalogue: PackCatalogue, spot: Spot, request_key: str) -> Iterator[ModelCall]:
        try:
            data = catalogue.entry(spot)
        except FileNotFoundError:
            return
        if (answer := self._read(data, request_key, self.store.location(spot.pack))) is not None:
            yield answer

    def _packs(self) -> PackCatalogue:
        """The store's packs as read since this run's listing began (a process may run many
        runs, and its catalogue be older than this one), or since this cache was made."""
        if self._listed is not None:
            return self._listed.packs()
        catalogue = pack_catalogue(self.store)
        if not self._packs_read:
            catalogue.refresh(self._made)
            self._packs_read = True
        return catalogue

    def _read(self, data: bytes, request_key: str, location: str) -> ModelCall | None:
        try:
            return ModelCall.from_cache(data, request_key)
        except CorruptCacheEntry as exc:
            with self._lock:
                entry = CorruptEntry(request_key, location, str(exc))
                self._corrupt.setdefault(request_key, entry)
            return None

    def lookup(self, request: ModelRequest) -> Stored:
        """What the store holds for `request` as a plan sees it (`lookup_key` of its key,
        which hashes the request first, its image bytes included)."""
        return self.lookup_key(request.key)

    def lookup_key(self, request_key: str) -> Stored:
        """What the store holds for the request of `request_key` as a plan sees it: on a
        remote store, as the listing of the cache (and of its packs) says where it reaches
        (what was kept since is the claims' to find); for a dry run on a folder, as its one
        listing says."""
        if self._answered is not None and digest(request_key) not in self._answered.digests:
            return Stored()
        if self._listed is not None and self._listed_absent(request_key, self._listed):
            return Stored()
        return self.find(request_key)

    def holds_none(self) -> bool:
        """Whether the cache is known to hold no answer at all (from a listing of it whole):
        then no look-up can find one, and a dry run need not make each sample's key."""
        if self._answered is not None:
            return not self._answered.digests
        if self._listed is not None:
            return self._listed.holds_none()
        return False

    def _listed_absent(self, request_key: str, listed: StoredKeys) -> bool:
        """Neither in a pack read here, nor where the listing of entries says it would be."""
        if request_key in listed.packs():
            return False
        return listed.knows(self.key(request_key)) is False

    def put(self, response: ModelCall) -> None:
        """Keep a successful answer as an entry of its own; errors are not cached, so the next
        run asks again."""
        if response.ok:
            key = self.key(response.request_key)
            self.store.put(key, response.to_cache())
            if self._listed is not None:
                self._listed.add(key)

    async def keep(self, response: ModelCall, stop: StopSignal) -> None:
        """`put`, from the event loop where answers arrive: on a remote store into this
        process's journal (a pack with the answers arriving with it). Returns once it is kept;
        a store failure stops the run (`call_store`)."""
        if not response.ok:
            return
        if self.store.runs_inline:
            await call_store(self.store, stop, self.put, response)
            return
        await journal_for(self.store).keep(response.request_key, response.to_cache(), stop)
