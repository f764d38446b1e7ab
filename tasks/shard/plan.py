"""The plan stage: every request a shard will make, keyed and looked up, before any is made.

A planned item holds its request for each attempt the protocol may make (the first always, the
re-asks only if an answer does not read) and the stored answer to each, if there is one. From the
plan, the run knows what it will send, what it will reuse and, roughly, what it will cost, before
the first call: the `plan` table is what dry runs, budgets and reruns are queries over.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pyarrow as pa

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.messages import ImageRef, Message
from roadeval.benchmarks.suite import Suite
from roadeval.storage.records import SCHEMAS, ScoreRow
from roadeval.tasks.cache.responses import ResponseCache, Stored
from roadeval.tasks.calls.gateway import ModelClient
from roadeval.tasks.requests.freshness import is_fresh
from roadeval.tasks.requests.request import ModelCall, ModelRequest, messages_key_json
from roadeval.tasks.requests.tokens import input_tokens, text_tokens
from roadeval.tasks.rerun.answers import ShardBaseline, StoredOutcome


@dataclass(frozen=True)
class Shard:
    """One suite x one model x one chunk of items: the unit a Prefect task answers."""

    run_id: str
    index: int
    suite: Suite
    client: ModelClient
    items: list[Item]
    # A rescore: answers come from the store alone, and no model (the judge included) is asked.
    rescore: bool = False
    # Which of the model's independent samples the shard asks (1 unless `samples:` is set).
    sample: int = 1
    # A rerun's shard of the items whose baseline outcomes may be copied (see `plan_shards`).
    copies: bool = False
    # How its items are shown: '' as released, 'blind' with every image blacked out (planned
    # over the blind renders); every row the shard lands says so (`AboutItem.variant`).
    variant: str = ""

    @property
    def name(self) -> str:
        """The shard's landing name, unique in the store."""
        return f"{self.run_id}-{self.index:05d}"

    @property
    def fresh_since(self) -> datetime | None:
        """The oldest a stored answer of the shard's model may be to be reused (None: any)."""
        return self.client.fresh_since


@dataclass(frozen=True, slots=True)
class PlannedItem:
    """One item's requests, attempt by attempt, and the answers the store already holds; on a
    rerun, the baseline's whole outcome when it may be copied (`reused`: neither asked nor
    scored again), else the baseline's score rows of the item, to say what moved."""

    item: Item
    requests: tuple[ModelRequest, ...]
    # The store's answer to each attempt's request (empty for a copied outcome: its answers
    # are the baseline's chain, `reused`, never made: see `answered`).
    stored: tuple[ModelCall | None, ...]
    images: int
    prompt_tokens_est: int | None
    reused: StoredOutcome | None = None
    baseline_scores: tuple[ScoreRow, ...] = ()
    # Per attempt, whether the store's answer was passed over as older than the model's
    # `reuse_for` (so the request is asked again); empty when none was.
    stale: tuple[bool, ...] = ()

    def was_stale(self, index: int) -> bool:
        """Whether the request of attempt `index` (from 0) is asked again for being stale."""
        return index < len(self.stale) and self.stale[index]

    def answered(self, index: int) -> bool:
        """Whether the request of attempt `index` (from 0) has its answer already: the
        store's, or a copied outcome's."""
        if self.reused is not None:
            return index < len(self.reused.keys)
        return self.stored[index] is not None


@dataclass(frozen=True)
class ShardPlan:
    shard: Shard
    items: tuple[PlannedItem, ...]
    # The run the plan was compared with (None: no baseline).
    baseline_run_id: str | None = None

    @property
    def asks(self) -> bool:
        """Whether any item is to be asked or scored (not copied whole from the baseline)."""
        return any(planned.reused is None for planned in self.items)


def estimate_prompt_tokens(client: ModelClient, messages: Sequence[Message]) -> int | None:
    """The prompt's text tokens by the model's tokenizer where LiteLLM has one (images are
    counted apart), when the run reserves tokens (a budget, a tpm limit); else None: counting
    costs a tokenizer pass per item, and a dry run counts for itself."""
    if client.spec.is_baseline or not client.gate.counts_tokens:
        return None
    return text_tokens(client.spec.model, messages)


@dataclass(frozen=True)
class SharedPrompt:
    """An item's messages and their encoding for the request key (`messages_key_json`)."""

    messages: list[Message]
    json: str


_PROMPTS: weakref.WeakKeyDictionary[Suite, dict[tuple[str, tuple[str, ...]], SharedPrompt]] = (
    weakref.WeakKeyDictionary()
)
_PROMPTS_LOCK = threading.Lock()


def _prompts_of(suite: Suite) -> dict[tuple[str, tuple[str, ...]], SharedPrompt]:
    memo = _PROMPTS.get(suite)
    if memo is None:
        with _PROMPTS_LOCK:  # a WeakKeyDictionary's setdefault is several steps
            memo = _PROMPTS.setdefault(suite, {})
    return memo


def shared_prompt(suite: Suite, item: Item, images: Sequence[ImageRef]) -> SharedPrompt:
    """The item's messages, built and encoded once per suite and shared by every model's
    requests (a prompt does not depend on the model; nothing mutates messages): a panel of 20
    models holds one copy of each prompt, not 20, and encodes it once for all their keys.

    No lock per item: a dict's `get` and `setdefault` of a key of strings are each atomic under
    the GIL, and a lock taken twice per item by every model's planner at once makes a convoy
    (five threads over 10,000 items: 0.30 s with it, 0.06 s without)."""
    key = (item.content_hash, tuple(image.sha256 for image in images))
    memo = _prompts_of(suite)
    found = memo.get(key)
    if found is not None:
        return found
    messages = suite.prompt(item, images)
    # Two planners may build the same prompt at once: both get the first one kept.
    return memo.setdefault(key, SharedPrompt(messages, messages_key_json(messages)))


