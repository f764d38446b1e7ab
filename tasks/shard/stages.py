"""A shard's stages after its plan: ask (with re-asks), score (with the judge), land, count.

A shard's responses, parses and scores land together (one landing) or not at all. A shard cut
short by the run's stop lands what it answered, so a resumed run reuses it. A shard's counts
are of what it landed: a shard that did not land is counted by the run as `not_landed`
(`ShardResult.not_landed`).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime

from roadeval.benchmarks.suite import ItemScore, ParseStatus, ScoredItem
from roadeval.storage.landing import Part, land
from roadeval.storage.records import (
    EVERY_METRIC,
    ParseRow,
    ResponseRow,
    ScoreChangeRow,
    ScoreRow,
)
from roadeval.storage.store import Store
from roadeval.tasks.cache.responses import CorruptEntry, ResponseCache
from roadeval.tasks.cache.store_calls import store_failed
from roadeval.tasks.calls.gateway import ModelClient, run_on_gateway
from roadeval.tasks.rerun.answers import StoredOutcome
from roadeval.tasks.rerun.deltas import score_changes
from roadeval.tasks.shard.answer import ItemOutcome, answer_item
from roadeval.tasks.shard.asking import asker_for
from roadeval.tasks.shard.copied_rows import copied_tables
from roadeval.tasks.shard.counts import new_counts
from roadeval.tasks.shard.plan import PlannedItem, Shard, ShardPlan
from roadeval.tasks.shard.plan_table import plan_table
from roadeval.tasks.shard.remote_scoring import RemoteScoring
from roadeval.tasks.shard.rows import parse_rows, response_rows, score_rows
from roadeval.tasks.shard.scoring import ScorerErrors, score_all
from roadeval.tasks.shard.served import Served, served_counts

__all__ = ["Shard", "ShardResult", "run_shard", "summarise"]


@dataclass
class ShardResult:
    """What the flow aggregates: scored items and named counts; the rows are already landed."""

    suite: str
    model: str
    # The shard's landing name (`Shard.name`).
    shard: str = ""
    # How its items were shown ('' as released, 'blind'): counted apart in the manifest.
    variant: str = ""
    scored: list[ScoredItem] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=new_counts)
    cost_usd: float = 0.0
    cost_known: bool = True
    errors: dict[str, int] = field(default_factory=dict)
    first_error: str | None = None
    corrupt_cache: list[CorruptEntry] = field(default_factory=list)
    # Per metric: items it could not be scored for, and the first reason why.
    unscored: dict[str, int] = field(default_factory=dict)
    first_unscored: dict[str, str] = field(default_factory=dict)
    # What the provider said served the answers, and how old those reused were
    # (`served.served_counts`).
    served: Served = field(default_factory=Served)

    @classmethod
    def not_landed(cls, shard: Shard) -> ShardResult:
        """A shard that did not land (its landing failed, or a stage raised before it): its
        items are the run's, with nothing of theirs in the store."""
        result = cls(
            suite=shard.suite.name,
            model=shard.client.spec.label,
            shard=shard.name,
            variant=shard.variant,
        )
        n = len(shard.items)
        result.counts.update(items=n, not_run=n, not_landed=n)
        return result


def run_shard(
    plan: ShardPlan,
    store: Store,
    judge: ModelClient | None = None,
    remote: RemoteScoring | None = None,
) -> ShardResult:
    """Ask every planned item, score the answers (the heavy ones on `remote`, the scoring
    cluster, when there is one), then publish the shard's rows at once. An item whose
    baseline outcome is reused whole is neither asked nor scored: its rows are copied."""
    shard = plan.shard
    # As each model sees the store: answers older than its `reuse_for` are asked again.
    cache = ResponseCache(store, run_id=shard.run_id, fresh_since=shard.fresh_since)
    asker = asker_for(shard.client, cache, store, shard.run_id, offline=shard.rescore)
    judged = judge is not None and shard.suite.uses_judge
    judge_cache = cache.as_of(judge.fresh_since) if judged and judge else None
    judge_asker = (
        asker_for(judge, judge_cache, store, shard.run_id, offline=shard.rescore)
        if judge and judge_cache
        else None
    )
    fresh = [planned for planned in plan.items if planned.reused is None]

    async def _stages() -> list[ItemOutcome]:
        outcomes = list(
            await asyncio.gather(
                *(answer_item(shard.suite, p, asker, shard.variant) for p in fresh)
            )
        )
        errors = ScorerErrors(shard.client.spec.label, shard.client.redact)
        await score_all(shard.suite, outcomes, judge_asker, errors, remote)
        return outcomes

    answered = iter(run_on_gateway(_stages()) if fresh else [])
    outcomes = [
        copied_outcome(planned, shard.variant) if planned.reused is not None else next(answered)
        for planned in plan.items
    ]
    _land(plan, store, outcomes, judge if judged else None)
    result = summarise(shard, outcomes, judge.spec.label if judged and judge else None)
    result.corrupt_cache = [*cache.corrupt, *(judge_cache.corrupt if judge_cache else [])]
    result.counts["corrupt_cache"] = len(result.corrupt_cache)
    return result


