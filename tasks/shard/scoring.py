"""The score stage: each answered item scored by its suite, which may call the judge.

Scoring is a function of the ask stage's outcomes alone, so where it runs is a choice: plain
scorers in threads here (RoadBench's GEOS work releases the GIL), the items a suite calls heavy
(CPU-bound metrics, judge calls) on the scoring cluster when the run has one.

A scorer that raises on an item fails that item alone, wherever it is scored (a thread's chunk,
the judged path, a Ray batch): the item is unscored with reason `scorer_error: <type>:
<message>` (redacted, see `ScorerErrors`), its traceback goes to the run's log, and the rest of
the shard is scored and lands.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from roadeval.benchmarks.suite import Suite
from roadeval.tasks.calls.secrets import Redactor
from roadeval.tasks.shard.answer import ItemOutcome
from roadeval.tasks.shard.asking import Asker
from roadeval.tasks.shard.judge import ItemJudge
from roadeval.tasks.shard.remote_scoring import (
    RemoteScoring,
    ScoreInput,
    ScorerError,
    scorer_failed,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ScorerErrors:
    """Where a scorer's exception on one item goes: its type and message, redacted, to the
    item's outcome (and so its score row); its traceback, redacted, to the run's log."""

    model: str
    redact: Redactor

    def record(self, suite: Suite, outcome: ItemOutcome, error: ScorerError, trace: str) -> None:
        outcome.score = None
        outcome.scorer_error = ScorerError(error.kind, self.redact.text(error.message))
        item = outcome.item
        log.warning(
            "%s",
            self.redact.text(
                f"{suite.name} x {self.model}: the scorer raised on item {item.item_id} "
                f"(task {item.task}); the item is unscored ({outcome.scorer_error.reason})\n"
                f"{trace.rstrip()}"
            ),
        )


def _scorable(outcome: ItemOutcome) -> ScoreInput | None:
    parsed, answer = outcome.final_parse, outcome.answer
    if parsed is None or answer is None or answer.output is None:
        return None
    return ScoreInput(outcome.item, parsed, answer.output)


async def score_outcome(
    suite: Suite,
    outcome: ItemOutcome,
    entry: ScoreInput,
    judge: Asker | None,
    errors: ScorerErrors,
) -> None:
    """Score the item's final answer here, into `outcome.score` (or its scorer's error into
    `outcome.scorer_error`); the judge calls made are kept either way."""
    item_judge = ItemJudge(judge, outcome.item) if judge is not None else None
    failure = None
    try:
        outcome.score = await suite.score_item(entry.item, entry.parsed, entry.output, item_judge)
    except Exception as exc:
        failure = scorer_failed(exc)
    finally:
        if item_judge is not None:
            outcome.judge_calls = item_judge.calls
    if failure is not None:
        # Recorded outside the handler: nothing that fails while logging it (a broken handler
        # printing its own error) can chain the scorer's raw, unredacted exception.
        errors.record(suite, outcome, *failure)


async def score_all(
    suite: Suite,
    outcomes: Sequence[ItemOutcome],
    judge: Asker | None,
    errors: ScorerErrors,
    remote: RemoteScoring | None = None,
) -> None:
    """Score every answered outcome; an item that ended in a call error or was stopped stays
    unscored (score None), and so does one whose scorer raised (see `ScorerErrors`)."""
    local: list[tuple[ItemOutcome, ScoreInput]] = []
    heavy: list[tuple[ItemOutcome, ScoreInput]] = []
    for outcome in outcomes:
        entry = _scorable(outcome)
        if entry is not None:
            on_cluster = remote is not None and suite.heavy_scoring(outcome.item)
            (heavy if on_cluster else local).append((outcome, entry))
    if _by_details(suite):
        chunks = [local[start : start + CHUNK] for start in range(0, len(local), CHUNK)]
        jobs = [asyncio.to_thread(_score_details, suite, chunk, errors) for chunk in chunks]
    else:
        jobs = [score_outcome(suite, outcome, entry, judge, errors) for outcome, entry in local]
    if heavy and remote is not None:
        jobs.append(_score_remotely(suite, heavy, remote, errors))
    await asyncio.gather(*jobs)


# Items scored per thread hop when a suite scores by `score_details` alone: a hop per item
# costs more CPU than a light scorer, and chunks still spread heavy scorers over threads.
CHUNK = 64


def _by_details(suite: Suite) -> bool:
    """Whether the suite keeps the default `score_item`: `score_details`, never the judge."""
    return type(suite).score_item is Suite.score_item


def _score_details(
    suite: Suite, chunk: Sequence[tuple[ItemOutcome, ScoreInput]], errors: ScorerErrors
) -> None:
    # Caught per item, not per chunk: one item's error leaves the chunk's others scored.
    for outcome, entry in chunk:
        failure = None
        try:
            outcome.score = suite.score_details(entry.item, entry.parsed)
        except Exception as exc:
            failure = scorer_failed(exc)
        if failure is not None:  # outside the handler, as in `score_outcome`
            errors.record(suite, outcome, *failure)


async def _score_remotely(
    suite: Suite,
    heavy: list[tuple[ItemOutcome, ScoreInput]],
    remote: RemoteScoring,
    errors: ScorerErrors,
) -> None:
    outputs = await remote.score(suite, [entry for _, entry in heavy], judged=suite.uses_judge)
    for (outcome, _), output in zip(heavy, outputs, strict=True):
        outcome.judge_calls = list(output.judge_calls)
        if output.error is not None:
            # Caught on the worker, item by item; redacted and logged here, by the run.
            errors.record(suite, outcome, output.error, output.traceback)
        else:
            outcome.score = output.score