def plan_item(
    shard: Shard,
    item: Item,
    images: Sequence[ImageRef],
    cache: ResponseCache,
    baseline: ShardBaseline | None = None,
) -> PlannedItem:
    suite, client = shard.suite, shard.client
    prompt = shared_prompt(suite, item, images)
    messages = prompt.messages
    settings = suite.generation_for(item)
    text = estimate_prompt_tokens(client, messages)
    tokens_in = None if text is None else input_tokens(client.spec.model, messages, text)
    requests = tuple(
        client.request(
            messages,
            attempt,
            item=item,
            settings=settings,
            tokens_in_est=tokens_in,
            sample=shard.sample,
            messages_json=prompt.json,
        )
        for attempt in range(1, suite.max_attempts + 1)
    )
    if baseline is None:
        stored, stale = stored_answers(requests, cache.lookup, cache.fresh_since)
        return PlannedItem(item, requests, stored, len(images), text, stale=stale)
    answers = baseline.answers
    # An outcome is an item's, of one sample, shown one way: a blind answer never stands in
    # for a released one.
    whose = (item.item_id, shard.sample, shard.variant)
    outcome = answers.outcomes.get(whose)
    keys = [request.key for request in requests]
    if (
        baseline.copy_scores
        and outcome is not None
        and outcome.matches(item.content_hash, keys)
        and outcome.fresh(cache.fresh_since, baseline.verdicts_since)
    ):
        return PlannedItem(item, requests, (), len(images), text, reused=outcome)
    stored, stale = stored_answers(requests, cache.lookup, cache.fresh_since, answers.stored)
    return PlannedItem(
        item,
        requests,
        stored,
        len(images),
        text,
        baseline_scores=answers.scores(whose),
        stale=stale,
    )


def stored_answers(
    requests: Sequence[ModelRequest],
    look: Callable[[ModelRequest], Stored],
    since: datetime | None,
    known: Callable[[str], ModelCall | None] | None = None,
) -> tuple[tuple[ModelCall | None, ...], tuple[bool, ...]]:
    """The stored answer to each attempt's request that may be reused (bought `since` then,
    or whenever if None): the baseline's (`known`, read in bulk) or, failing that, the
    response cache's (`look`, which passes over older ones); and per attempt, whether a
    stored answer was passed over for its age. A re-ask is looked up only when the attempt
    before it was found: one is only ever made after the other, so this saves the look-ups
    (one request each on S3) that would find nothing."""
    found: list[ModelCall | None] = []
    stale: list[bool] = []
    for request in requests:
        if found and found[-1] is None:
            found.append(None)
            stale.append(False)
            continue
        answer = known(request.key) if known is not None else None
        if answer is not None and is_fresh(answer.answered_at, since):
            found.append(answer)
            stale.append(False)
            continue
        # The baseline's answer is too old: the cache may hold a later one.
        stored = look(request)
        found.append(stored.answer)
        stale.append(stored.answer is None and (stored.stale is not None or answer is not None))
    return tuple(found), tuple(stale)


def plan_shard(
    shard: Shard,
    renders: dict[str, tuple[ImageRef, ...]],
    cache: ResponseCache,
    baseline: ShardBaseline | None = None,
) -> ShardPlan:
    """Plan every item of the shard from its renders, and from the baseline run's answers on
    a rerun (CPU and store look-ups: run it off the gateway loop); an answer older than the
    model's `reuse_for` is not reused."""
    cache = cache.as_of(shard.fresh_since)
    return ShardPlan(
        shard,
        tuple(
            plan_item(shard, item, renders[item.item_id], cache, baseline) for item in shard.items
        ),
        baseline.answers.run_id if baseline is not None else None,
    )


def plan_table(plan: ShardPlan, judge: ModelClient | None, now: datetime) -> pa.Table:
    """The plan table's rows for a shard, as Arrow columns of `PlanRow`'s schema: one row per
    request the protocol may make, the re-asks and the judge call marked conditional (a judge
    request is known only once there is an answer to judge, so it has no key yet). Built by
    column: a rerun lands a plan row for each of its 50,000 copied items too."""
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
        rows = len(requests) + int(judged)
        for name, value in (
            ("suite", item.suite),
            ("task", item.task),
            ("content_hash", item.content_hash),
            ("images", planned.images),
        ):
            columns[name].extend([value] * rows)
        item_of.extend([item.item_id] * rows)
        for index, request in enumerate(requests):
            who.append(asked[0])
            columns["model_string"].append(asked[1])
            columns["api_base"].append(asked[2])
            columns["role"].append(request.role)
            columns["request_key"].append(request.key)
            columns["attempt"].append(request.attempt)
            columns["conditional"].append(request.attempt > 1)
            columns["answered"].append(planned.answered(index))
            columns["stale"].append(planned.was_stale(index))
            columns["params_json"].append(encoded(request.params))
            columns["prompt_tokens_est"].append(planned.prompt_tokens_est)
            columns["max_output_tokens"].append(request.params.get("max_tokens"))
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
    count = len(item_of)
    constant: tuple[tuple[str, object], ...] = (
        ("run_id", shard.run_id),
        ("sample", shard.sample),
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
