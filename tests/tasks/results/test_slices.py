"""Slice rows: per label (in the suite's order), per label value (sorted) and per slice metric
(in the suite's order), the mean of the metric over the task's items that carry the label and
the metric, in item order; an item without the label is in no slice of it."""

from __future__ import annotations

from typing import ClassVar

from roadeval.benchmarks.suite import ParsedAnswer, ParseStatus, ScoredItem
from roadeval.tasks.results.aggregate import ALL, aggregate

from support.metric_suites import MetricsOnlySuite
from support.verdicts import task_items


class SlicedSuite(MetricsOnlySuite):
    """Two labels and two slice metrics, in an order that is not alphabetical."""

    name: ClassVar[str] = "sliced-test"
    slice_labels: ClassVar[tuple[str, ...]] = ("weather", "area")
    slice_metrics: ClassVar[tuple[str, ...]] = ("score", "correct")


def test_slice_rows_are_means_per_label_value_and_metric_in_a_fixed_order() -> None:
    items = task_items(["t"], 6)
    labels = [
        {"weather": "rain", "area": "urban"},
        {"weather": "clear", "area": "urban"},
        {"weather": "rain"},  # no area: in no area slice
        {"weather": "clear", "area": "rural"},
        {"area": "rural"},  # no weather: in no weather slice
        {"weather": "rain", "area": "urban"},
    ]
    values: list[dict[str, float]] = [
        {"score": 0.5, "correct": 1.0},
        {"score": 0.25, "correct": 0.0},
        {"score": 1.0, "correct": 1.0},
        {"score": 0.75},  # no verdict: counted in the score slices only
        {"score": 0.0, "correct": 0.0},
        {"score": 0.1, "correct": 0.0},
    ]
    parsed = ParsedAnswer(ParseStatus.OK, "x", "label")
    scored = [
        ScoredItem(item.model_copy(update={"labels": label}), parsed, value)
        for item, label, value in zip(items, labels, values, strict=True)
    ]
    rows = [
        (r.slice, r.slice_value, r.metric, r.value, r.n)
        for r in aggregate(SlicedSuite(), "m", "run", scored)
        if r.slice != ALL
    ]
    assert rows == [
        ("weather", "clear", "score", (0.25 + 0.75) / 2, 2),
        ("weather", "clear", "correct", 0.0, 1),
        ("weather", "rain", "score", (0.5 + 1.0 + 0.1) / 3, 3),
        ("weather", "rain", "correct", 2 / 3, 3),
        ("area", "rural", "score", (0.75 + 0.0) / 2, 2),
        ("area", "rural", "correct", 0.0, 1),
        ("area", "urban", "score", (0.5 + 0.25 + 0.1) / 3, 3),
        ("area", "urban", "correct", 1 / 3, 3),
    ]