def _land(
    plan: ShardPlan, store: Store, outcomes: list[ItemOutcome], judge: ModelClient | None
) -> None:
    shard = plan.shard
    now = datetime.now(UTC)
    run_id, client = shard.run_id, shard.client
    where = {"suite": shard.suite.name, "model": client.spec.label}
    version = shard.suite.scorer_version
    responses: list[ResponseRow] = []
    parses: list[ParseRow] = []
    scores: list[ScoreRow] = []
    moved: list[ScoreChangeRow] = []
    copied: list[StoredOutcome] = []
    for planned, outcome in zip(plan.items, outcomes, strict=True):
        if outcome.copied is not None:
            copied.append(outcome.copied)
            continue
        if not outcome.asked:
            continue
        responses.extend(response_rows(run_id, client, judge, outcome, now))
        parses.extend(parse_rows(run_id, client, outcome))
        rows = list(score_rows(run_id, client, outcome, version))
        scores.extend(rows)
        if plan.baseline_run_id is not None and planned.baseline_scores:
            moved.extend(score_changes(run_id, plan.baseline_run_id, planned.baseline_scores, rows))
    # A plan that asks nothing (every outcome copied) was not landed ahead of the shard's
    # calls, having none: it lands with the rows, one landing for both.
    own_plan = [] if plan.asks else [Part("plan", copied=plan_table(plan, judge, now), **where)]
    if not responses and not copied and not own_plan:
        return
    again = copied_tables(copied, run_id, client, judge, shard.sample, shard.variant, now)
    try:
        land(
            store,
            shard.name,
            [
                *own_plan,
                Part("responses", responses, copied=again.get("responses"), **where),
                Part("parses", parses, copied=again.get("parses"), **where),
                Part("scores", scores, copied=again.get("scores"), **where),
                Part("score_changes", moved, **where),
            ],
        )
    except Exception as exc:
        # Only the store is written here: a failure is the store's, named as such, and it
        # stops the run now, not once the shard's error reaches the run.
        raise store_failed(store, client.stop, exc) from exc


def copied_outcome(planned: PlannedItem, variant: str = "") -> ItemOutcome:
    """The baseline's outcome of an item (shown as `variant`), as this run's: its answers
    reused (cached, cost nothing), its final parse read back, its score rows to be copied as
    they are (a scored outcome's: one its scorer raised on is scored again, never copied). Its
    answers are not made (`summarise` counts them from the stored chain): its rows land by
    column."""
    stored = planned.reused
    assert stored is not None
    outcome = ItemOutcome(
        planned.item, sample=planned.requests[0].sample, variant=variant, copied=stored
    )
    values, unscored = stored.score_values()
    outcome.score = ItemScore(values=values, unscored=unscored)
    return outcome


def summarise(shard: Shard, outcomes: list[ItemOutcome], judge: str | None = None) -> ShardResult:
    """The shard's counts, cost, scored items and what served its answers (the judge's, by
    its name `judge`), from the same outcomes that were landed."""
    result = ShardResult(
        suite=shard.suite.name,
        model=shard.client.spec.label,
        shard=shard.name,
        variant=shard.variant,
        served=served_counts(outcomes, shard.client.spec.label, judge),
    )
    counts = result.counts
    counts["items"] = len(outcomes)
    for outcome in outcomes:
        copied = outcome.copied
        if copied is not None:
            # Every answer of a copy is reused: nothing sent, nothing paid.
            counts["cached"] += len(copied.keys)
            counts["judge_cached"] += len(copied.judged)
            counts["reasks"] += max(0, len(copied.keys) - 1)
            counts["scores_reused"] += 1
        for attempt in outcome.attempts:
            first = attempt.tries[0]
            counts["stale"] += int(first.replaced_stale)
            if first.cached:
                counts["cached"] += 1
            elif first.sent:
                counts["calls"] += 1
        for call in outcome.judge_calls:
            if call.cached:
                counts["judge_cached"] += 1
            elif call.sent and call.try_number == 1:
                counts["judge_calls"] += 1
            first_try = call.cached or call.try_number <= 1
            counts["judge_stale"] += int(call.replaced_stale and first_try)
        for call in [*outcome.responses, *outcome.judge_calls]:
            counts["requests"] += int(call.sent)
            counts["retries"] += int(call.sent and call.try_number > 1)
            counts["may_be_billed"] += int(call.may_be_billed)
            cost = call.cost_this_run
            if cost is None:
                result.cost_known = False
                counts["unknown_cost"] += int(call.sent)
            else:
                result.cost_usd += cost
        counts["reasks"] += max(0, len(outcome.attempts) - 1)
        if outcome.stopped:
            counts["interrupted" if outcome.asked else "not_run"] += 1
            continue
        error = outcome.error
        if error is not None:
            counts["errors"] += 1
            kind = error.error_kind or "other"
            result.errors[kind] = result.errors.get(kind, 0) + 1
            result.first_error = result.first_error or error.error_message
            continue
        parsed, score = outcome.final_parse, outcome.score
        scorer_error = outcome.scorer_error
        if parsed is None or (score is None and scorer_error is None):
            continue
        if parsed.status is ParseStatus.ABNORMAL:
            counts["abnormal"] += 1
        elif parsed.status is ParseStatus.UNPARSED:
            counts["unparsed"] += 1
        if scorer_error is not None:
            # Its one score row's metric is '*' (see `rows.score_rows`): so is its entry here.
            counts["scorer_errors"] += 1
            result.unscored[EVERY_METRIC] = result.unscored.get(EVERY_METRIC, 0) + 1
            result.first_unscored.setdefault(EVERY_METRIC, scorer_error.reason)
            continue
        assert score is not None
        counts["scored"] += 1
        counts["unscored"] += int(bool(score.unscored))
        for metric, reason in score.unscored.items():
            result.unscored[metric] = result.unscored.get(metric, 0) + 1
            result.first_unscored.setdefault(metric, reason)
        result.scored.append(ScoredItem(outcome.item, parsed, score.values, score.state))
    return result
