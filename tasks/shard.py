"""A shard: one suite x one model x one chunk of items, answered concurrently, landed as parts."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.suite import ParseStatus, ScoredItem, Suite
from roadeval.storage.store import Store
from roadeval.storage.tables import write_part
from roadeval.tasks.answer import ItemOutcome, answer_item, score_outcome
from roadeval.tasks.gateway import ModelClient, run_on_gateway
from roadeval.tasks.response_cache import ResponseCache


@dataclass(frozen=True)
class Shard:
    run_id: str
    index: int
    suite: Suite
    client: ModelClient
    items: list[Item]


@dataclass
class ShardResult:
    """What the flow aggregates: scored items and counts; the rows themselves are already landed."""

    suite: str
    model: str
    scored: list[ScoredItem] = field(default_factory=list)
    n_items: int = 0
    n_calls: int = 0
    n_cached: int = 0
    n_errors: int = 0
    n_abnormal: int = 0
    n_unparsed: int = 0
    n_reasks: int = 0
    cost_usd: float = 0.0
    cost_known: bool = True
    errors: dict[str, int] = field(default_factory=dict)
    first_error: str | None = None


def run_shard(shard: Shard, store: Store) -> ShardResult:
    """Answer every item of the shard, then publish its responses, parses and scores."""
    cache = ResponseCache(store)

    async def _all() -> list[ItemOutcome]:
        return list(
            await asyncio.gather(
                *(answer_item(shard.suite, item, shard.client, cache) for item in shard.items)
            )
        )

    outcomes = run_on_gateway(_all())
    for outcome in outcomes:
        score_outcome(shard.suite, outcome)
    _land(shard, store, outcomes)
    return _summarise(shard, outcomes)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _land(shard: Shard, store: Store, outcomes: list[ItemOutcome]) -> None:
    now = datetime.now(UTC)
    suite, model, run_id = shard.suite.name, shard.client.spec.label, shard.run_id
    responses, parses, scores = [], [], []
    for outcome in outcomes:
        item = outcome.item
        base = {"run_id": run_id, "suite": suite, "task": item.task, "item_id": item.item_id}
        for response in outcome.responses:
            responses.append(
                {
                    **base,
                    "content_hash": item.content_hash,
                    "model": model,
                    "request_key": response.request_key,
                    "attempt": response.attempt,
                    "raw_text": response.text,
                    "finish_reason": response.finish_reason,
                    "tokens_in": response.tokens_in,
                    "tokens_out": response.tokens_out,
                    "cost_usd": response.cost_usd,
                    "latency_s": response.latency_s,
                    "error_kind": response.error_kind,
                    "error_message": response.error_message,
                    "cached": response.cached,
                    "created_at": now,
                }
            )
        for response, parsed in zip(outcome.responses, outcome.parses, strict=False):
            parses.append(
                {
                    **base,
                    "model": model,
                    "attempt": response.attempt,
                    "request_key": response.request_key,
                    "status": str(parsed.status),
                    "rule": parsed.rule,
                    "value_json": _json(parsed.value),
                    "detail": parsed.detail,
                }
            )
        for metric, value in (outcome.values or {}).items():
            scores.append(
                {
                    **base,
                    "model": model,
                    "metric": metric,
                    "value": float(value),
                    "details_json": None,
                }
            )
    name = f"{run_id}-{shard.index:05d}"
    write_part(store, "responses", name, responses, suite=suite, model=model)
    write_part(store, "parses", name, parses, suite=suite, model=model)
    write_part(store, "scores", name, scores, suite=suite, model=model)


def _summarise(shard: Shard, outcomes: list[ItemOutcome]) -> ShardResult:
    result = ShardResult(
        suite=shard.suite.name, model=shard.client.spec.label, n_items=len(outcomes)
    )
    for outcome in outcomes:
        for response in outcome.responses:
            if response.cached:
                result.n_cached += 1
            elif response.error_kind != "model_unreachable":
                result.n_calls += 1
            if response.cost_usd is None and response.ok and not response.cached:
                result.cost_known = False
            elif not response.cached:
                result.cost_usd += response.cost_usd or 0.0
        result.n_reasks += max(0, len(outcome.responses) - 1)
        error = outcome.error
        if error is not None:
            result.n_errors += 1
            result.errors[error.error_kind or "other"] = (
                result.errors.get(error.error_kind or "other", 0) + 1
            )
            result.first_error = result.first_error or error.error_message
            continue
        parsed = outcome.final_parse
        if parsed is None or outcome.values is None:
            continue
        if parsed.status is ParseStatus.ABNORMAL:
            result.n_abnormal += 1
        elif parsed.status is ParseStatus.UNPARSED:
            result.n_unparsed += 1
        result.scored.append(ScoredItem(outcome.item, parsed, outcome.values))
    return result
