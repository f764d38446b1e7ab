"""The score stage: each answered item scored by its suite, which may call the judge.

Scoring is a function of the ask stage's outcomes alone, so where it runs is a choice: plain
scorers in threads here (RoadBench's GEOS work releases the GIL), the items a suite calls heavy
(CPU-bound metrics, judge calls) on the scoring cluster when the run has one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from roadeval.benchmarks.suite import Suite
from roadeval.tasks.shard.answer import ItemOutcome
from roadeval.tasks.shard.asking import Asker
from roadeval.tasks.shard.judge import ItemJudge
from roadeval.tasks.shard.remote_scoring import RemoteScoring, ScoreInput


def _scorable(outcome: ItemOutcome) -> ScoreInput | None:
    parsed, answer = outcome.final_parse, outcome.answer
    if parsed is None or answer is None or answer.output is None:
        return None
    return ScoreInput(outcome.item, parsed, answer.output)


async def score_outcome(
    suite: Suite, outcome: ItemOutcome, entry: ScoreInput, judge: Asker | None
) -> None:
    """Score the item's final answer here, into `outcome.score`."""
    item_judge = ItemJudge(judge, outcome.item) if judge is not None else None
    outcome.score = await suite.score_item(entry.item, entry.parsed, entry.output, item_judge)
    if item_judge is not None:
        outcome.judge_calls = item_judge.calls


async def score_all(
    suite: Suite,
    outcomes: Sequence[ItemOutcome],
    judge: Asker | None,
    remote: RemoteScoring | None = None,
) -> None:
    """Score every answered outcome; an item that ended in a call error or was stopped stays
    unscored (score None)."""
    local: list[tuple[ItemOutcome, ScoreInput]] = []
    heavy: list[tuple[ItemOutcome, ScoreInput]] = []
    for outcome in outcomes:
        entry = _scorable(outcome)
        if entry is not None:
            on_cluster = remote is not None and suite.heavy_scoring(outcome.item)
            (heavy if on_cluster else local).append((outcome, entry))
    if _by_details(suite):
        chunks = [local[start : start + CHUNK] for start in range(0, len(local), CHUNK)]
        jobs = [asyncio.to_thread(_score_details, suite, chunk) for chunk in chunks]
    else:
        jobs = [score_outcome(suite, outcome, entry, judge) for outcome, entry in local]
    if heavy and remote is not None:
        jobs.append(_score_remotely(suite, heavy, remote))
    await asyncio.gather(*jobs)


# Items scored per thread hop when a suite scores by `score_details` alone: a hop per item
# costs more CPU than a light scorer, and chunks still spread heavy scorers over threads.
CHUNK = 64


def _by_details(suite: Suite) -> bool:
    """Whether the suite keeps the default `score_item`: `score_details`, never the judge."""
    return type(suite).score_item is Suite.score_item


def _score_details(suite: Suite, chunk: Sequence[tuple[ItemOutcome, ScoreInput]]) -> None:
    for outcome, entry in chunk:
        outcome.score = suite.score_details(entry.item, entry.parsed)


async def _score_remotely(
    suite: Suite, heavy: list[tuple[ItemOutcome, ScoreInput]], remote: RemoteScoring
) -> None:
    outputs = await remote.score(suite, [entry for _, entry in heavy], judged=suite.uses_judge)
    for (outcome, _), output in zip(heavy, outputs, strict=True):
        outcome.score = output.score
        outcome.judge_calls = list(output.judge_calls)
