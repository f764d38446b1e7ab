"""Claims on requests being asked, kept in the store, so that runs sharing a store and a model
pay for each request once: a request another run holds is waited for, never sent again.

Claims are taken per batch: the requests a process is about to send at one moment share one
numbered record (`claim_records`), taken, renewed and ended together, so a batch costs a few
store requests whatever its size. Deciding a batch: take the next number (a conditional
create), list the records, and hold each request that no live claim with a lower number holds
(one with a higher number was taken later, so its taker saw this one and leaves the request
to it). A request already answered is not held: finished records say what they answered, and
those since the run began are read, so an answer kept after the plan looked it up is found
without a look-up per request. A claim is a lease: its holder rewrites it every third of its
TTL, and one not rewritten for a TTL (or whose holder is seen dead on this machine) holds
nothing; what its batch may have answered before it died is checked in the response cache.

A `ClaimBook` is one process's claims on one endpoint's requests in one store, for one run,
on the gateway loop. Every store operation goes through `call_store` (a store failure stops
the run).
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any, TypeVar

from roadeval.environment import seconds_from_env
from roadeval.storage.store import Store, StoreError
from roadeval.tasks.cache.claim_records import ClaimLog, ClaimRecord, ClaimState, endpoint_folder
from roadeval.tasks.cache.claim_view import ClaimView
from roadeval.tasks.cache.responses import ResponseCache
from roadeval.tasks.cache.store_calls import call_store
from roadeval.tasks.calls.stopping import StopSignal
from roadeval.tasks.requests.freshness import run_start
from roadeval.tasks.requests.request import ModelCall

T = TypeVar("T")

DEFAULT_TTL_S = 30.0
DEFAULT_POLL_S = 0.25
# Requests one record holds at most.
MAX_BATCH = 500


def ttl_s() -> float:
    """How long a claim holds without renewal: ROADEVAL_CLAIM_TTL_S, else 30 s."""
    return seconds_from_env("ROADEVAL_CLAIM_TTL_S", DEFAULT_TTL_S)


def run_started(run_id: str) -> float | None:
    """When a run began (a POSIX time), from its id; None if it does not say."""
    started = run_start(run_id)
    return started.timestamp() if started is not None else None


@dataclass(frozen=True)
class Lease:
    """One request held by one of this book's claims."""

    key: str
    number: int


class Kind(StrEnum):
    LEASED = "leased"  # ask it, then `finish`
    ANSWERED = "answered"  # read its answer (`answer`, or the response cache)
    BUSY = "busy"  # another claim holds it: `wait`, then claim it again


@dataclass(frozen=True)
class Verdict:
    kind: Kind
    lease: Lease | None = None
    # The stored answer, when deciding read it from the response cache.
    answer: ModelCall | None = None


@dataclass
class _Mine:
    """One of this book's claims, while it holds requests."""

    number: int
    record: ClaimRecord
    asking: set[str] = field(default_factory=set)
    answered: set[str] = field(default_factory=set)
    over: bool = False
    # Writes of the record one at a time: a renewal landing after the end would undo it.
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


_BUSY = Verdict(Kind.BUSY)


