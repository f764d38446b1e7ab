"""Ask one model one item by its suite's protocol (cache look-up, call, parse, re-ask), then score
it. Asking runs on the gateway loop, but its CPU-bound parts (building image messages, scoring
with RoadBench's GEOS buffers) run in other threads: on the loop they would stall every model call
that shares it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.suite import ParsedAnswer, Suite
from roadeval.tasks.asking import Asker
from roadeval.tasks.request import ModelResponse


@dataclass
class Attempt:
    """One turn of the protocol: every HTTP try of its request, and the parse of its answer."""

    tries: list[ModelResponse]
    parsed: ParsedAnswer | None = None

    @property
    def final(self) -> ModelResponse:
        return self.tries[-1]


@dataclass
class ItemOutcome:
    """The item's attempts; `values` is None unless its final answer was parsed and scored.

    `stopped` marks an item the run's stop cut short: never counted as a model error.
    """

    item: Item
    attempts: list[Attempt] = field(default_factory=list)
    values: dict[str, float] | None = None
    stopped: bool = False

    @property
    def responses(self) -> list[ModelResponse]:
        return [response for attempt in self.attempts for response in attempt.tries]

    @property
    def final_parse(self) -> ParsedAnswer | None:
        """The parse that is scored: the last attempt's, if the protocol ran to its end."""
        if self.stopped or not self.attempts:
            return None
        return self.attempts[-1].parsed

    @property
    def error(self) -> ModelResponse | None:
        """The response that ended the item in a model error (never a stop)."""
        if self.stopped or not self.attempts:
            return None
        final = self.attempts[-1].final
        return None if final.ok else final

    @property
    def asked(self) -> bool:
        return bool(self.attempts)


async def answer_item(suite: Suite, item: Item, asker: Asker) -> ItemOutcome:
    """Run the asking protocol for one item; a call error ends it, never as a wrong answer."""
    outcome = ItemOutcome(item)
    client = asker.client
    if client.stop.requested:
        outcome.stopped = True
        return outcome
    # Building messages reads, draws and encodes images: CPU work kept off the shared loop.
    messages = await asyncio.to_thread(suite.messages, item)
    for number in range(1, suite.max_attempts + 1):
        request = client.request(
            messages, number, suite=suite.name, task=item.task, item_id=item.item_id
        )
        call = await asker.ask(request)
        if call.tries:
            outcome.attempts.append(Attempt(call.tries))
        if call.stopped:
            outcome.stopped = True
            return outcome
        final = call.final
        if final is None or not final.ok:
            return outcome
        parsed = suite.parse(item, final.text or "")
        outcome.attempts[-1].parsed = parsed
        if not suite.should_reask(item, parsed):
            break
    return outcome


def score_outcome(suite: Suite, outcome: ItemOutcome) -> None:
    """Score the final parse into `outcome.values`; an item that ended in a call error or was
    stopped stays unscored (values None)."""
    parsed = outcome.final_parse
    if parsed is not None:
        outcome.values = suite.score(outcome.item, parsed)
