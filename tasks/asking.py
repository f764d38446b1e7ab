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
from typing import TypeVar

from roadeval.storage.store import StoreError, describe_store_error
from roadeval.tasks.claims import Lease, RequestClaims
from roadeval.tasks.gateway import CallOutcome, ModelClient
from roadeval.tasks.request import ModelRequest, ModelResponse
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
        # Hashing the request (image bytes included) is CPU work: also kept off the loop.
        cached = await self._store(self.cache.lookup, request)
        if cached is not None:
            return CallOutcome([cached])
        if self.claims is None:
            return await self._call_and_keep(request)
        lease = await self._claim_or_reuse(request, self.claims)
        if not isinstance(lease, Lease):
            return lease
        renewing = asyncio.create_task(self._renew(self.claims, lease))
        try:
            # The last holder may have answered between our look-up and our claim.
            cached = await self._store(self.cache.get, request.key)
            if cached is not None:
                return CallOutcome([cached])
            return await self._call_and_keep(request)
        finally:
            renewing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewing
            await self._store(self.claims.release, lease)

    async def _claim_or_reuse(
        self, request: ModelRequest, claims: RequestClaims
    ) -> Lease | CallOutcome:
        """A lease on the request, or the answer another run (or shard) bought while we waited."""
        while True:
            lease = await self._store(claims.try_acquire, request.key)
            if lease is not None:
                return lease
            await asyncio.sleep(claims.poll_s)
            cached: ModelResponse | None = await self._store(self.cache.get, request.key)
            if cached is not None:
                return CallOutcome([cached])
            if self.client.stop.requested:
                return CallOutcome(stopped=True)

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