class ClaimBook:
    """One process's claims on one endpoint's requests in one store, for one run."""

    def __init__(
        self,
        store: Store,
        folder: str,
        cache: ResponseCache,
        stop: StopSignal,
        started: float | None,
        ttl: float | None = None,
    ) -> None:
        self.store = store
        self.log = ClaimLog(store, folder)
        self.cache = cache
        self.stop = stop
        self.started = started
        self.host, self.pid = socket.gethostname(), os.getpid()
        self.owner = f"{self.host}/{self.pid}/{uuid.uuid4().hex[:8]}"
        self.ttl_s = ttl if ttl is not None else ttl_s()
        # A waiter looks again quickly at first, then less often, up to a few times a TTL.
        self.poll_s = min(DEFAULT_POLL_S, self.ttl_s / 4)
        self.max_poll_s = max(self.poll_s, min(2.0, self.ttl_s / 3))
        self._mine: dict[int, _Mine] = {}
        self.view = ClaimView(self.log, self._store, self.ttl_s, started, self._mine.keys)
        self._pending: list[tuple[str, bool, asyncio.Future[Verdict]]] = []
        self._deciding: asyncio.Task[None] | None = None
        self._watchers: dict[str, list[asyncio.Future[None]]] = {}
        self._watching: asyncio.Task[None] | None = None
        self._renewing: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Future[None]] = set()

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` in the background, kept until it is done."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _store(self, fn: Callable[..., T], *args: object) -> T:
        return await call_store(self.store, self.stop, fn, *args)

    def _recent(self, key: str) -> ModelCall | None:
        return self.cache.get(key, recent=True)

    # --- claiming -------------------------------------------------------------------------

    async def claim(self, key: str, *, trust_done: bool = True) -> Verdict:
        """Hold `key`, or say why not. Requests claimed at the same moment share one record.
        `trust_done=False`: a finished claim's word that it is answered is not taken (its
        answer could not be read), only a stored answer or another live claim stops it."""
        future: asyncio.Future[Verdict] = asyncio.get_running_loop().create_future()
        self._pending.append((key, trust_done, future))
        if self._deciding is None or self._deciding.done():
            self._deciding = asyncio.ensure_future(self._decide_pending())
        return await future

    async def claim_many(self, keys: Iterable[str]) -> dict[str, Verdict]:
        """`claim` for each of `keys`, in one record."""
        keys = list(dict.fromkeys(keys))
        verdicts = await asyncio.gather(*(self.claim(key) for key in keys))
        return dict(zip(keys, verdicts, strict=True))

    async def _decide_pending(self) -> None:
        # One batch at a time; what is claimed meanwhile makes the next.
        while self._pending:
            batch, self._pending = self._pending[:MAX_BATCH], self._pending[MAX_BATCH:]
            try:
                await self._decide(batch)
            except BaseException as exc:
                for _, _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                if not isinstance(exc, Exception):
                    raise

    async def _decide(self, batch: list[tuple[str, bool, asyncio.Future[Verdict]]]) -> None:
        futures: dict[str, list[asyncio.Future[Verdict]]] = {}
        trusted: dict[str, bool] = {}
        for key, trust, future in batch:
            futures.setdefault(key, []).append(future)
            trusted[key] = trusted.get(key, True) and trust
        if self.stop.requested:
            _deliver(futures, dict.fromkeys(futures, _BUSY), self)
            return
        keys = frozenset(futures)
        mine = _Mine(0, ClaimRecord(self.owner, self.host, self.pid, keys))
        mine.number = await self.view.take(mine.record)
        self._mine[mine.number] = mine
        self._ensure_renewing()
        try:
            verdicts = await self._verdicts(mine, trusted)
        except BaseException:
            mine.over = True  # the run is stopping (a store failure): nothing is sent
            self._mine.pop(mine.number, None)
            raise
        _deliver(futures, verdicts, self)

    async def _verdicts(self, mine: _Mine, trusted: dict[str, bool]) -> dict[str, Verdict]:
        """Each request of the new claim `mine`: held, answered, or another's."""
        keys = mine.record.keys
        await self._refresh()
        await self.view.reread(keys)
        verdicts: dict[str, Verdict] = {}
        check: list[str] = []
        complete = self.view.answers_known()
        for key in keys:
            if trusted[key] and key in self.view.answered:
                verdicts[key] = Verdict(Kind.ANSWERED)
            elif any(number < mine.number for number in self._holders(key)):
                verdicts[key] = _BUSY
            elif not complete or not trusted[key] or self.view.lapsed_on(key):
                check.append(key)  # answered by a claim whose end is not known: look
            else:
                verdicts[key] = Verdict(Kind.LEASED, Lease(key, mine.number))
        if check:
            stored = await asyncio.gather(*(self._store(self._recent, key) for key in check))
            for key, answer in zip(check, stored, strict=True):
                lease = Verdict(Kind.LEASED, Lease(key, mine.number))
                verdicts[key] = lease if answer is None else Verdict(Kind.ANSWERED, answer=answer)
        leased = frozenset(k for k, v in verdicts.items() if v.kind is Kind.LEASED)
        mine.asking = set(leased)
        if leased != keys:
            await self._narrow(mine, leased)
        return verdicts

    async def _narrow(self, mine: _Mine, keys: frozenset[str]) -> None:
        """The claim holds only `keys` now (the rest are answered or another's)."""
        async with mine.lock:
            if keys:
                mine.record = replace(mine.record, keys=keys)
            else:
                mine.over = True
                mine.record = replace(mine.record, keys=frozenset(), state=ClaimState.DONE)
            await self._store(self.log.write, mine.number, mine.record)
        if not keys:
            self._mine.pop(mine.number, None)
        self._wake_watchers()

    async def finish(self, lease: Lease, answered: bool) -> None:
        """The leased request was asked: its answer kept (`answered`) or not. The claim ends
        once every request it holds is finished: its record then says what it answered."""
        mine = self._mine.get(lease.number)
        if mine is None or lease.key not in mine.asking:
            return
        mine.asking.discard(lease.key)
        if answered:
            mine.answered.add(lease.key)
        if mine.asking or mine.over:
            return
        mine.over = True
        try:
            async with mine.lock:
                done = replace(
                    mine.record, state=ClaimState.DONE, answered=frozenset(mine.answered)
                )
                await self._store(self.log.write, mine.number, done)
        finally:
            self._mine.pop(mine.number, None)
        self.view.answered |= mine.answered
        self._wake_watchers()

    # --- what the others hold ---------------------------------------------------------------

    def _holders(self, key: str) -> list[int]:
        """Numbers of the live claims (this book's too) holding `key`."""
        mine = [number for number, claim in self._mine.items() if key in claim.asking]
        return mine + self.view.holders(key)

    async def _refresh(self) -> None:
        await self.view.refresh()
        self._wake_watchers()

    # --- waiting ----------------------------------------------------------------------------

    def _free(self, key: str) -> bool:
        return key in self.view.answered or not self._holders(key)

    async def wait(self, key: str) -> None:
        """Until no live claim holds `key` (it ended, answered or not, or lapsed), or the
        run stops."""
        if self._free(key) or self.stop.requested:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._watchers.setdefault(key, []).append(future)
        if self._watching is None or self._watching.done():
            self._watching = asyncio.ensure_future(self._watch())
        try:
            await future
        finally:
            waiting = self._watchers.get(key, [])
            if future in waiting:  # its waiter gave up (cancelled): watch no longer for it
                waiting.remove(future)
                if not waiting:
                    del self._watchers[key]

    async def _watch(self) -> None:
        delay = self.poll_s
        try:
            while self._watchers and not self.stop.requested:
                deadline = time.monotonic() + delay
                while not self.stop.requested and time.monotonic() < deadline:
                    await asyncio.sleep(min(0.1, delay))
                if self.stop.requested:
                    break
                delay = min(delay * 1.5, self.max_poll_s)
                await self._refresh()
                await self.view.reread(self._watchers)
                self._wake_watchers()
        finally:
            # Left with waiters only when the run stops or the store failed: they go on (and
            # see the stop).
            self._wake_all()

    def _wake_watchers(self) -> None:
        for key in [k for k in self._watchers if self._free(k)]:
            for future in self._watchers.pop(key):
                if not future.done():
                    future.set_result(None)

    def _wake_all(self) -> None:
        watchers, self._watchers = self._watchers, {}
        for futures in watchers.values():
            for future in futures:
                if not future.done():
                    future.set_result(None)

    # --- renewing ---------------------------------------------------------------------------

    def _ensure_renewing(self) -> None:
        if self._renewing is None or self._renewing.done():
            self._renewing = asyncio.ensure_future(self._renew())

    async def _renew(self) -> None:
        """Every held claim rewritten (the same bytes) every third of the TTL, by one task."""
        while self._mine:
            await asyncio.sleep(self.ttl_s / 3)
            for mine in list(self._mine.values()):
                async with mine.lock:
                    if mine.over or mine.number not in self._mine:
                        continue
                    try:
                        await self._store(self.log.write, mine.number, mine.record)
                    except StoreError:
                        return  # the store failed: the run is stopping (call_store asked it)


def _deliver(
    futures: dict[str, list[asyncio.Future[Verdict]]],
    verdicts: dict[str, Verdict],
    book: ClaimBook,
) -> None:
    """Each key's verdict to its first claimer; a second claimer of the same key in this
    process waits for the first. A lease nobody is left to use is finished at once."""
    for key, waiting in futures.items():
        verdict = verdicts[key]
        for n, future in enumerate(waiting):
            given = verdict if n == 0 or verdict.kind is not Kind.LEASED else _BUSY
            if future.done():  # its claimer gave up (cancelled)
                if given.lease is not None:
                    book.spawn(book.finish(given.lease, answered=False))
                continue
            future.set_result(given)


_BOOKS: dict[tuple[str, str, str, datetime | None], ClaimBook] = {}
_BOOKS_LOCK = threading.Lock()


def claim_book(
    store: Store,
    cache: ResponseCache,
    model: str,
    api_base: str | None,
    run_id: str,
    stop: StopSignal,
    ttl: float | None = None,
) -> ClaimBook:
    """The run's book of claims on one endpoint's requests in `store`, in this process: one
    for every shard and client that asks them, so their requests share records (per age of
    answer they may reuse: two panel entries of one endpoint may reuse answers of different
    ages)."""
    folder = endpoint_folder(model, api_base)
    key = (store.uri, folder, run_id, cache.fresh_since)
    with _BOOKS_LOCK:
        book = _BOOKS.get(key)
        if book is None:
            book = _BOOKS[key] = ClaimBook(store, folder, cache, stop, run_started(run_id), ttl)
        return book
