"""Ask one model one item by its suite's protocol (cache look-up, call, parse, re-ask), then score
it. Asking runs on the gateway loop, but its CPU-bound parts (building image messages, scoring
with RoadBench's GEOS buffers) run in other threads: on the loop they would stall every model call
that shares it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.suite import ParsedAnswer, Suite
from roadeval.tasks.gateway import ModelClient
from roadeval.tasks.request import ModelRequest, ModelResponse
from roadeval.tasks.response_cache import ResponseCache


@dataclass
class ItemOutcome:
    """Every attempt's response and parse; `values` is None when the item ended in a call error."""

    item: Item
    responses: list[ModelResponse] = field(default_factory=list)
    parses: list[ParsedAnswer] = field(default_factory=list)
    values: dict[str, float] | None = None

    @property
    def final_parse(self) -> ParsedAnswer | None:
        """The parse that is scored: the last attempt's, unless the item ended in a call error."""
        return self.parses[-1] if self.parses and self.error is None else None

    @property
    def error(self) -> ModelResponse | None:
        last = self.responses[-1] if self.responses else None
        return last if last is not None and not last.ok else None


async def answer_item(
    suite: Suite, item: Item, client: ModelClient, cache: ResponseCache
) -> ItemOutcome:
    """Run the asking protocol for one item; a call error ends it, never as a wrong answer."""
    outcome = ItemOutcome(item)
    # Building messages reads, draws and encodes images: CPU work kept off the shared loop.
    messages = await asyncio.to_thread(suite.messages, item)
    for attempt in range(1, suite.max_attempts + 1):
        request = ModelRequest(
            model=client.spec.model,
            params=client.spec.params,
            messages=messages,
            attempt=attempt,
            suite=suite.name,
            task=item.task,
            item_id=item.item_id,
        )
        # Hashing the request (image bytes included) and store I/O (a file or an S3 object) run
        # off the loop so other calls keep flowing.
        response = await asyncio.to_thread(cache.lookup, request)
        if response is None:
            response = await client.complete(request)
            await asyncio.to_thread(cache.put, response)
        outcome.responses.append(response)
        if not response.ok:
            return outcome
        parsed = suite.parse(item, response.text or "")
        outcome.parses.append(parsed)
        if not suite.should_reask(item, parsed):
            break
    return outcome


def score_outcome(suite: Suite, outcome: ItemOutcome) -> None:
    """Score the final parse into `outcome.values`; an item that ended in a call error stays
    unscored (values None)."""
    parsed = outcome.final_parse
    if parsed is not None:
        outcome.values = suite.score(outcome.item, parsed)
