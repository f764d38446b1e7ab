"""A suite whose scorer raises on the items it is told to (test-only): the probe suite's items
and parser, no judge, scored by an overridden `score_item` (the path judged suites take), and
sent to the scoring cluster when its option `heavy` says so. Ray workers import it too (the
session's Ray has the test support modules on its path)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from roadeval.benchmarks.generation import GenerationSettings
from roadeval.benchmarks.item import Item
from roadeval.benchmarks.judging import Judge
from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.registry import BaselineCall, register_baseline, register_suite
from roadeval.benchmarks.suite import ItemScore, ParsedAnswer

from support.probe_suite import ProbeSuite

SUITE = "faulty-scorer"


@register_suite
class FaultyScorerSuite(ProbeSuite):
    name: ClassVar[str] = SUITE
    prompt_version: ClassVar[str] = "faulty-v1"
    generation: ClassVar[GenerationSettings] = GenerationSettings(max_tokens=5, temperature=0)
    uses_judge: ClassVar[bool] = False

    def __init__(self, *, fail_on: Sequence[str] = (), heavy: bool = False, **options: Any) -> None:
        super().__init__(**options)
        self.fail_on = tuple(fail_on)
        self.heavy = heavy

    def options(self) -> dict[str, Any]:
        return {"fail_on": list(self.fail_on), "heavy": self.heavy}

    def heavy_scoring(self, item: Item) -> bool:
        return self.heavy

    async def score_item(
        self, item: Item, parsed: ParsedAnswer, output: ModelOutput, judge: Judge | None
    ) -> ItemScore:
        if item.item_id in self.fail_on:
            raise ValueError(f"cannot score {item.item_id}: {item.question}")
        return ItemScore(values=self.score(item, parsed))


@register_baseline("faulty-b", SUITE)
def always_b(call: BaselineCall) -> str:
    return "B"
