"""Claims on the requests a batcher is about to submit, held from before it reads the batch
records until the batch's record is written: a second run submitting at the same moment waits
for that record, then polls the first run's batch. Each request is submitted once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from roadeval.tasks.cache.claims import ClaimBook, Kind, Lease, claim_book
from roadeval.tasks.cache.responses import ResponseCache
from roadeval.tasks.calls.gateway import ModelClient
from roadeval.tasks.requests.request import ModelCall


@dataclass
class Claimed:
    """What claiming a batch's requests found: leases on those it may submit, the answers
    some claim already kept (None: to be read), and those another claim holds."""

    leases: dict[str, Lease] = field(default_factory=dict)
    answered: dict[str, ModelCall | None] = field(default_factory=dict)
    busy: list[str] = field(default_factory=list)


class SubmitClaims:
    """A batcher's claims (none for a client outside a run: tests of the batcher alone)."""

    def __init__(self, client: ModelClient, cache: ResponseCache) -> None:
        self.book: ClaimBook | None = None
        if client.run_id is not None:
            spec = client.spec
            self.book = claim_book(
                cache.store, cache, spec.model, client.api_base, client.run_id, client.stop
            )
        # Requests a claim said were answered, whose answers did not read.
        self._unreadable: set[str] = set()

    async def claim(self, keys: Sequence[str]) -> Claimed:
        found = Claimed()
        book = self.book
        if book is None:
            found.leases = {key: Lease(key, 0) for key in keys}
            return found
        verdicts = await asyncio.gather(
            *(book.claim(key, trust_done=key not in self._unreadable) for key in keys)
        )
        for key, verdict in zip(keys, verdicts, strict=True):
            if verdict.lease is not None:
                found.leases[key] = verdict.lease
            elif verdict.kind is Kind.ANSWERED:
                found.answered[key] = verdict.answer
            else:
                found.busy.append(key)
        return found

    async def answer(
        self,
        key: str,
        answer: ModelCall | None,
        read: Callable[[str], Awaitable[ModelCall | None]],
    ) -> ModelCall | None:
        """The answer a claim kept (read now if need be); None if it does not read (the
        request is then claimed again without taking the claim's word for it)."""
        answer = answer or await read(key)
        if answer is None:
            self._unreadable.add(key)
        return answer

    async def wait(self, key: str) -> None:
        """Until the claim holding `key` ends (its batch is then recorded)."""
        if self.book is not None:
            await self.book.wait(key)

    async def finish(self, leases: dict[str, Lease]) -> None:
        """The batch is recorded (or nothing was sent): the leases end, answered by no one
        yet (the record holds the requests from now on)."""
        if self.book is not None:
            for lease in leases.values():
                await self.book.finish(lease, answered=False)
