"""Clustered uncertainty: where a suite's items share a scene (`Suite.cluster_keys`), headline
intervals and paired differences resample whole scenes. On 20 scenes x 12 questions answered
alike within each scene, the clustered interval is wider than the independent one and covers
the true rate in about 95% of panels (the independent one far less often); a paired
difference is drawn by scene; a suite without clusters keeps its intervals to the bit."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pytest

from roadeval.benchmarks.headline_stats import Mean, Proportion
from roadeval.benchmarks.item import AnswerKind, Item
from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.suite import GroupValue, Headline, ScoredItem, Suite, Verdicts
from roadeval.storage.records import MetricPairRow, MetricRow
from roadeval.tasks.results.aggregate import aggregate
from roadeval.tasks.results.clusters import suite_clusters
from roadeval.tasks.results.headlines import HeadlineResults, headline_intervals
from roadeval.tasks.results.intervals import (
    CLUSTERED,
    WILSON,
    IntervalSettings,
    percentile,
    seeded,
    wilson,
)
from roadeval.tasks.results.resampling import resampled_sums

from support.metric_suites import MetricsOnlySuite
from support.verdicts import drawn_verdicts, scored, trip_items

SCENES = 20
QUESTIONS = 12


class Independent(MetricsOnlySuite):
    """Twelve tasks (a question each) over scenes; accuracy suite-wide and per task, a mean
    score per task; no clusters declared."""

    name: ClassVar[str] = "scenes-test"
    headline: ClassVar[tuple[Headline, ...]] = (
        Headline("accuracy", statistic=Proportion("correct")),
        Headline("accuracy", task="", statistic=Proportion("correct")),
        Headline("score", task="", statistic=Mean("score")),
    )

    def summarize(self, task: str, scored: Any) -> dict[str, float]:
        return {
            "accuracy": float(np.mean([e.values["correct"] for e in scored])),
            "score": float(np.mean([e.values["score"] for e in scored])),
        }

    def overall(self, per_task: dict[str, dict[str, float]]) -> dict[str, float]:
        return {}

    def group_values(self, scored: Any) -> list[GroupValue]:
        right = [e.values["correct"] for e in scored]
        return [GroupValue("*", "", "", "accuracy", float(np.mean(right)), len(right))]


class Scenes(Independent):
    """The same suite, its items clustered by the scene they ask of."""

    cluster_unit: ClassVar[str] = "scenes"

    def cluster_keys(self, item: Item) -> tuple[str, ...]:
        return (f"scene/{item.extra['scene']}",)


class OwnKeys(Independent):
    """The same suite with a key per item: clusters of one item, so none that matters."""

    def cluster_keys(self, item: Item) -> tuple[str, ...]:
        return (item.item_id,)


def scene_items(scenes: int = SCENES) -> list[Item]:
    return [
        Item(
            suite="scenes-test",
            suite_version="test",
            item_id=f"s{scene:03d}-q{question:02d}",
            task=f"Q{question:02d}",
            question=f"question {question} of scene {scene}",
            answer_kind=AnswerKind.CHOICE,
            reference="A",
            extra={"scene": scene},
        )
        for scene in range(scenes)
        for question in range(QUESTIONS)
    ]


def answered(items: list[Item], right: np.ndarray, scores: np.ndarray | None = None) -> list[Any]:
    """Each item scored `correct` by its scene's verdict (`right`, one per scene), and
    `score` (by default the verdict)."""
    values = np.repeat(right.astype(float), QUESTIONS)
    extra = values if scores is None else scores
    found = scored(items, values)
    return [
        ScoredItem(e.item, e.parsed, {**e.values, "score": float(s)})
        for e, s in zip(found, extra, strict=True)
    ]


def intervals(suite: Suite, models: dict[str, list[ScoredItem]], seed: int = 0) -> HeadlineResults:
    rows = [row for model, items in models.items() for row in aggregate(suite, model, "r", items)]
    return headline_intervals(suite, models, rows, IntervalSettings(seed=seed), "r")


def wide_row(found: HeadlineResults, model: str = "m") -> MetricRow:
    return next(
        r
        for r in found.rows
        if (r.model, r.task, r.metric, r.slice) == (model, "*", "accuracy", "")
    )


def wide_pair(found: HeadlineResults) -> MetricPairRow:
    return next(p for p in found.pairs if (p.task, p.metric) == ("*", "accuracy"))


def test_a_clustered_interval_is_wider_and_covers_the_true_rate() -> None:
    """100 panels: each scene's true rate drawn from Beta(2, 2) (mean 0.5), the model right
    or wrong on all 12 questions of a scene alike. The clustered interval covers 0.5 in at
    least 93 panels and is wider than the independent (Wilson, 240 items) one in every panel;
    the independent one covers it far less often."""
    items = scene_items()
    clustered, independent = Scenes(), Independent()
    covered = {"clustered": 0, "independent": 0}
    for panel in range(100):
        rng = np.random.default_rng(10_000 + panel)
        right = rng.random(SCENES) < rng.beta(2.0, 2.0, SCENES)
        answers = {"m": answered(items, right)}
        one = wide_row(intervals(clustered, answers, seed=panel))
        other = wide_row(intervals(independent, answers, seed=panel))
        assert one.value == other.value
        assert one.ci_low is not None and one.ci_high is not None
        assert other.ci_low is not None and other.ci_high is not None
        assert one.ci_high - one.ci_low > other.ci_high - other.ci_low, panel
        covered["clustered"] += one.ci_low <= 0.5 <= one.ci_high
        covered["independent"] += other.ci_low <= 0.5 <= other.ci_high
    assert covered["clustered"] >= 93, covered
    assert covered["independent"] <= 75, covered


def test_the_manifest_records_the_clustered_method_and_the_number_of_clusters() -> None:
    items = scene_items()
    right = np.arange(SCENES) % 3 == 0
    found = intervals(Scenes(), {"m": answered(items, right)})
    methods = {(h.task, h.metric): h for h in found.methods}
    wide = methods[("*", "accuracy")]
    assert (wide.method, wide.clusters, wide.items, wide.unit) == (CLUSTERED, 20, 240, "scenes")
    # A scene is asked in every task, so the tasks are joined into one stratum.
    assert wide.strata == []
    # Within one task no two items share a scene: item by item, Wilson, as without clusters.
    task = methods[("Q00", "accuracy")]
    assert (task.method, task.clusters, task.items, task.unit) == (WILSON, None, 20, "")
    assert {t for t, metric in methods if metric == "accuracy"} == {
        "*",
        *(f"Q{q:02d}" for q in range(QUESTIONS)),
    }
    # The share of verdicts gets no Wilson interval once its verdicts are clustered.
    row = wide_row(found)
    assert (row.ci_low, row.ci_high) != pytest.approx(wilson(Verdicts(12 * 7, 240)))


def test_a_paired_difference_resamples_scenes_for_both_models() -> None:
    """b answers as a does except on the 2 scenes (24 questions) a gets right and b wrong.
    Item by item that is 24 discordant items of 240, clearly significant; by scene it is 2
    discordant scenes of 20, which a resample misses about one time in eight: the pair's
    interval reaches 0 and the difference is not significant."""
    items = scene_items()
    right = np.arange(SCENES) % 2 == 0
    worse = right.copy()
    worse[[0, 2]] = False
    models = {"a": answered(items, right), "b": answered(items, worse)}
    by_item = wide_pair(intervals(Independent(), models))
    by_scene = wide_pair(intervals(Scenes(), models))
    assert by_item.difference == by_scene.difference == pytest.approx(2 / SCENES)
    assert by_item.n == by_scene.n == 240
    assert by_item.significant and by_item.ci_low > 0
    assert not by_scene.significant and by_scene.ci_low == 0.0
    assert by_scene.ci_high > by_item.ci_high


def test_identical_answers_stay_exactly_equal_when_clustered() -> None:
    items = scene_items()
    right = np.random.default_rng(3).random(SCENES) < 0.5
    found = intervals(Scenes(), {"a": answered(items, right), "b": answered(items, right)})
    assert found.pairs
    for pair in found.pairs:
        assert (pair.difference, pair.ci_low, pair.ci_high, pair.significant) == (
            0.0,
            0.0,
            0.0,
            False,
        )


def test_without_clusters_the_intervals_are_unchanged() -> None:
    """Clusters of one item each are no clusters: the rows and pairs are those of the suite
    without clusters, to the bit; and those are Wilson's interval and the item-by-item
    bootstrap of the seeded draw, as before clusters existed. TRIP's text items (no image)
    keep their intervals likewise."""
    items = scene_items()
    rng = np.random.default_rng(8)
    models = {
        "a": answered(items, rng.random(SCENES) < 0.6, rng.normal(5, 2, SCENES * QUESTIONS)),
        "b": answered(items, rng.random(SCENES) < 0.4, rng.normal(4, 2, SCENES * QUESTIONS)),
    }
    alone, none = intervals(OwnKeys(), models, seed=4), intervals(Independent(), models, seed=4)
    assert alone.rows == none.rows and alone.pairs == none.pairs
    assert all(h.clusters is None and h.method != CLUSTERED for h in alone.methods)
    row = wide_row(alone, "a")
    right = sum(int(e.values["correct"]) for e in models["a"])
    assert (row.ci_low, row.ci_high) == wilson(Verdicts(right, 240))
    # A task's mean score: the seeded draw of its items, item by item.
    task = [e for e in models["a"] if e.item.task == "Q03"]
    task.sort(key=lambda e: e.item.item_id)
    columns = Mean("score").columns(task)
    assert columns is not None
    ids = [e.item.item_id for e in task]
    draw = seeded(4, "scenes-test", "", "Q03", *ids)
    sums = resampled_sums([columns, columns], np.zeros(len(task), np.int64), 1000, draw)
    expected = percentile(Mean("score").value(sums[0]))
    found = next(
        r for r in alone.rows if (r.model, r.task, r.metric, r.slice) == ("a", "Q03", "score", "")
    )
    assert (found.ci_low, found.ci_high) == expected

    trip = get_suite("trip")
    text = drawn_verdicts(trip_items(120), 0.6, 5)
    assert all(trip.cluster_keys(e.item) == () for e in text)
    trip_found = intervals(trip, {"m": text})
    accuracy = wide_row(trip_found)
    right = sum(int(e.values["correct"]) for e in text)
    assert (accuracy.ci_low, accuracy.ci_high) == pytest.approx(wilson(Verdicts(right, 120)))
    assert {h.method for h in trip_found.methods if h.metric == "accuracy"} == {WILSON}


def test_items_linked_through_another_item_are_one_cluster() -> None:
    """A vehicle-side and a roadside question share no image, but the cooperative question
    shows both: the three are one scene; a question of another scene stays apart."""
    items = {name: scene_items(1)[0].model_copy(update={"item_id": name}) for name in "vicx"}
    keys = {"v": ("vehicle/1",), "i": ("roadside/7",), "c": ("vehicle/1", "roadside/7")}
    found = suite_clusters(
        "scenes", ((item, keys.get(n, ("vehicle/2",))) for n, item in items.items())
    )
    assert found.of["v"] == found.of["i"] == found.of["c"] != found.of["x"]
    codes = found.codes(["v", "x", "i"])
    assert codes is not None and codes.tolist() == [0, 1, 0]
    assert found.codes(["v", "x"]) is None
