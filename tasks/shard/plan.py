"""The plan stage: every request a shard will make, keyed and looked up, before any is made.

A planned item holds its request for each attempt the protocol may make (the first always, the
re-asks only if an answer does not read) and the stored answer to each, if there is one. From the
plan, the run knows what it will send, what it will reuse and, roughly, what it will cost, before
the first call: the `plan` table is what dry runs, budgets and reruns are queries over.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import NamedTuple

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.messages import ImageRef, Message
from roadeval.benchmarks.suite import Suite
from roadeval.storage.records import ScoreRow
from roadeval.tasks.cache.responses import ResponseCache, Stored
from roadeval.tasks.calls.gateway import ModelClient
from roadeval.tasks.requests.freshness import is_fresh
from roadeval.tasks.requests.request import (
    ModelCall,
    ModelRequest,
    messages_key_json,
    sample_keys,
)
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
    # How many samples of each item the shard stands for, from `sample` on: 1 for a shard that
    # is asked; a dry run's shard plans every sample of its items at once, as counts
    # (`PlannedItem.samples`), not a shard and a planned item per sample.
    samples: int = 1
    # A dry run's shard, planned and never asked: its look-ups may read one listing of the
    # store's answers (`ResponseCache(counted=True)`), since nothing is answered meanwhile.
    counted: bool = False

    @property
    def name(self) -> str:
        """The shard's landing name, unique in the store."""
        return f"{self.run_id}-{self.index:05d}"

    @property
    def fresh_since(self) -> datetime | None:
        """The oldest a stored answer of the shard's model may be to be reused (None: any)."""
        return self.client.fresh_since


@dataclass(frozen=True, slots=True)
class SampleRun:
    """Samples of an item, one after another, whose request at one attempt the store answers
    alike (all answered, or none; and of those not answered, all stale or none): `count` of
    them from sample `first`, whose request key it is (the others' keys differ only by their
    sample)."""

    first: int
    count: int
    answered: bool
    request_key: str
    # Asked again: the store's answer to each is older than the model's `reuse_for`.
    stale: bool = False


def _answered(reused: StoredOutcome | None, stored: Sequence[ModelCall | None], index: int) -> bool:
    """Whether attempt `index` (from 0) is answered: by a copied outcome's chain (which holds
    every attempt it made), else by an answer stored for it."""
    if reused is not None:
        return index < len(reused.keys)
    return stored[index] is not None


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
    # A dry run's item of several samples (`Shard.samples`): per attempt, every sample's
    # answer as counts, in runs (the first sample's own is also in `stored` or `reused`).
    # Empty: the item is one sample, that of `requests`.
    samples: tuple[tuple[SampleRun, ...], ...] = ()

    def answered(self, index: int) -> bool:
        """Whether the request of attempt `index` (from 0) has its answer already: the
        store's, or a copied outcome's (of the first sample, for a dry run's item)."""
        return _answered(self.reused, self.stored, index)

    def was_stale(self, index: int) -> bool:
        """Whether the request of attempt `index` (from 0) is asked again for being stale (of
        the first sample, for a dry run's item)."""
        return index < len(self.stale) and self.stale[index]

    @property
    def sample_count(self) -> int:
        """The samples of the item this stands for."""
        return sum(run.count for run in self.samples[0]) if self.samples else 1

    def answered_samples(self, index: int) -> int:
        """Of the samples this stands for, how many have attempt `index` answered."""
        if not self.samples:
            return int(self.answered(index))
        return sum(run.count for run in self.samples[index] if run.answered)

    def stale_samples(self, index: int) -> int:
        """Of the samples this stands for, how many ask attempt `index` again for being
        stale."""
        if not self.samples:
            return int(self.was_stale(index))
        return sum(run.count for run in self.samples[index] if run.stale)


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
    keys = [request.key for request in requests]
    found = _found(shard.sample, shard.variant, item, keys, cache, baseline)
    scores: tuple[ScoreRow, ...] = ()
    if baseline is not None and found.reused is None:
        # Kept to say what moved (an outcome copied moves nothing).
        scores = baseline.answers.scores((item.item_id, shard.sample, shard.variant))
    planned = PlannedItem(
        item, requests, found.stored, len(images), text, found.reused, scores, found.stale
    )
    if shard.samples == 1:
        return planned
    return replace(planned, samples=_sample_runs(shard, planned, cache, baseline))


