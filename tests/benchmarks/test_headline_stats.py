"""Headline statistics recompute the suites' own metrics: on resamples of the items (an item
drawn k times counts k times), the statistic over column sums equals the suite's function over
the resampled items, for every kind a suite declares."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from roadeval.benchmarks.headline_stats import Mean, Proportion, TaskMean
from roadeval.benchmarks.item import AnswerKind, Item
from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.roadbench.headline_stats import LaneExactMatch, WeightedF1
from roadeval.benchmarks.roadbench.metrics_counting import weighted_scores
from roadeval.benchmarks.roadbench.outcomes import Outcome
from roadeval.benchmarks.roadbench.scoring import summarize_designations
from roadeval.benchmarks.suite import ParsedAnswer, ParseStatus, ScoredItem, Statistic
from roadeval.benchmarks.trip.headline_stats import DIFFICULTY_PENALTY, MODALITY_PENALTY
from roadeval.benchmarks.trip.metrics import difficulty_penalty, modality_penalty
from roadeval.benchmarks.v2xqa.calibration import expected_calibration_error
from roadeval.benchmarks.v2xqa.headline_stats import CalibrationError
from roadeval.benchmarks.v2xqa.summary import outcome_of

from support.verdicts import drawn_verdicts, scored, task_items, trip_items

OK = ParsedAnswer(ParseStatus.OK, "x", "test")
rng = np.random.default_rng(0)


def _item(k: int, task: str, reference: Any, labels: dict[str, str] | None = None) -> Item:
    return Item(
        suite="test",
        suite_version="1",
        item_id=f"{task}-{k}",
        task=task,
        question="q",
        answer_kind=AnswerKind.LABEL,
        reference=reference,
        labels=labels or {},
    )


def _agrees(
    statistic: Statistic,
    items: Sequence[ScoredItem],
    suite_metric: Callable[[list[ScoredItem]], float | None],
    resamples: int = 25,
) -> None:
    """On the items and on `resamples` resamples of them, statistic == the suite's metric."""
    columns = statistic.columns(items)
    assert columns is not None
    draws = [
        np.arange(len(items)),
        *(rng.integers(0, len(items), len(items)) for _ in range(resamples)),
    ]
    for drawn in draws:
        counts = np.bincount(drawn, minlength=len(items)).astype(float)
        ours = statistic.value((counts @ columns)[None, :])[0]
        theirs = suite_metric([items[k] for k in drawn])
        assert theirs is not None
        assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-12)


def test_weighted_f1_is_the_release_classification_report_f1() -> None:
    """Lane counts 1-5; predictions 0 (a bad answer) to 7, some never true (weigh nothing)."""
    truths = rng.integers(1, 6, 120)
    predicted = np.where(rng.random(120) < 0.5, truths, rng.integers(0, 8, 120))
    items = [
        ScoredItem(_item(k, "1", int(t)), OK, {}, Outcome(int(p), p == 0))
        for k, (t, p) in enumerate(zip(truths, predicted, strict=True))
    ]

    def release(rows: list[ScoredItem]) -> float:
        return weighted_scores([r.item.reference for r in rows], [r.state.value for r in rows]).f1

    _agrees(WeightedF1(), items, release)


def test_weighted_f1_of_road_types_with_unknown_answers() -> None:
    truths = rng.choice(["main", "service"], 80)
    predicted = np.where(
        rng.random(80) < 0.6, truths, rng.choice(["main", "service", "unknown"], 80)
    )
    items = [
        ScoredItem(_item(k, "6", str(t)), OK, {}, Outcome(str(p), p == "unknown"))
        for k, (t, p) in enumerate(zip(truths, predicted, strict=True))
    ]
    _agrees(
        WeightedF1(),
        items,
        lambda rows: (
            weighted_scores([r.item.reference for r in rows], [r.state.value for r in rows]).f1
        ),
    )


def test_weighted_f1_is_undefined_on_the_tasks_without_an_f1() -> None:
    """Designation and road network references (lists and dicts, as read back from a store)
    have no f1: a comparison measuring every headline of those tasks gets none, not a crash."""
    designation = [ScoredItem(_item(0, "2", ["B", "CD"]), OK, {}, Outcome(["B"], False))]
    network = [ScoredItem(_item(0, "3", {"lines": []}), OK, {}, Outcome({}, False))]
    assert WeightedF1().columns(designation) is None
    assert WeightedF1().columns(network) is None


