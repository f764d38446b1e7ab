"""The score stage: each answered item scored by its suite, which may call the judge.

Scoring is a function of the ask stage's outcomes alone, so it can move (to Ray, next) without
touching asking. A suite's plain scorer runs in a thread (RoadBench's GEOS work releases the GIL);
a judged one awaits the judge through the gateway.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from roadeval.benchmarks.suite import Suite
from roadeval.tasks.answer import ItemOutcome
from roadeval.tasks.asking import Asker
from roadeval.tasks.judge import ItemJudge


async def score_outcome(suite: Suite, outcome: ItemOutcome, judge: Asker | None) -> None:
    """Score the item's final answer into `outcome.score`; an item that ended in a call error
    or was stopped stays unscored (score None)."""
    parsed, answer = outcome.final_parse, outcome.answer
    if parsed is None or answer is None or answer.output is None:
        return
    item_judge = ItemJudge(judge, outcome.item) if judge is not None else None
    outcome.score = await suite.score_item(outcome.item, parsed, answer.output, item_judge)
    if item_judge is not None:
        outcome.judge_calls = item_judge.calls


async def score_all(suite: Suite, outcomes: Sequence[ItemOutcome], judge: Asker | None) -> None:
    await asyncio.gather(*(score_outcome(suite, outcome, judge) for outcome in outcomes))
