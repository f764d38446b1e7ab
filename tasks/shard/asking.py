"""Asking one request once: the stored answer if there is one, else a claim on the request, the
model's answer, and the answer kept before the claim is let go.

Store I/O goes through `call_store`: on the loop for a local folder, in a thread for a remote
store. A store that fails (full, unwritable, gone) stops the whole run at once: answers that
cannot be kept must not be bought.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Coroutine
from dataclasses import replace
from typing import Any, TypeVar

from roadeval.storage.store import Store, StoreError
from roadeval.tasks.batch.mode import batcher_for
from roadeval.tasks.cache.claims import Lease, RequestClaims
from roadeval.tasks.cache.responses import ResponseCache
from roadeval.tasks.cache.store_calls import call_store
from roadeval.tasks.calls.gateway import CallOutcome, ModelClient
from roadeval.tasks.requests.model_spec import CallMode
from roadeval.tasks.requests.request import ErrorKind, ModelCall, ModelRequest

T = TypeVar("T")


def asker_for(
    client: ModelClient, cache: ResponseCache, store: Store, run_id: str, *, offline: bool = False
) -> Asker:
    """The asker of a model in a run: its client, the store's answers, and claims on what it
    sends (they keep concurrent runs from paying twice; a model that costs nothing needs none).
    An `offline` asker (a rescore) sends nothing: a request the store cannot answer is an
    error of kind `not_stored`."""
    claims = None if client.spec.is_baseline or offline else RequestClaims(store, run_id)
    return Asker(client, cache, claims, offline=offline)


# Requests being asked in this process, per model: a second item whose request is the same
# (same key) waits for the first one's answer instead of sending it again, in any shard.
_IN_FLIGHT: weakref.WeakKeyDictionary[ModelClient, dict[str, asyncio.Future[CallOutcome]]] = (
    weakref.WeakKeyDictionary()
)


class Asker:
    """Asks one model's requests against one store, with or without claims."""

    def __init__(
        self,
        client: ModelClient,
        cache: ResponseCache,
        claims: RequestClaims | None,
        *,
        offline: bool = False,
    ) -> None:
        self.client = client
        self.cache = cache
        # None asks without claiming: for models that cost nothing (the built-in baselines).
        self.claims = claims
        self.offline = offline
        self.renewals = LeaseRenewals(claims, self._store) if claims is not None else None

    async def _store(self, fn: Callable[..., T], *args: object) -> T:
        return await call_store(self.cache.store, self.client.stop, fn, *args)

    async def ask(self, request: ModelRequest) -> CallOutcome:
        """The answer to `request`, reused or paid for once."""
        cached = await self._store(self.cache.lookup, request)
        if cached is not None:
            return _reused(cached, request)
        return await self.ask_unanswered(request)

    async def ask_unanswered(self, request: ModelRequest) -> CallOutcome:
        """`ask` for a request already looked up and not found (by the plan): no second look
        before claiming it; the claim's own check catches an answer kept since. A request
        that is being asked already (another item with the same request) is not sent again:
        it shares that answer, as an answer reused."""
        in_flight = _IN_FLIGHT.setdefault(self.client, {})
        pending = in_flight.get(request.key)
        if pending is not None:
            return _shared(await asyncio.shield(pending), request)
        future: asyncio.Future[CallOutcome] = asyncio.get_running_loop().create_future()
        in_flight[request.key] = future
        try:
            outcome = await self._ask_once(request)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as exc:
            future.set_exception(exc)
            # Retrieved here, so a request nobody else waited for logs no stray exception.
            future.exception()
            raise
        else:
            future.set_result(outcome)
            return outcome
        finally:
            del in_flight[request.key]

    async def _ask_once(self, request: ModelRequest) -> CallOutcome:
        if self.offline:
            cached = await self._store(self.cache.get, request.key)
            if cached is not None:
                return _reused(cached, request)
            return CallOutcome([_not_stored(self.client, request)])
        if self.client.spec.mode is CallMode.BATCH:
            # Grouped into the provider's batches (which keep their answers and are recorded
            # in the store, so no run pays twice for them); no per-request claims.
            return await batcher_for(self.client, self.cache).submit(request)
        if self.claims is None:
            return await self._call_and_keep(request)
        return await self._ask_claimed(request, self.claims)

    async def _ask_claimed(self, request: ModelRequest, claims: RequestClaims) -> CallOutcome:
        """Claim the request and ask it; while another run (or shard) holds the claim, wait
        for its answer without holding one of this model's slots, so other requests go on."""
        wait_s = claims.poll_s
        while True:
            async with self.client.asking:
                if self.client.stop.requested:
                    return CallOutcome(stopped=True)
                claimed = await self._store(self._claim, claims, request.key)
                if isinstance(claimed, ModelCall):
                    return _reused(claimed, request)
                if claimed is not None:
                    assert self.renewals is not None  # there are claims
                    return await self._ask_leased(request, self.renewals, claimed)
            await asyncio.sleep(wait_s)
            wait_s = min(wait_s * 1.5, claims.max_poll_s)
            cached: ModelCall | None = await self._store(self.cache.get, request.key)
            if cached is not None:
                return _reused(cached, request)

    def _claim(self, claims: RequestClaims, request_key: str) -> Lease | ModelCall | None:
        """A lease on the request; or its answer, if the last holder kept one
        between our look-up and our claim; or None while someone else holds it."""
        lease = claims.try_acquire(request_key)
        if lease is None:
            return None
        cached = self.cache.get(request_key)
        if cached is None:
            return lease
        claims.release(lease)
        return cached

    async def _ask_leased(
        self, request: ModelRequest, renewals: LeaseRenewals, lease: Lease
    ) -> CallOutcome:
        renewals.hold(lease)
        try:
            outcome = await self.client.complete(request)
            final = outcome.final
            if final is not None and final.ok:
                await self._store(self.cache.put, final)
            return outcome
        finally:
            # After the answer is kept (waiters then find it), never before.
            await renewals.release(lease)

    async def _call_and_keep(self, request: ModelRequest) -> CallOutcome:
        outcome = await self.client.complete(request)
        final = outcome.final
        if final is not None and final.ok:
            await self._store(self.cache.put, final)
        return outcome


