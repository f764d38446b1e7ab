"""Paired differences between models on a suite's headline metrics: identical answers are never
marked different, a large gap is, the bootstrap is paired (the same resampled items for both),
and models scored on different items are compared on those both were scored on."""

from __future__ import annotations

import numpy as np
import pytest

from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.suite import ScoredItem
from roadeval.storage.records import MetricPairRow
from roadeval.tasks.results.aggregate import aggregate
from roadeval.tasks.results.headlines import HeadlineResults, headline_intervals
from roadeval.tasks.results.intervals import IntervalSettings

from support.verdicts import drawn_verdicts, scored, trip_items

TRIP_HEADLINES = {"accuracy", "modality_penalty", "difficulty_penalty"}


def _compare(models: dict[str, list[ScoredItem]], seed: int = 0) -> HeadlineResults:
    suite = get_suite("trip")
    rows = [row for model, items in models.items() for row in aggregate(suite, model, "r", items)]
    return headline_intervals(suite, models, rows, IntervalSettings(seed=seed), "r")


def _pair(results: HeadlineResults, metric: str) -> MetricPairRow:
    return next(pair for pair in results.pairs if pair.metric == metric)


@pytest.mark.parametrize("seed", range(6))
def test_two_models_with_identical_answers_are_never_marked_different(seed: int) -> None:
    items = trip_items(150)
    answers = drawn_verdicts(items, 0.3 + 0.08 * seed, seed)
    twin = [ScoredItem(e.item, e.parsed, dict(e.values)) for e in answers]
    found = _compare({"a": answers, "b": twin}, seed)
    assert {pair.metric for pair in found.pairs} == TRIP_HEADLINES
    for pair in found.pairs:
        assert (pair.difference, pair.ci_low, pair.ci_high) == (0.0, 0.0, 0.0), pair
        assert not pair.significant
        assert (pair.model_a, pair.model_b, pair.n, pair.task) == ("a", "b", 150, "*")


def test_a_large_real_gap_is_marked_significant() -> None:
    items = trip_items(200)
    found = _compare(
        {"strong": drawn_verdicts(items, 0.8, 1), "weak": drawn_verdicts(items, 0.4, 2)}
    )
    pair = _pair(found, "accuracy")
    values = {r.model: r.value for r in found.rows if (r.metric, r.slice) == ("accuracy", "")}
    assert (pair.model_a, pair.model_b) == ("strong", "weak")
    assert pair.difference == pytest.approx(values["strong"] - values["weak"])
    assert pair.difference > 0.25
    assert pair.significant and 0 < pair.ci_low < pair.difference < pair.ci_high


def test_the_bootstrap_is_paired_so_a_consistent_small_gap_is_significant() -> None:
    """b answers as a does except on 12 items of 300, all of which a gets right: 4 points
    apart, their own intervals overlap, but every resample has b at most as good as a."""
    items = trip_items(300)
    right = np.random.default_rng(5).random(300) < 0.6
    worse = right.copy()
    worse[np.flatnonzero(right)[:12]] = False
    found = _compare({"a": scored(items, right), "b": scored(items, worse)})
    rows = {r.model: r for r in found.rows if (r.metric, r.slice) == ("accuracy", "")}
    assert rows["b"].ci_high > rows["a"].ci_low  # the intervals overlap
    pair = _pair(found, "accuracy")
    assert pair.difference == pytest.approx(12 / 300)
    assert pair.significant and pair.ci_low > 0


def test_models_scored_on_different_items_are_compared_on_those_both_have() -> None:
    """b lost 30 items (its calls failed): the pair covers the 120 both were scored on, and
    its difference is theirs, not the two rows' values."""
    items = trip_items(150)
    a = drawn_verdicts(items, 0.7, 3)
    b = drawn_verdicts(items, 0.5, 4)[30:]
    found = _compare({"a": a, "b": b})
    pair = _pair(found, "accuracy")
    shared_a = np.mean([e.values["correct"] for e in a[30:]])
    shared_b = np.mean([e.values["correct"] for e in b])
    assert pair.n == 120
    assert pair.difference == pytest.approx(shared_a - shared_b)
    rows = {r.model: r for r in found.rows if (r.metric, r.slice) == ("accuracy", "")}
    assert rows["a"].n == 150 and rows["a"].ci_low is not None
    assert pair.difference != pytest.approx(rows["a"].value - rows["b"].value)


def test_every_pair_of_a_panel_once_alphabetically() -> None:
    items = trip_items(60)
    models = {name: drawn_verdicts(items, 0.5, k) for k, name in enumerate("dcab")}
    found = _compare(models)
    accuracy = [(p.model_a, p.model_b) for p in found.pairs if p.metric == "accuracy"]
    assert accuracy == [("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")]
