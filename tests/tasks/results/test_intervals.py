"""95% intervals of headline metrics: over many seeds, the intervals of verdicts drawn with a
known accuracy (Wilson) and of bootstrapped metrics (a mean of values, TB-Bench's mean of task
accuracies) cover the known value in about 95% of them; the run's rows get them."""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
import pytest

from roadeval.benchmarks.headline_stats import Mean, Proportion
from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.suite import Headline, ScoredItem, Suite, Verdicts
from roadeval.storage.records import MetricRow
from roadeval.tasks.results.aggregate import aggregate
from roadeval.tasks.results.headlines import headline_intervals
from roadeval.tasks.results.intervals import IntervalSettings, percentile, wilson

from support.metric_suites import MetricsOnlySuite
from support.verdicts import drawn_verdicts, scored, task_items, trip_items


class ScoresSuite(MetricsOnlySuite):
    """A suite whose per-task headline is the mean of a continuous per-item `score`."""

    name: ClassVar[str] = "scores-test"
    headline: ClassVar[tuple[Headline, ...]] = (
        Headline("score", task="", statistic=Mean("score")),
    )


def _row(suite: Suite, items: list[ScoredItem], seed: int, metric: str, task: str) -> MetricRow:
    """The metric row of one model's items, with its interval, as a run lands it."""
    rows = aggregate(suite, "m", "run", items)
    found = headline_intervals(suite, {"m": items}, rows, IntervalSettings(seed=seed), "run")
    return next(r for r in found.rows if (r.metric, r.task, r.slice) == (metric, task, ""))


# Coverage is estimated from SEEDS independent draws: its standard deviation around a true 95%
# is sqrt(0.95 * 0.05 / SEEDS), 0.69% for 1,000 draws, so 93-97% is about +-2.9 of them.
SEEDS = 1000
BAND = (0.93, 0.97)


def test_wilson_intervals_cover_a_known_accuracy_in_about_95_percent() -> None:
    """Verdicts drawn with accuracy p, read by TRIP's accuracy statistic. Wilson's own
    coverage oscillates with n and p (93-97.5% at these n: Brown, Cai and DasGupta 2001), so
    the 95% holds pooled over the grid, and each cell stays within 90-99% (its oscillation
    plus 3 standard deviations of 400 draws)."""
    statistic = Proportion("correct")
    pooled: list[float] = []
    for n in (50, 100, 200):
        items = trip_items(n)
        for p in (0.1, 0.3, 0.5, 0.7, 0.9):
            hits = 0
            for seed in range(400):
                columns = statistic.columns(drawn_verdicts(items, p, seed))
                assert columns is not None
                low, high = wilson(statistic.verdicts(columns.sum(axis=0)))
                hits += low <= p <= high
            assert 0.90 <= hits / 400 <= 0.99, (n, p, hits / 400)
            pooled.append(hits / 400)
    assert BAND[0] <= float(np.mean(pooled)) <= BAND[1], pooled


def test_bootstrap_intervals_of_a_mean_cover_the_true_mean_in_about_95_percent() -> None:
    """Continuous values (normal, mean 5): the item-by-item draw."""
    suite = ScoresSuite()
    items = task_items(["t"], 100, suite=suite.name)
    hits = 0
    for seed in range(SEEDS):
        values = np.random.default_rng(10_000 + seed).normal(5.0, 2.0, len(items))
        row = _row(suite, scored(items, values, "score"), seed, "score", "t")
        assert row.ci_low is not None and row.ci_high is not None
        hits += row.ci_low <= 5.0 <= row.ci_high
    assert BAND[0] <= hits / SEEDS <= BAND[1], hits / SEEDS


def test_bootstrap_intervals_of_a_mean_over_tasks_cover_it_in_about_95_percent() -> None:
    """TB-Bench's mean of task accuracies (percent) over two tasks at 30% and 60%: 0/1
    verdicts, so the draw by distinct rows, within each task."""
    suite = get_suite("tbbench")
    items = task_items(["A", "B"], 150)
    accuracy = np.repeat([0.3, 0.6], 150)
    hits = 0
    for seed in range(SEEDS):
        verdicts = np.random.default_rng(20_000 + seed).random(len(items)) < accuracy
        row = _row(suite, scored(items, verdicts), seed, "mean_accuracy", "*")
        assert row.ci_low is not None and row.ci_high is not None
        hits += row.ci_low <= 45.0 <= row.ci_high
    assert BAND[0] <= hits / SEEDS <= BAND[1], hits / SEEDS


def test_a_share_of_verdicts_gets_the_wilson_interval_on_its_row() -> None:
    suite = get_suite("trip")
    items = drawn_verdicts(trip_items(120), 0.6, seed=3)
    right = sum(int(entry.values["correct"]) for entry in items)
    row = _row(suite, items, 0, "accuracy", "*")
    assert (row.ci_low, row.ci_high) == pytest.approx(wilson(Verdicts(right, 120)))
    assert row.ci_low < row.value < row.ci_high


def test_tbbench_task_accuracy_intervals_are_in_percent_like_the_metric() -> None:
    suite = get_suite("tbbench")
    items = scored(task_items(["A"], 40), [k % 4 == 0 for k in range(40)])
    row = _row(suite, items, 0, "accuracy", "A")
    low, high = wilson(Verdicts(10, 40))
    assert row.value == 25.0
    assert (row.ci_low, row.ci_high) == pytest.approx((100 * low, 100 * high))


def test_the_same_seed_gives_the_same_intervals_and_another_seed_other_ones() -> None:
    suite = get_suite("trip")
    items = drawn_verdicts(trip_items(90), 0.5, seed=1)
    first = _row(suite, items, 7, "modality_penalty", "*")
    again = _row(suite, items, 7, "modality_penalty", "*")
    other = _row(suite, items, 8, "modality_penalty", "*")
    assert (first.ci_low, first.ci_high) == (again.ci_low, again.ci_high)
    assert (first.ci_low, first.ci_high) != (other.ci_low, other.ci_high)


def test_wilson_is_exact_at_the_edges_and_refuses_impossible_counts() -> None:
    low, high = wilson(Verdicts(0, 20))
    assert low == 0.0 and 0 < high < 0.2
    low, high = wilson(Verdicts(20, 20))
    assert high == 1.0 and 0.8 < low < 1
    with pytest.raises(ValueError, match="3 successes in 2 trials"):
        wilson(Verdicts(3, 2))


def test_percentile_leaves_out_resamples_where_the_metric_is_undefined() -> None:
    draws = np.array([math.nan, *np.linspace(0, 1, 101)])
    assert percentile(draws) == pytest.approx((0.025, 0.975))
    assert percentile(np.array([math.nan, math.nan])) is None


def test_a_statistic_that_disagrees_with_the_suite_is_an_error() -> None:
    """An interval around another number than the suite's would be wrong: refused, naming
    the suite, task, model and headline."""
    suite = get_suite("trip")
    items = drawn_verdicts(trip_items(30), 0.5, seed=2)
    rows = aggregate(suite, "m", "run", items)
    wrong = [
        MetricRow(**{**r.__dict__, "value": r.value + 0.1}) if r.metric == "accuracy" else r
        for r in rows
    ]
    with pytest.raises(ValueError, match=r"'trip', task '\*', model 'm'.*'accuracy'"):
        headline_intervals(suite, {"m": items}, wrong, IntervalSettings(), "run")
