"""What the claim records of one endpoint say, as one process last listed them: who holds which
requests (and whether they still live), what ended claims answered, and the next free number.

Records at or below the floor are over for good and are not listed again. A record is read once
when it appears, and again when a listing shows it rewritten while it held requests (renewed,
narrowed or ended): so an ended claim is known as ended at the next listing, the floor passes
it, and a listing covers only the claims in progress, however long the run. A record not
rewritten for a TTL is over whatever it said last; the floor passes it, and the requests it
held when last read are looked up in the response cache should they be claimed again (it may
have answered them), so an ended claim costs nothing more when nobody wants what it held.
Which records hold a request is indexed by request, so a decision costs what its own requests
cost, not what every claim in progress holds.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any

from roadeval.storage.liveness import writer_alive
from roadeval.storage.store import describe_store_error
from roadeval.tasks.cache.claim_records import RETENTION_S, ClaimLog, ClaimRecord, ClaimState

# How far the clocks of the machines sharing a store may differ: records are read that much
# further back than the run's start.
CLOCK_MARGIN_S = 60.0

StoreCall = Callable[..., Awaitable[Any]]

_log = logging.getLogger(__name__)


@dataclass
class Seen:
    """Another claimer's record as last read, and when it was last written (store's clock)."""

    etag: str
    modified: float
    record: ClaimRecord | None  # None: unreadable, it protects nothing
    # Rewritten since it was read (renewed, narrowed or ended).
    stale: bool = False


class ClaimView:
    """The records of one endpoint's claims, listed from this process. `mine` are the numbers
    of this process's own live claims (never read back here)."""

    def __init__(
        self,
        log: ClaimLog,
        store: StoreCall,
        ttl_s: float,
        started: float | None,
        mine: Callable[[], Collection[int]],
    ) -> None:
        self.log = log
        self._store = store
        self.ttl_s = ttl_s
        self.started = started
        self._mine = mine
        self.answered: set[str] = set()  # requests answered by claims that ended since `started`
        self.lapsed: set[str] = set()  # requests of lapsed claims the floor went past
        self.seen: dict[int, Seen] = {}
        # Per request, the seen records whose last read held it (state HELD).
        self._holding: dict[str, set[int]] = {}
        self.next: int | None = None  # the number to take next
        self.floor: int | None = None  # records at or below it are over; None: none listed yet
        self.listed_at = 0.0  # monotonic time of the last listing
        self.now = 0.0  # the store's clock at the last listing
        self._refreshing = asyncio.Lock()
        self._sweeping: asyncio.Future[None] | None = None

    def answers_known(self) -> bool:
        """Whether every answer kept since this run began is in a record read here (else
        the response cache is asked before a request is sent)."""
        if self.started is None:
            return False
        return time.time() - self.started < RETENTION_S - 2 * CLOCK_MARGIN_S

    def live(self, seen: Seen) -> bool:
        record = seen.record
        if record is None or record.state is ClaimState.DONE:
            return False
        if self.now - seen.modified >= self.ttl_s:
            return False
        return writer_alive(record.host, record.pid) is not False

    def holders(self, key: str) -> list[int]:
        """Numbers of the others' live claims holding `key`."""
        return [n for n in self._holding.get(key, ()) if self.live(self.seen[n])]

    def lapsed_on(self, key: str) -> bool:
        """Whether a claim that lapsed (not renewed, or its writer died) held `key`."""
        return key in self.lapsed or any(
            not self.live(self.seen[n]) for n in self._holding.get(key, ())
        )

    def _set_record(self, number: int, seen: Seen, record: ClaimRecord | None) -> None:
        """`seen`'s record is `record` now (read, or forgotten): the index follows."""
        old = seen.record
        if old is not None and old.state is ClaimState.HELD:
            for key in old.keys:
                numbers = self._holding.get(key)
                if numbers is not None:
                    numbers.discard(number)
                    if not numbers:
                        del self._holding[key]
        seen.record = record
        if record is not None and record.state is ClaimState.HELD:
            for key in record.keys:
                self._holding.setdefault(key, set()).add(number)

    async def take(self, record: ClaimRecord) -> int:
        """The next free number, taken for `record` (a conditional create)."""
        if self.next is None or time.monotonic() - self.listed_at > RETENTION_S / 2:
            await self.refresh()  # a number known that long ago may have been swept since
        missed = 0
        while True:
            assert self.next is not None
            number = self.next
            taken = await self._store(self.log.create, number, record)
            self.next = number + 1
            if taken:
                return number
            missed += 1
            if missed % 4 == 0:
                await self.refresh()  # others are taking numbers fast: start from the top

    async def refresh(self) -> None:
        """List the records above the floor; read those new since last listed."""
        async with self._refreshing:
            first = self.floor is None
            found, listed = await self._store(self.log.listing, self.floor)
            self.now, self.listed_at = listed.now, time.monotonic()
            top = max((item.number for item in found), default=self.floor or 0)
            self.next = max(self.next or 1, top + 1)
            # On the first look, older records are over: ended before this run, or lapsed.
            skip_before = listed.now - self.ttl_s - CLOCK_MARGIN_S
            if self.started is not None:
                skip_before = min(skip_before, self.started - CLOCK_MARGIN_S)
            mine = self._mine()
            to_read: list[int] = []
            swept: list[int] = []
            for item in found:
                number, entry = item.number, item.entry
                if number in mine:
                    continue
                if entry.modified < listed.now - RETENTION_S and number != top:
                    swept.append(number)  # the top is kept: numbers are never taken twice
                    continue
                seen = self.seen.get(number)
                if seen is not None:
                    seen.modified = entry.modified
                    if seen.etag != entry.etag:
                        seen.etag, seen.stale = entry.etag, True
                        if seen.record is not None and seen.record.state is ClaimState.HELD:
                            # Renewed, narrowed or ended: read, so that an ended claim is
                            # known as such and the floor can pass it.
                            to_read.append(number)
                elif first and entry.modified < skip_before:
                    # Over (ended before this run, or lapsed): kept unread, never read later.
                    self.seen[number] = Seen(entry.etag, entry.modified, None)
                else:
                    self.seen[number] = Seen(entry.etag, entry.modified, None, stale=True)
                    to_read.append(number)
            await self._read(to_read)
            if swept and (self._sweeping is None or self._sweeping.done()):
                self._sweeping = asyncio.ensure_future(self._sweep(swept))
            self._advance_floor(top, mine)

    async def _sweep(self, numbers: list[int]) -> None:
        """Delete records over for longer than the retention, in a thread, off the claim that
        listed them: a day-old store holds thousands, and a claim must not wait for them.
        A record left behind (a failure, or the process ended first) is swept next time."""
        try:
            await asyncio.to_thread(self.log.sweep, numbers)
        except Exception as exc:
            reason = describe_store_error(self.log.store.uri, exc)
            _log.warning("old claim records were not swept: %s", reason)

    async def reread(self, keys: Iterable[str]) -> None:
        """Read again the records rewritten since read that held any of `keys`."""
        numbers = {n for key in keys for n in self._holding.get(key, ()) if self.seen[n].stale}
        await self._read(sorted(numbers))

    async def _read(self, numbers: list[int]) -> None:
        """Read the records `numbers` (listed before): what they hold, or what they answered."""
        records = await asyncio.gather(*(self._store(self.log.read, n) for n in numbers))
        for number, record in zip(numbers, records, strict=True):
            seen = self.seen.get(number)
            if seen is None:
                continue  # the floor went past it meanwhile
            self._set_record(number, seen, record)
            seen.stale = False
            if record is not None and record.state is ClaimState.DONE:
                self.answered |= record.answered

    def _advance_floor(self, top: int, mine: Collection[int]) -> None:
        """Past every record that is over (ended or lapsed); a lapsed claim's late renewal
        does not bring it back."""
        live = [n for n, seen in self.seen.items() if self.live(seen)]
        floor = min([*live, *mine], default=top + 1) - 1
        self.floor = max(self.floor or 0, floor)
        for number in [n for n in self.seen if n <= self.floor]:
            seen = self.seen.pop(number)
            record = seen.record
            if record is not None and record.state is ClaimState.HELD:
                self.lapsed |= record.keys  # what it may have kept is looked up
            self._set_record(number, seen, None)