def test_lane_exact_match_pools_lanes_over_items() -> None:
    letters = ["B", "C", "D", "BC", "CD", "BCD"]
    items = []
    for k in range(60):
        truth = list(rng.choice(letters, rng.integers(1, 4)))
        guess = [t if rng.random() < 0.6 else str(rng.choice(letters)) for t in truth]
        if k % 7 == 0:
            guess = guess[:-1]  # a lane-count mismatch: every lane empty
        items.append(ScoredItem(_item(k, "2", truth), OK, {}, Outcome(guess, False)))

    def release(rows: list[ScoredItem]) -> float:
        return summarize_designations(
            "2", [r.item.reference for r in rows], [r.state for r in rows]
        )["exact_match"]

    _agrees(LaneExactMatch(), items, release)


def test_calibration_error_is_the_release_ece_over_items_with_a_confidence() -> None:
    items = []
    for k in range(150):
        labels = {"view": "VS", "family": "perception"}
        confidence = float(rng.random()) if k % 5 else None
        if k % 31 == 0:
            confidence = 1 / 12  # on a bin edge: the first bin is closed
        value = {"letter": "A", "confidence": confidence} if confidence is not None else {}
        parsed = ParsedAnswer(ParseStatus.OK, value, "letter")
        correct = float(rng.random() < (confidence or 0.5))
        items.append(ScoredItem(_item(k, "VS1", "A", labels), parsed, {"correct": correct}))

    def release(rows: list[ScoredItem]) -> float | None:
        outcomes = [outcome_of(r) for r in rows]
        confident = [o for o in outcomes if o.confidence is not None]
        return expected_calibration_error(
            [o.confidence for o in confident if o.confidence is not None],
            [o.correct for o in confident],
        )

    _agrees(CalibrationError(), items, release)


def test_trip_penalties_are_the_gaps_the_suite_reports() -> None:
    items = drawn_verdicts(trip_items(90), 0.55, seed=4)
    _agrees(MODALITY_PENALTY, items, modality_penalty)
    _agrees(DIFFICULTY_PENALTY, items, difficulty_penalty)
    assert MODALITY_PENALTY.strata == ("modality",)


def test_a_penalty_is_undefined_where_the_suite_leaves_it_out() -> None:
    text_only = [
        e
        for e in drawn_verdicts(trip_items(40), 0.5, seed=5)
        if e.item.labels["modality"] == "text"
    ]
    assert modality_penalty(text_only) is None
    assert MODALITY_PENALTY.columns(text_only) is None


def test_task_mean_is_tbbench_overall_score() -> None:
    suite = get_suite("tbbench")
    items = drawn_verdicts(task_items(["A", "B", "C"], 30), 0.4, seed=6)

    def overall(rows: list[ScoredItem]) -> float:
        tasks = sorted({r.item.task for r in rows})
        per_task = {t: suite.summarize(t, [r for r in rows if r.item.task == t]) for t in tasks}
        return suite.overall(per_task)["mean_accuracy"]

    # Resampled within each task, as the run draws suite-wide rows: every task keeps its items.
    columns = TaskMean("correct", 100.0).columns(items)
    assert columns is not None
    for _ in range(20):
        drawn = np.concatenate([rng.integers(0, 30, 30) + 30 * t for t in range(3)])
        counts = np.bincount(drawn, minlength=90).astype(float)
        ours = TaskMean("correct", 100.0).value((counts @ columns)[None, :])[0]
        assert ours == pytest.approx(overall([items[k] for k in drawn]), rel=1e-12)


def test_a_mean_covers_only_the_items_that_have_the_value() -> None:
    """STRIDE's judge score: unscored replies have no value and are left out of the mean."""
    values = rng.integers(0, 11, 50).astype(float)
    items = scored(task_items(["SC-6"], 50), values, "judge_score")
    items[3:8] = [ScoredItem(e.item, e.parsed, {}) for e in items[3:8]]
    _agrees(
        Mean("judge_score"),
        items,
        lambda rows: float(np.mean([r.values["judge_score"] for r in rows if r.values])),
    )


def test_a_proportion_refuses_values_that_are_not_verdicts() -> None:
    with pytest.raises(ValueError, match="'correct' is declared a share of verdicts"):
        Proportion("correct").columns(scored(task_items(["A"], 3), [1.0, 0.5, 0.0]))
