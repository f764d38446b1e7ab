"""`mode: batch`: a model's unanswered requests grouped into provider batches, submitted, polled,
and their answers kept and returned as if each had been asked online.

One Batcher per model client, on the gateway loop, so that every shard's requests join the same
batches. A batch is submitted when it holds `batch_size` requests, or when no request has
arrived for `QUIET_S` (every shard's first attempts are queued by then; re-asks form a later
batch). Before its first poll a batch is recorded in the store (`batch_records`): a later run
asking any of its requests polls that batch instead of paying for them again. Its requests are
claimed (`claims`) from before the records are read until the batch's record is written, so
two runs submitting at the same instant never both submit one request: the second waits for
the first's record, then polls that batch.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, TypeVar

from roadeval.tasks.batch.api import (
    ENDED_BADLY,
    FINISHED,
    BatchApi,
    Slot,
    batch_error,
    read_line,
)
from roadeval.tasks.batch.claiming import SubmitClaims
from roadeval.tasks.batch.creates import BatchCreates
from roadeval.tasks.batch.records import BatchRecord, BatchRecords, BatchState
from roadeval.tasks.cache.responses import ResponseCache
from roadeval.tasks.cache.store_calls import call_store
from roadeval.tasks.calls.budget import BudgetExhausted, Reservation
from roadeval.tasks.calls.errors import classify
from roadeval.tasks.calls.gateway import CallOutcome, ModelClient
from roadeval.tasks.requests.request import MAY_BE_BILLED, ErrorKind, ModelCall, ModelRequest

T = TypeVar("T")

# No new request for this long: every shard's first attempts are in; submit what is queued.
QUIET_S = 0.3
# How often a waiting poll looks at the run's stop.
STOP_CHECK_S = 0.1

Waiter = tuple[ModelRequest, "asyncio.Future[CallOutcome]"]

_BATCHERS: weakref.WeakKeyDictionary[ModelClient, Batcher] = weakref.WeakKeyDictionary()


def batcher_for(client: ModelClient, cache: ResponseCache) -> Batcher:
    """The client's batcher (made on first use; call on the gateway loop)."""
    batcher = _BATCHERS.get(client)
    if batcher is None:
        batcher = _BATCHERS[client] = Batcher(client, cache)
    elif batcher.cache.store.uri != cache.store.uri:
        raise ValueError(f"model {client.spec.label}: one batcher cannot serve two stores")
    return batcher


