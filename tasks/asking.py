"""Asking one request once: the stored answer if there is one, else a claim on the request, the
model's answer, and the answer kept before the claim is let go.

Store I/O runs in threads, off the gateway loop every model call shares. A store that fails
(full, unwritable, gone) stops the whole run at once: answers that cannot be kept must not be
bought.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

from roadeval.storage.store import StoreError, describe_store_error
from roadeval.tasks.batch_mode import batcher_for
from roadeval.tasks.claims import Lease, RequestClaims
from roadeval.tasks.gateway import CallOutcome, ModelClient
from roadeval.tasks.model_spec import CallMode
from roadeval.tasks.request import ModelCall, ModelRequest
from roadeval.tasks.response_cache import ResponseCache
from roadeval.tasks.stopping import StopReason

T = TypeVar("T")


class Asker:
    """Asks one model's requests against one store, with or without claims."""

    def __init__(
        self, client: ModelClient, cache: ResponseCache, claims: RequestClaims | None
    ) -> None:
        self.client = client
        self.cache = cache
        # None asks without claiming: for models that cost nothing (the built-in baselines).
        self.claims = claims

    async def _store(self, fn: Callable[..., T], *args: object) -> T:
        try:
            return await asyncio.to_thread(fn, *args)
        except Exception as exc:
            error = exc if isinstance(exc, StoreError) else None
            error = error or StoreError(describe_store_error(self.cache.store.uri, exc))
            self.client.stop.request(StopReason(str(error), 1, "failed"))
            raise error from exc

    async def ask(self, request: ModelRequest) -> CallOutcome:
        """The answer to `request`, reused or paid for once."""
        # Hashing the request (its messages run to kilobytes) is CPU work: kept off the loop.
        cached = await self._store(self.cache.lookup, request)
        if cached is not None:
            return _reused(cached, request)
        return await self.ask_unanswered(request)

    async def ask_unanswered(self, request: ModelRequest) -> CallOutcome:
        """`ask` for a request already looked up and not found (by the plan): no second look
        before claiming it; the claim's own check catches an answer kept since."""
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
                    return await self._ask_leased(request, claims, claimed)
            await asyncio.sleep(wait_s)
            wait_s = min(wait_s * 1.5, claims.max_poll_s)
            cached: ModelCall | None = await self._store(self.cache.get, request.key)
            if cached is not None:
                return _reused(cached, request)

    def _claim(self, claims: RequestClaims, request_key: str) -> Lease | ModelCall | None:
        """(In a thread.) A lease on the request; or its answer, if the last holder kept one
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
        self, request: ModelRequest, claims: RequestClaims, lease: Lease
    ) -> CallOutcome:
        renewing = asyncio.create_task(self._renew(claims, lease))
        kept = False
        try:
            outcome = await self.client.complete(request)
            final = outcome.final
            if final is not None and final.ok:
                await self._store(self._keep, final, claims, lease)
                kept = True
            return outcome
        finally:
            renewing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewing
            if not kept:
                await self._store(claims.release, lease)

    def _keep(self, answer: ModelCall, claims: RequestClaims, lease: Lease) -> None:
        """(In a thread.) Keep the answer, then let the claim go: waiters find the answer."""
        self.cache.put(answer)
        claims.release(lease)

    async def _renew(self, claims: RequestClaims, lease: Lease) -> None:
        while True:
            await asyncio.sleep(claims.ttl_s / 3)
            await self._store(claims.renew, lease)

    async def _call_and_keep(self, request: ModelRequest) -> CallOutcome:
        outcome = await self.client.complete(request)
        final = outcome.final
        if final is not None and final.ok:
            await self._store(self.cache.put, final)
        return outcome


def _reused(stored: ModelCall, request: ModelRequest) -> CallOutcome:
    """A stored answer, reused for `request`: it answers the same key, and now in this role."""
    return CallOutcome([replace(stored, role=request.role)])