class _Found(NamedTuple):
    """What the store holds for one sample of an item: answers stored (and per attempt,
    whether one was passed over as stale), or an outcome to copy."""

    stored: tuple[ModelCall | None, ...]
    reused: StoredOutcome | None = None
    stale: tuple[bool, ...] = ()

    def answered(self, index: int) -> bool:
        return _answered(self.reused, self.stored, index)

    def was_stale(self, index: int) -> bool:
        return index < len(self.stale) and self.stale[index]


def _found(
    sample: int,
    variant: str,
    item: Item,
    keys: Sequence[str],
    cache: ResponseCache,
    baseline: ShardBaseline | None,
) -> _Found:
    """What the store holds for one sample of the item, asked by request `keys` attempt by
    attempt, as of the cache's `fresh_since`: the baseline's outcome to copy, else the answers
    stored that may be reused."""
    since = cache.fresh_since
    if baseline is None:
        stored, stale = stored_answers(keys, cache.lookup_key, since)
        return _Found(stored, stale=stale)
    answers = baseline.answers
    # An outcome is an item's, of one sample, shown one way: a blind answer never stands in
    # for a released one.
    outcome = answers.outcomes.get((item.item_id, sample, variant))
    if (
        baseline.copy_scores
        and outcome is not None
        and outcome.matches(item.content_hash, keys)
        and outcome.fresh(since, baseline.verdicts_since)
    ):
        return _Found((), reused=outcome)
    stored, stale = stored_answers(keys, cache.lookup_key, since, answers.stored)
    return _Found(stored, stale=stale)


def _sample_runs(
    shard: Shard, planned: PlannedItem, cache: ResponseCache, baseline: ShardBaseline | None
) -> tuple[tuple[SampleRun, ...], ...]:
    """Every sample of a dry run's item (`Shard.samples`), looked up as its own plan would
    (fresh or stale by its own key's stored answer), kept as runs per attempt: a hundred
    samples of a prompt nobody answered yet are one run, not a hundred planned items (only
    their keys are made: `sample_keys`)."""
    if baseline is None and cache.holds_none():
        # Nothing is stored, stale or not: every sample is still to ask, one run per attempt,
        # and no later sample's key need be made (a dry run's time does not grow with samples).
        return tuple(
            (SampleRun(shard.sample, shard.samples, False, r.key),) for r in planned.requests
        )
    later = range(shard.sample + 1, shard.sample + shard.samples)
    keys_by_attempt = [sample_keys(request, later) for request in planned.requests]
    # Per attempt, the runs ended so far, and the one going on (ended when a sample differs).
    ended: list[list[SampleRun]] = [[] for _ in planned.requests]
    going = [
        SampleRun(shard.sample, 1, planned.answered(index), request.key, planned.was_stale(index))
        for index, request in enumerate(planned.requests)
    ]
    counts = [1] * len(going)
    for sample, keys in zip(later, zip(*keys_by_attempt, strict=True), strict=True):
        found = _found(sample, shard.variant, planned.item, keys, cache, baseline)
        for index, key in enumerate(keys):
            done, stale = found.answered(index), found.was_stale(index)
            if (going[index].answered, going[index].stale) == (done, stale):
                counts[index] += 1
                continue
            ended[index].append(replace(going[index], count=counts[index]))
            going[index], counts[index] = SampleRun(sample, 1, done, key, stale), 1
    return tuple(
        (*runs, replace(run, count=count))
        for runs, run, count in zip(ended, going, counts, strict=True)
    )


def stored_answers(
    keys: Sequence[str],
    look: Callable[[str], Stored],
    since: datetime | None,
    known: Callable[[str], ModelCall | None] | None = None,
) -> tuple[tuple[ModelCall | None, ...], tuple[bool, ...]]:
    """The stored answer to each attempt's request (by its key) that may be reused (bought
    `since` then, or whenever if None): the baseline's (`known`, read in bulk) or, failing
    that, the response cache's (`look`, which passes over older ones); and per attempt,
    whether a stored answer was passed over for its age. A re-ask is looked up only when the
    attempt before it was found: one is only ever made after the other, so this saves the
    look-ups (one request each on S3) that would find nothing."""
    found: list[ModelCall | None] = []
    stale: list[bool] = []
    for key in keys:
        if found and found[-1] is None:
            found.append(None)
            stale.append(False)
            continue
        answer = known(key) if known is not None else None
        if answer is not None and is_fresh(answer.answered_at, since):
            found.append(answer)
            stale.append(False)
            continue
        # The baseline's answer is too old: the cache may hold a later one.
        stored = look(key)
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