class Batcher:
    """Groups one model's requests into batches and answers each request from its batch.

    Every request waiting for an answer is in `_waiters` under its key, whether it is queued,
    in a batch this run submitted, or in a pending batch another run left behind."""

    def __init__(self, client: ModelClient, cache: ResponseCache) -> None:
        self.client = client
        self.cache = cache
        self.api = BatchApi(client)
        self.records = BatchRecords(cache.store, client.spec.model, client.api_base)
        self.creates = BatchCreates(self.api, self.records, self._store, self._sleep_or_stop)
        self._loaded = False
        self._load_lock = asyncio.Lock()
        self._seen: set[str] = set()  # record keys already read
        self._in_batch: dict[str, BatchRecord] = {}  # request key -> its pending batch
        self._answered: dict[str, ModelCall] = {}  # answers that came back in this process
        self._waiters: dict[str, list[Waiter]] = {}
        self._queued: list[str] = []  # keys waiting for the next batch, in arrival order
        self._reserved: dict[str, Reservation | None] = {}
        self._polling: set[str] = set()  # batch ids being polled
        self._tasks: set[asyncio.Task[None]] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._claims = SubmitClaims(client, cache)

    async def submit(self, request: ModelRequest) -> CallOutcome:
        """The request's outcome, from the batch it joins (or the pending batch holding it)."""
        await self._load_once()
        key = request.key
        if key in self._answered:
            return CallOutcome([_reused(self._answered[key], request)])
        future: asyncio.Future[CallOutcome] = asyncio.get_running_loop().create_future()
        known = key in self._waiters
        self._waiters.setdefault(key, []).append((request, future))
        record = self._in_batch.get(key)
        if record is not None:
            self._ensure_polling(record, request)
        elif not known:
            self._queued.append(key)
            self._schedule()
        return await future

    # --- records --------------------------------------------------------------------------

    async def _store(self, fn: Callable[..., T], *args: object) -> T:
        return await call_store(self.cache.store, self.client.stop, fn, *args)

    async def _load_once(self) -> None:
        async with self._load_lock:
            if not self._loaded:
                await self._refresh()
                self._loaded = True

    async def _refresh(self) -> list[BatchRecord]:
        """Read the records not read yet (this run's first use, or another run's new batches);
        pending ones hold their requests from now on, and a submitting one is settled first
        (`BatchCreates.settle`). Returns the records read."""
        keys = [k for k in await self._store(self.records.keys) if k not in self._seen]
        found = []
        for key in keys:
            if key in self._seen:  # read while settling a submitting record
                continue
            record = await self._store(self.records.read, key)
            if record is not None and record.state is BatchState.SUBMITTING:
                if self.creates.creating(record):
                    continue  # a create of this process, under way
                record = await self.creates.settle(record)
            if record is None:
                continue
            self._seen.add(self.records.key(record))
            found.append(record)
            if record.state is BatchState.PENDING:
                for request_key in record.request_keys:
                    self._in_batch.setdefault(request_key, record)
        return found

    def _ensure_polling(self, record: BatchRecord, request: ModelRequest) -> None:
        if record.batch_id not in self._polling:
            self._polling.add(record.batch_id)
            poll = self._poll(record, request, delay=0.0)
            self._spawn(record.request_keys, poll)

    def _spawn(self, keys: Iterable[str], work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(self._guarded(tuple(keys), work))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _guarded(self, keys: tuple[str, ...], work: Coroutine[Any, Any, None]) -> None:
        """Run `work`; if it fails, every request of `keys` still waiting gets its error."""
        try:
            await work
        except BaseException as exc:
            for key in keys:
                for _, future in self._waiters.pop(key, []):
                    if not future.done():
                        future.set_exception(exc)
            if not isinstance(exc, Exception):
                raise

    # --- submitting -----------------------------------------------------------------------

    def _schedule(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if len(self._queued) >= self.client.spec.batch_size:
            self._flush()
        else:
            self._timer = asyncio.get_running_loop().call_later(QUIET_S, self._flush)

    def _flush(self) -> None:
        """Submit what is queued, `batch_size` requests to a batch; a remainder smaller than
        that waits for more or for the quiet period."""
        self._timer = None
        size = self.client.spec.batch_size
        while self._queued:
            keys, self._queued = self._queued[:size], self._queued[size:]
            self._spawn(keys, self._submit(keys))
            if len(self._queued) < size:
                break
        if self._queued:
            self._timer = asyncio.get_running_loop().call_later(QUIET_S, self._flush)

    async def _submit(self, keys: list[str]) -> None:
        if self.client.stop.requested:
            self._resolve_each(keys, lambda request: CallOutcome(stopped=True))
            return
        claimed = await self._claims.claim(keys)
        for key, answer in claimed.answered.items():
            self._spawn([key], self._answered_by_claim(key, answer))
        for key in claimed.busy:
            self._spawn([key], self._after_claim(key))
        try:
            await self._submit_claimed([k for k in keys if k in claimed.leases])
        finally:
            # Held until the batch's record is written (or nothing was sent): from then on
            # the record keeps other runs from submitting them.
            await self._claims.finish(claimed.leases)

    async def _answered_by_claim(self, key: str, answer: ModelCall | None) -> None:
        async def read(key: str) -> ModelCall | None:
            return await self._store(self.cache.get, key)

        answer = await self._claims.answer(key, answer, read)
        if answer is None:
            self._requeue(key)
            return
        for request, future in self._waiters.pop(key, []):
            if not future.done():
                future.set_result(CallOutcome([_reused(answer, request)]))

    async def _after_claim(self, key: str) -> None:
        """Another claim holds `key`: once it ends, queue it again (the next submit then finds
        its batch's record and polls that batch)."""
        await self._claims.wait(key)
        if self.client.stop.requested:
            self._resolve_each([key], lambda request: CallOutcome(stopped=True))
            return
        self._requeue(key)

    def _requeue(self, key: str) -> None:
        if self._waiters.get(key):
            self._queued.append(key)
            self._schedule()

    async def _submit_claimed(self, keys: list[str]) -> None:
        if not keys:
            return
        # Another run may have submitted some of these since the plan looked: never twice.
        refreshed = await self._refresh()
        if self.client.stop.requested:  # stopped while settling what another run left
            self._resolve_each(keys, lambda request: CallOutcome(stopped=True))
            return
        for record in refreshed:
            held = set(record.request_keys)
            for key in [k for k in keys if k in held]:
                keys.remove(key)
                await self._from_record(record, key)
        requests = self._reserve(keys)
        if not requests:
            return
        first = requests[0]
        data = await asyncio.to_thread(self.api.input_lines, requests)
        try:
            file_id = await self.api.upload(first, data)
        except Exception as exc:
            self._fail_unsent(requests, exc, created=False)
            return
        try:
            record = await self.creates.create(requests, file_id, self.client.run_id)
        except Exception as exc:
            self._fail_unsent(requests, exc, created=True)
            return
        self._seen.add(self.records.key(record))
        self._polling.add(record.batch_id)
        for request in requests:
            self._in_batch[request.key] = record
        self._spawn(
            record.request_keys, self._poll(record, first, delay=self.client.spec.batch_poll_s)
        )

    async def _from_record(self, record: BatchRecord, key: str) -> None:
        """A queued request found in a batch another run submitted meanwhile: wait for that
        batch, or take its answer; after an error line (nothing cached), ask it again."""
        waiters = self._waiters.get(key, [])
        if not waiters:
            return
        if record.state is BatchState.PENDING:
            self._ensure_polling(record, waiters[0][0])
            return
        cached = await self._store(self.cache.get, key)
        if cached is None:
            self._queued.append(key)
            self._schedule()
            return
        for request, future in self._waiters.pop(key, []):
            if not future.done():
                future.set_result(CallOutcome([_reused(cached, request)]))

    def _reserve(self, keys: list[str]) -> list[ModelRequest]:
        """Reserve each request's worst case; once the budget is reached, the rest are not
        sent (stopped). The requests reserved, in order."""
        reserved: list[ModelRequest] = []
        for n, key in enumerate(keys):
            waiting = self._waiters.get(key)
            if not waiting:
                continue  # answered meanwhile (a batch another run submitted)
            request = waiting[0][0]
            try:
                self._reserved[key] = self.client.reserve_for(request)
            except BudgetExhausted:
                self._resolve_each(keys[n:], lambda request: CallOutcome(stopped=True))
                break
            reserved.append(request)
        return reserved

    def _fail_unsent(self, requests: list[ModelRequest], exc: Exception, created: bool) -> None:
        kind = classify(exc)
        # A create that timed out may have made the batch: its worst case stays spent.
        billed = created and kind in MAY_BE_BILLED
        message = f"the batch could not be submitted: {type(exc).__name__}: {exc}"
        if billed:
            message += "; if the provider made it anyway, the next run finds it there and polls it"
        for request in requests:
            call = batch_error(self.client, Slot.of(request), kind, message)
            self._resolve(request.key, call, cost=None if billed else 0.0)

    # --- polling --------------------------------------------------------------------------

    async def _poll(self, record: BatchRecord, request: ModelRequest, delay: float) -> None:
        """Poll the batch until it ends (or the run stops), then answer its requests."""
        spec = self.client.spec
        failures = 0
        lines: list[dict[str, Any]] = []
        while True:
            if await self._sleep_or_stop(delay):
                self._interrupt(record)
                return
            delay = spec.batch_poll_s
            try:
                batch = await self.api.retrieve(request, record.batch_id)
                status = str(batch.status)
                ended = status == FINISHED or status in ENDED_BADLY
                if ended:
                    lines = await self.api.content(request, batch.output_file_id)
                    lines += await self.api.content(request, batch.error_file_id)
            except Exception as exc:
                failures += 1
                if failures <= spec.num_retries:
                    continue
                # The batch may still finish (and be billed): its record stays pending, and
                # the next run polls it.
                message = (
                    f"batch {record.batch_id} could not be polled: {type(exc).__name__}: {exc}"
                )
                self._end(record, classify(exc), message)
                return
            failures = 0
            if ended:
                await self._land(record, status, lines)
                return

    def _stopping(self) -> bool:
        """Whether polling must end: the run stops, unless it is draining (a budget stop: what
        was submitted is reserved and paid for, so its answers are awaited) and not aborted."""
        stop = self.client.stop
        return stop.requested and (not stop.draining or stop.aborted)

    async def _sleep_or_stop(self, seconds: float) -> bool:
        """Sleep `seconds`; True as soon as polling must end (`_stopping`)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while not self._stopping():
            left = deadline - loop.time()
            if left <= 0:
                return False
            await asyncio.sleep(min(left, STOP_CHECK_S))
        return True

    async def _land(self, record: BatchRecord, status: str, lines: list[dict[str, Any]]) -> None:
        """Every request of an ended batch as a ModelCall (an expired or cancelled batch may
        still hold some answers); answers kept first, then the record marked."""
        by_key = {str(line.get("custom_id")): line for line in lines}
        latency = (datetime.now(UTC) - record.submitted).total_seconds()
        missing = (
            "missing from the batch's output"
            if status == FINISHED
            else f"batch {record.batch_id} ended {status}"
        )
        calls: dict[str, ModelCall] = {}
        for key, attempt in zip(record.request_keys, record.attempts, strict=True):
            asked = self._waiters.get(key)
            slot = Slot.of(asked[0][0]) if asked else Slot(key, attempt)
            line = by_key.get(key)
            # A key nobody here waits for is paid for all the same: kept for later runs.
            calls[key] = read_line(self.client, slot, line, latency, record.run_id, missing)
        await self._store(_put_all, self.cache, [c for c in calls.values() if c.ok])
        ended = (
            record.ended(BatchState.DONE)
            if status == FINISHED
            else record.ended(BatchState.FAILED, status)
        )
        await self._store(self.records.write, ended)
        self._polling.discard(record.batch_id)
        for key, call in calls.items():
            if call.ok:
                self._answered[key] = call
            self._resolve(key, call, cost=call.cost_usd if call.ok else 0.0)

    def _interrupt(self, record: BatchRecord) -> None:
        """The run stopped while the batch is pending: it stays so, at the provider and in
        its record, for the next run to poll; its requests here end interrupted."""
        message = f"the run stopped while batch {record.batch_id} was pending; a rerun polls it"
        for key in record.request_keys:
            for request, future in self._waiters.pop(key, []):
                call = batch_error(self.client, Slot.of(request), ErrorKind.INTERRUPTED, message)
                if not future.done():
                    future.set_result(CallOutcome([call], stopped=True))
            # It may still be billed: the worst case stays spent.
            self.client.settle(self._reserved.pop(key, None), None)
        self._polling.discard(record.batch_id)

    def _end(self, record: BatchRecord, kind: str, message: str) -> None:
        """Give up on a batch this run could not poll; it stays pending in its record."""
        for key in record.request_keys:
            self._in_batch.pop(key, None)
            waiters = self._waiters.get(key)
            if waiters:
                call = batch_error(self.client, Slot.of(waiters[0][0]), kind, message)
                self._resolve(key, call, cost=None)
        self._polling.discard(record.batch_id)

    def _resolve(self, key: str, call: ModelCall, cost: float | None) -> None:
        """Answer every waiter of `key` with `call`; settle its reservation; count it once."""
        self._in_batch.pop(key, None)
        self.client.settle(self._reserved.pop(key, None), cost)
        waiters = self._waiters.pop(key, [])
        if waiters:
            self.client.stats.record(ok=call.ok, cost_usd=call.cost_usd, rate_limited=0)
        for request, future in waiters:
            if not future.done():
                future.set_result(CallOutcome([replace(call, role=request.role)]))

    def _resolve_each(
        self, keys: Iterable[str], outcome: Callable[[ModelRequest], CallOutcome]
    ) -> None:
        for key in keys:
            for request, future in self._waiters.pop(key, []):
                if not future.done():
                    future.set_result(outcome(request))


def _put_all(cache: ResponseCache, answers: list[ModelCall]) -> None:
    for answer in answers:
        cache.put(answer)


def _reused(stored: ModelCall, request: ModelRequest) -> ModelCall:
    """An answer kept earlier, reused for `request` (costs this run nothing)."""
    return replace(stored, role=request.role, cached=True, try_number=0)
