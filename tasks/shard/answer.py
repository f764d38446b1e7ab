"""The ask stage: one model answers one planned item by its suite's protocol (the stored answer
or a call, then the parse, then a re-ask while the protocol calls for one).

It runs on the gateway loop; its requests were built and keyed by the plan stage, and scoring is
a stage of its own (`scoring`), so nothing here is CPU-heavy."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.suite import ItemScore, ParsedAnswer, Suite
from roadeval.tasks.calls.gateway import CallOutcome
from roadeval.tasks.requests.request import ModelCall
from roadeval.tasks.shard.asking import Asker, replaced_stale
from roadeval.tasks.shard.plan import PlannedItem

if TYPE_CHECKING:
    from roadeval.tasks.rerun.answers import StoredOutcome
    from roadeval.tasks.shard.remote_scoring import ScorerError


@dataclass
class Attempt:
    """One turn of the protocol: every HTTP try of its request, and the parse of its answer."""

    tries: list[ModelCall]
    parsed: ParsedAnswer | None = None

    @property
    def final(self) -> ModelCall:
        return self.tries[-1]


@dataclass
class ItemOutcome:
    """The item's attempts, then its score (None unless its final answer was scored).

    `stopped` marks an item the run's stop cut short: never counted as a model error.
    `scorer_error` is set (and `score` None) when the suite's scorer raised on the final answer.
    `copied` holds the baseline run's outcome when this one is it, copied whole (see
    `rerun.answers`): its rows land as they are, under this run.
    """

    item: Item
    attempts: list[Attempt] = field(default_factory=list)
    score: ItemScore | None = None
    judge_calls: list[ModelCall] = field(default_factory=list)
    stopped: bool = False
    scorer_error: ScorerError | None = None
    # Copied whole from the baseline run: neither asked nor scored by this run.
    copied: StoredOutcome | None = None
    # Which of the model's independent samples of the item this is.
    sample: int = 1
    # How the item was shown ('' as released, 'blind': `Shard.variant`).
    variant: str = ""

    @property
    def responses(self) -> list[ModelCall]:
        return [call for attempt in self.attempts for call in attempt.tries]

    @property
    def final_parse(self) -> ParsedAnswer | None:
        """The parse that is scored: the last attempt's, if the protocol ran to its end (a
        copied outcome's: the baseline's last)."""
        if self.copied is not None:
            return self.copied.final_parse
        if self.stopped or not self.attempts:
            return None
        return self.attempts[-1].parsed

    @property
    def answer(self) -> ModelCall | None:
        """The call whose answer is scored."""
        return self.attempts[-1].final if self.final_parse is not None else None

    @property
    def error(self) -> ModelCall | None:
        """The call that ended the item in a model error (never a stop)."""
        if self.stopped or not self.attempts:
            return None
        final = self.attempts[-1].final
        return None if final.ok else final

    @property
    def asked(self) -> bool:
        """Whether it has an answer chain: asked now, or copied whole."""
        return bool(self.attempts) or self.copied is not None


async def answer_item(
    suite: Suite, planned: PlannedItem, asker: Asker, variant: str = ""
) -> ItemOutcome:
    """Run the asking protocol for one item (shown as `variant`); a call error ends it, never
    as a wrong answer."""
    item = planned.item
    outcome = ItemOutcome(item, sample=planned.requests[0].sample, variant=variant)
    for index, (request, stored) in enumerate(zip(planned.requests, planned.stored, strict=True)):
        # A stored answer costs nothing, so it is taken even once the run is stopping.
        if stored is not None:
            call = CallOutcome([stored])
        else:
            call = await asker.ask_unanswered(request)
            if planned.was_stale(index):
                call = replaced_stale(call)
        if call.tries:
            outcome.attempts.append(Attempt(call.tries))
        if call.stopped:
            outcome.stopped = True
            return outcome
        final = call.final
        if final is None or final.output is None:
            return outcome
        parsed = suite.parse(item, final.output)
        outcome.attempts[-1].parsed = parsed
        if not suite.should_reask(item, parsed):
            break
    return outcome