class LeaseRenewals:
    """The leases one asker holds, renewed together every third of their TTL by one task (a
    task per request would be thousands a minute), and let go only once no renewal of theirs
    is under way: a renewal landing after the release would put the claim back."""

    def __init__(
        self, claims: RequestClaims, store: Callable[..., Coroutine[Any, Any, Any]]
    ) -> None:
        self.claims = claims
        self._store = store
        self.held: set[Lease] = set()
        self._renewing: dict[Lease, asyncio.Future[None]] = {}
        self._task: asyncio.Task[None] | None = None

    def hold(self, lease: Lease) -> None:
        self.held.add(lease)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._renew_held())

    async def release(self, lease: Lease) -> None:
        self.held.discard(lease)
        renewing = self._renewing.get(lease)
        if renewing is not None:
            await asyncio.shield(renewing)
        await self._store(self.claims.release, lease)

    async def _renew_held(self) -> None:
        loop = asyncio.get_running_loop()
        while self.held:
            await asyncio.sleep(self.claims.ttl_s / 3)
            for lease in list(self.held):
                if lease not in self.held:  # released while an earlier one was renewed
                    continue
                done = self._renewing[lease] = loop.create_future()
                try:
                    await self._store(self.claims.renew, lease)
                except StoreError:
                    return  # the store failed: the run is stopping (call_store asked it to)
                finally:
                    del self._renewing[lease]
                    done.set_result(None)


def _shared(outcome: CallOutcome, request: ModelRequest) -> CallOutcome:
    """Another item's outcome of the same request, as this item's: its answer reused (cost
    nothing, sent nothing), its error as the same error (not sent again), its stop a stop."""
    if outcome.stopped or outcome.final is None:
        return CallOutcome(stopped=outcome.stopped)
    final = outcome.final
    if final.ok:
        return _reused(replace(final, cached=True, try_number=0), request)
    return CallOutcome([replace(final, role=request.role, try_number=0, cached=False)])


def _not_stored(client: ModelClient, request: ModelRequest) -> ModelCall:
    return ModelCall(
        request_key=request.key,
        model=client.spec.model,
        attempt=request.attempt,
        error_kind=ErrorKind.NOT_STORED,
        error_message=(
            f"a rescore asks no model, and the store holds no answer to this request of "
            f"{client.spec.label} (attempt {request.attempt})"
        ),
        try_number=0,
        api_base=client.api_base,
        role=request.role,
    )


def _reused(stored: ModelCall, request: ModelRequest) -> CallOutcome:
    """A stored answer, reused for `request`: it answers the same key, and now in this role."""
    return CallOutcome([replace(stored, role=request.role)])
