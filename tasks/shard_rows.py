"""The rows a shard lands (responses, parses, scores), built from its outcomes in one place."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from roadeval.tasks.answer import ItemOutcome
from roadeval.tasks.gateway import ModelClient


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _whose(run_id: str, client: ModelClient, outcome: ItemOutcome) -> dict[str, Any]:
    """The columns every row starts with: which run, item and model it is about."""
    item = outcome.item
    return {
        "run_id": run_id,
        "suite": item.suite,
        "task": item.task,
        "item_id": item.item_id,
        "model": client.spec.label,
    }


def response_rows(
    run_id: str, client: ModelClient, outcome: ItemOutcome, now: datetime
) -> Iterator[dict[str, Any]]:
    """One row per HTTP try and per reused answer; costs are this run's (0 when reused)."""
    whose = _whose(run_id, client, outcome)
    for response in outcome.responses:
        yield {
            **whose,
            "content_hash": outcome.item.content_hash,
            "model_string": client.spec.model,
            "api_base": client.api_base,
            "request_key": response.request_key,
            "attempt": response.attempt,
            "try_number": response.try_number,
            "raw_text": response.text,
            "finish_reason": response.finish_reason,
            "tokens_in": response.tokens_in,
            "tokens_out": response.tokens_out,
            "cost_usd": response.cost_this_run,
            "original_cost_usd": response.cost_usd,
            "latency_s": response.latency_s,
            "error_kind": response.error_kind,
            "error_message": response.error_message,
            "may_be_billed": response.may_be_billed,
            "cached": response.cached,
            "origin_run_id": response.origin_run_id,
            "created_at": now,
        }


def parse_rows(run_id: str, client: ModelClient, outcome: ItemOutcome) -> Iterator[dict[str, Any]]:
    whose = _whose(run_id, client, outcome)
    for attempt in outcome.attempts:
        if attempt.parsed is None:
            continue
        yield {
            **whose,
            "attempt": attempt.final.attempt,
            "request_key": attempt.final.request_key,
            "status": str(attempt.parsed.status),
            "rule": attempt.parsed.rule,
            "value_json": _json(attempt.parsed.value),
            "detail": attempt.parsed.detail,
        }


def score_rows(run_id: str, client: ModelClient, outcome: ItemOutcome) -> Iterator[dict[str, Any]]:
    if outcome.values is None:
        return
    whose = _whose(run_id, client, outcome)
    answer_key = outcome.attempts[-1].final.request_key
    for metric, value in outcome.values.items():
        yield {
            **whose,
            "content_hash": outcome.item.content_hash,
            "request_key": answer_key,
            "metric": metric,
            "value": float(value),
            "details_json": None,
        }
