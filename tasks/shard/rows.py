"""The rows a shard lands (responses, parses, scores), built from its outcomes in one place."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from roadeval.benchmarks.output import ModelOutput
from roadeval.storage.records import EVERY_METRIC, ParseRow, ResponseRow, ScoreRow
from roadeval.tasks.calls.gateway import ModelClient
from roadeval.tasks.requests.request import ModelCall
from roadeval.tasks.shard.answer import ItemOutcome


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _not_copied(outcome: ItemOutcome) -> None:
    if outcome.copied is not None:
        raise ValueError(f"item {outcome.item.item_id}: a copied outcome lands by column")


def _whose(run_id: str, client: ModelClient, outcome: ItemOutcome) -> dict[str, Any]:
    """The columns every row starts with: which run, item (sample and variant) and model it is
    about."""
    item = outcome.item
    return {
        "run_id": run_id,
        "suite": item.suite,
        "task": item.task,
        "item_id": item.item_id,
        "content_hash": item.content_hash,
        "model": client.spec.label,
        "sample": outcome.sample,
        "variant": outcome.variant,
    }


def _response(
    whose: dict[str, Any], client: ModelClient, call: ModelCall, now: datetime
) -> ResponseRow:
    output = call.output
    return ResponseRow(
        **{**whose, "model": client.spec.label},
        model_string=client.spec.model,
        api_base=client.api_base,
        role=call.role,
        request_key=call.request_key,
        attempt=call.attempt,
        try_number=call.try_number,
        raw_text=call.text,
        finish_reason=output.finish_reason if output else None,
        tokens_in=output.tokens_in if output else None,
        tokens_out=output.tokens_out if output else None,
        cost_usd=call.cost_this_run,
        original_cost_usd=call.cost_usd,
        latency_s=call.latency_s,
        error_kind=call.error_kind,
        error_message=call.error_message,
        may_be_billed=call.may_be_billed,
        cached=call.cached,
        origin_run_id=call.origin_run_id,
        logprobs_json=_json([t.to_json() for t in output.logprobs])
        if output is not None and output.logprobs is not None
        else None,
        extras_json=_json(output.extras) if output is not None and output.extras else None,
        created_at=now,
        answered_at=call.answered_at,
        replaced_stale=call.replaced_stale,
        served_model=served_by(output, "served_model"),
        system_fingerprint=served_by(output, "system_fingerprint"),
    )


def served_by(output: ModelOutput | None, name: str) -> str | None:
    """What the provider said served an answer (`served_model`, `system_fingerprint`, as
    `provider_output` keeps them), as text; None where it said nothing."""
    value = output.extras.get(name) if output is not None else None
    return None if value is None else str(value)


def response_rows(
    run_id: str,
    client: ModelClient,
    judge: ModelClient | None,
    outcome: ItemOutcome,
    now: datetime,
) -> Iterator[ResponseRow]:
    """One row per HTTP try and per reused answer, the judge's included; costs are this
    run's (0 when reused). An outcome copied whole from the baseline lands by column
    (`copied_rows`), not here."""
    _not_copied(outcome)
    whose = _whose(run_id, client, outcome)
    for call in outcome.responses:
        yield _response(whose, client, call, now)
    for call in outcome.judge_calls:
        assert judge is not None
        yield _response(whose, judge, call, now)


def parse_rows(run_id: str, client: ModelClient, outcome: ItemOutcome) -> Iterator[ParseRow]:
    _not_copied(outcome)
    whose = _whose(run_id, client, outcome)
    for attempt in outcome.attempts:
        if attempt.parsed is None:
            continue
        yield ParseRow(
            **whose,
            attempt=attempt.final.attempt,
            request_key=attempt.final.request_key,
            status=str(attempt.parsed.status),
            rule=attempt.parsed.rule,
            value_json=_json(attempt.parsed.value),
            detail=attempt.parsed.detail,
        )


def score_rows(
    run_id: str, client: ModelClient, outcome: ItemOutcome, scorer_version: str
) -> Iterator[ScoreRow]:
    """One row per metric: a value, or (unscored) the reason there is none (an outcome copied
    from the baseline run lands by column, `copied_rows`).

    An item whose scorer raised has no metric values, and the suite cannot say which metrics it
    would have had (they may depend on the answer): it gets one row, metric `*` (every metric),
    status `unscored`, reason `scorer_error: <type>: <message>`, and the type and message in
    `details_json` under `scorer_error`. So `count(distinct item_id) where status = 'unscored'`
    counts it, and no metric's mean or count includes it."""
    _not_copied(outcome)
    answer = outcome.answer
    if answer is None:
        return
    error = outcome.scorer_error
    if error is not None:
        details = {"scorer_error": {"type": error.kind, "message": error.message}}
        yield ScoreRow(
            **_whose(run_id, client, outcome),
            request_key=answer.request_key,
            metric=EVERY_METRIC,
            value=None,
            status="unscored",
            unscored_reason=error.reason,
            judge_model=None,
            judge_request_key=None,
            judge_prompt_hash=None,
            judge_params_json=None,
            judge_reply=None,
            details_json=_json(details),
            scorer_version=scorer_version,
        )
        return
    score = outcome.score
    if score is None:
        return
    whose = _whose(run_id, client, outcome)
    judged = score.judged
    details = dict(score.details)
    if judged is not None and judged.output is not None:
        # The provider's id for the verdict, to find it in the provider's own records.
        response_id = judged.output.extras.get("response_id")
        if response_id:
            details["judge_response_id"] = response_id
    common = {
        **whose,
        "request_key": answer.request_key,
        "judge_model": judged.model if judged else None,
        "judge_request_key": judged.request_key if judged else None,
        "judge_prompt_hash": judged.prompt_hash if judged else None,
        "judge_params_json": _json(judged.params) if judged else None,
        "judge_reply": (judged.text or judged.error) if judged else None,
        "details_json": _json(details) if details else None,
        "scorer_version": scorer_version,
    }
    for metric, value in score.values.items():
        yield ScoreRow(
            **common, metric=metric, value=float(value), status="scored", unscored_reason=None
        )
    for metric, reason in score.unscored.items():
        yield ScoreRow(
            **common, metric=metric, value=None, status="unscored", unscored_reason=reason
        )
