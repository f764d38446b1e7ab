"""TRIP's offline baselines: deterministic per request (seed, prompt, attempt), registered for the
suite."""

from __future__ import annotations

from collections import Counter

from roadeval.benchmarks.item import AnswerKind, Item
from roadeval.benchmarks.registry import BaselineCall, find_baseline, get_suite
from roadeval.benchmarks.suite import ParseStatus
from roadeval.benchmarks.trip.answers import parse_reply
from roadeval.tasks.requests.request import request_key

SUITE = get_suite("trip")


def _call(item_id: str, seed: int = 7, attempt: int = 1, question: str = "") -> BaselineCall:
    """A call as the gateway makes it: keyed by the request the item's prompt sends (by default
    a question of the item's own)."""
    item = Item(
        suite="trip",
        suite_version="test",
        item_id=item_id,
        task="mcq",
        question=question or f"question {item_id}",
        options={letter: f"option {letter}" for letter in "ABCD"},
        labels={"modality": "text"},
        answer_kind=AnswerKind.CHOICE,
        reference="A",
    )
    messages = SUITE.prompt(item, SUITE.render(item))
    key = request_key("roadeval/random", {"seed": seed}, messages, attempt)
    return BaselineCall.blind(item, seed, attempt, key)


def test_random_baseline_is_deterministic_and_roughly_uniform() -> None:
    baseline = find_baseline("random", "trip", "mcq")
    assert baseline is not None
    replies = [baseline.fn(_call(f"item-{n}")) for n in range(400)]
    assert replies == [baseline.fn(_call(f"item-{n}")) for n in range(400)]
    counts = Counter(replies)
    assert set(counts) == {"A", "B", "C", "D"}
    assert all(60 <= count <= 140 for count in counts.values())
    other_seed = [baseline.fn(_call(f"item-{n}", seed=8)) for n in range(400)]
    other_attempt = [baseline.fn(_call(f"item-{n}", attempt=2)) for n in range(400)]
    assert other_seed != replies and other_attempt != replies
    assert all(parse_reply(reply).status is ParseStatus.OK for reply in replies)


def test_random_baseline_answers_the_request_not_the_item() -> None:
    """Two items whose prompts are the same send one request: one answer, whatever their ids."""
    baseline = find_baseline("random", "trip", "mcq")
    assert baseline is not None
    same = {baseline.fn(_call(f"item-{n}", question="the same question")) for n in range(40)}
    assert len(same) == 1


def test_always_a_baseline() -> None:
    baseline = find_baseline("always-a", "trip", "mcq")
    assert baseline is not None
    assert {baseline.fn(_call(f"item-{n}", seed=n)) for n in range(20)} == {"A"}
