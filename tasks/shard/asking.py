"""Asking one request once: the stored answer if there is one, else a claim on the request, the
model's answer, and the answer kept before the claim is let go.

Claims are the run's per endpoint (`claims.ClaimBook`): requests asked at the same moment share
one claim record. Store I/O goes through `call_store`: on the loop for a local folder, in a
thread for a remote store. A store that fails (full, unwritable, gone) stops the whole run at
once: answers that cannot be kept must not be bought.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

from roadeval.storage.store import Store
from roadeval.tasks.batch.mode import batcher_for
from roadeval.tasks.cache.claims import ClaimBook, Kind, Lease, claim_book
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
    claims = None
    if not client.spec.is_baseline and not offline:
        claims = claim_book(store, cache, client.spec.model, client.api_base, run_id, client.stop)
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
        claims: ClaimBook | None,
        *,
        offline: bool = False,
    ) -> None:
        self.client = client
        self.cache = cache
        # None asks without claiming: for models that cost nothing (the built-in baselines).
        self.claims = claims
        self.offline = offline

    async def _store(self, fn: Callable[..., T], *args: object) -> T:
        return await call_store(self.cache.store, self.client.stop, fn, *args)

    def _recent(self, key: str) -> ModelCall | None:
        return self.cache.get(key, recent=True)

    async def ask(self, request: ModelRequest) -> CallOutcome:
        """The answer to `request`, reused or paid for once (again, when the stored one is
        older than the model's `reuse_for`: its tries say so)."""
        stored = await self._store(self.cache.lookup, request)
        if stored.answer is not None:
            return _reused(stored.answer, request)
        outcome = await self.ask_unanswered(request)
        return replaced_stale(outcome) if stored.stale is not None else outcome

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
            # Grouped into the provider's batches (recorded in the store, so no run pays twice
            # for them; their requests are claimed from submit until the record is written).
            return await batcher_for(self.client, self.cache).submit(request)
        if self.claims is None:
            return await self._call_and_keep(request)
        return await self._ask_claimed(request, self.claims)

    async def _ask_claimed(self, request: ModelRequest, claims: ClaimBook) -> CallOutcome:
        """Claim the request and ask it; while another run (or shard) holds the claim, wait
        for it to end without holding one of this model's slots, so other requests go on."""
        trust_done = True
        while True:
            async with self.client.asking:
                if self.client.stop.requested:
                    return CallOutcome(stopped=True)
                verdict = await claims.claim(request.key, trust_done=trust_done)
                if verdict.lease is not None:
                    return await self._ask_leased(request, claims, verdict.lease)
                if verdict.kind is Kind.ANSWERED:
                    answer = verdict.answer or await self._store(self._recent, request.key)
                    if answer is not None:
                        return _reused(answer, request)
                    # A claim said it answered this, and the answer does not read: ask it.
                    trust_done = False
                    continue
            await claims.wait(request.key)

    async def _ask_leased(
        self, request: ModelRequest, claims: ClaimBook, lease: Lease
    ) -> CallOutcome:
        kept = False
        try:
            outcome = await self.client.complete(request)
            final = outcome.final
            if final is not None and final.ok:
                await self.cache.keep(final, self.client.stop)
                kept = True
            return outcome
        finally:
            # After the answer is kept (waiters then find it), never before.
            await claims.finish(lease, answered=kept)

    async def _call_and_keep(self, request: ModelRequest) -> CallOutcome:
        outcome = await self.client.complete(request)
        final = outcome.final
        if final is not None and final.ok:
            await self.cache.keep(final, self.client.stop)
        return outcome


def replaced_stale(outcome: CallOutcome) -> CallOutcome:
    """The outcome of a request asked again because the store's answer to it had grown older
    than its model's `reuse_for`: every try of it marked so."""
    tries = [replace(call, replaced_stale=True) for call in outcome.tries]
    return CallOutcome(tries, stopped=outcome.stopped)


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
