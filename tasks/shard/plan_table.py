"""A shard's plan as the rows of the `plan` table: one per request the protocol may make, or, for
a dry run's item of several samples, one per run of samples answered alike (`samples`) and
stale alike (`stale`: the store's answer older than the model's `reuse_for`, asked again)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pyarrow as pa

from roadeval.storage.records import SCHEMAS
from roadeval.tasks.calls.gateway import ModelClient
from roadeval.tasks.shard.plan import SampleRun, ShardPlan


def plan_table(plan: ShardPlan, judge: ModelClient | None, now: datetime) -> pa.Table:
    """The plan table's rows for a shard, as Arrow columns of `PlanRow`'s schema: one row per
    request the protocol may make, the re-asks and the judge call marked conditional (a judge
    request is known only once there is an answer to judge, so it has no key yet). Built by
    column: a rerun lands a plan row for each of its 50,000 copied items too. A dry run's item
    of several samples has a row per attempt and run of samples (`PlannedItem.samples`), and
    one judge row for them all."""
    shard, client = plan.shard, plan.shard.client
    columns: dict[str, list[Any]] = {name: [] for name in SCHEMAS["plan"].names}
    # Requests of one protocol setting share one params dict (see `ModelClient.request`):
    # encode each once per shard, not once per request.
    params_json: dict[int, str] = {}

    def encoded(params: dict[str, Any]) -> str:
        text = params_json.get(id(params))
        if text is None:
            text = params_json[id(params)] = json.dumps(params, sort_keys=True)
        return text

    judged = judge is not None and shard.suite.uses_judge
    asked = (client.spec.label, client.spec.model, client.api_base)
    judging = (judge.spec.label, judge.spec.model, judge.api_base) if judge is not None else None
    item_of, who = columns["item_id"], columns["model"]
    for planned in plan.items:
        item = planned.item
        requests = planned.requests
        # Per attempt, its runs of samples: the shard's one sample, unless the item counts more.
        runs = planned.samples or tuple(
            (
                SampleRun(
                    shard.sample, 1, planned.answered(index), request.key, planned.was_stale(index)
                ),
            )
            for index, request in enumerate(requests)
        )
        rows = sum(len(attempt) for attempt in runs) + int(judged)
        for name, value in (
            ("suite", item.suite),
            ("task", item.task),
            ("content_hash", item.content_hash),
            ("images", planned.images),
        ):
            columns[name].extend([value] * rows)
        item_of.extend([item.item_id] * rows)
        for request, attempt_runs in zip(requests, runs, strict=True):
            for run in attempt_runs:
                who.append(asked[0])
                columns["model_string"].append(asked[1])
                columns["api_base"].append(asked[2])
                columns["role"].append(request.role)
                columns["request_key"].append(run.request_key)
                columns["attempt"].append(request.attempt)
                columns["conditional"].append(request.attempt > 1)
                columns["answered"].append(run.answered)
                columns["stale"].append(run.stale)
                columns["params_json"].append(encoded(request.params))
                columns["prompt_tokens_est"].append(planned.prompt_tokens_est)
                columns["max_output_tokens"].append(request.params.get("max_tokens"))
                columns["sample"].append(run.first)
                columns["samples"].append(run.count)
        if judged:
            assert judging is not None
            who.append(judging[0])
            columns["model_string"].append(judging[1])
            columns["api_base"].append(judging[2])
            columns["role"].append("judge")
            columns["request_key"].append(None)
            columns["attempt"].append(1)
            columns["conditional"].append(True)
            columns["answered"].append(False)
            # Which verdict it asks is known only once there is an answer to judge.
            columns["stale"].append(None)
            columns["params_json"].append("{}")
            columns["prompt_tokens_est"].append(None)
            columns["max_output_tokens"].append(None)
            columns["sample"].append(shard.sample)
            columns["samples"].append(planned.sample_count)
    count = len(item_of)
    constant: tuple[tuple[str, object], ...] = (
        ("run_id", shard.run_id),
        ("variant", shard.variant),
        ("answer_model", client.spec.label),
        ("created_at", now),
    )
    for name, fixed in constant:
        columns[name] = [fixed] * count
    schema = SCHEMAS["plan"]
    return pa.Table.from_arrays(
        [pa.array(columns[f.name], type=f.type) for f in schema], schema=schema
    )
