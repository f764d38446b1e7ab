"""TRIP's offline baselines: deterministic per (seed, item, attempt), registered for the suite."""

from __future__ import annotations

from collections import Counter

from roadeval.benchmarks.item import AnswerKind, Item
from roadeval.benchmarks.registry import BaselineCall, find_baseline
from roadeval.benchmarks.suite import ParseStatus
from roadeval.benchmarks.trip.answers import parse_reply


def _call(item_id: str, seed: int = 7, attempt: int = 1) -> BaselineCall:
    item = Item(
        suite="trip",
        suite_version="test",
        item_id=item_id,
        task="mcq",
        question="question",
        answer_kind=AnswerKind.CHOICE,
        reference="A",
    )
    return BaselineCall.blind(item, seed, attempt)


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


def test_always_a_baseline() -> None:
    baseline = find_baseline("always-a", "trip", "mcq")
    assert baseline is not None
    assert {baseline.fn(_call(f"item-{n}", seed=n)) for n in range(20)} == {"A"}
