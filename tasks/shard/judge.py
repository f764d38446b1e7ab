"""The panel's judge as a scorer sees it: a model in the `judge` role, asked through the same
gateway as the models under test (cache, claims, limits, retries), every call recorded."""

from __future__ import annotations

from dataclasses import dataclass, field

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.judging import JudgeReply, JudgeRequest
from roadeval.tasks.requests.request import ModelCall
from roadeval.tasks.shard.asking import Asker


@dataclass
class ItemJudge:
    """The judge for one item's answer; keeps the calls it made, to land with the item."""

    asker: Asker
    item: Item
    calls: list[ModelCall] = field(default_factory=list)

    async def __call__(self, request: JudgeRequest) -> JudgeReply:
        client = self.asker.client
        model_request = client.request(
            request.messages, 1, item=self.item, settings=request.settings, role="judge"
        )
        outcome = await self.asker.ask(model_request)
        self.calls.extend(outcome.tries)
        final = outcome.final
        error = None
        if outcome.stopped:
            error = "the run was stopped before the judge answered"
        elif final is None or not final.ok:
            error = (final.error_message or final.error_kind) if final else "no judge call made"
        return JudgeReply(
            model=client.spec.label,
            request_key=model_request.key,
            params=model_request.params,
            prompt_hash=request.prompt_hash,
            output=final.output if final is not None and final.ok else None,
            error=error,
        )
