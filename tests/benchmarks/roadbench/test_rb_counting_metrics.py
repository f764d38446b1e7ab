"""Weighted precision/recall/F1 (sklearn classification_report semantics) and RMSE."""

from __future__ import annotations

import math

import pytest

from roadeval.benchmarks.roadbench.metrics_counting import rmse, weighted_scores


def test_hand_computed_three_classes() -> None:
    truth = [2, 2, 3, 3, 3, 4]
    predicted = [2, 3, 3, 3, 2, 2]
    # class 2: tp 1, pred 3, support 2 -> P 1/3, R 1/2, F1 2/5
    # class 3: tp 2, pred 3, support 3 -> P 2/3, R 2/3, F1 2/3
    # class 4: tp 0, pred 0, support 1 -> P 0 (zero_division), R 0, F1 0
    scores = weighted_scores(truth, predicted)
    assert scores.precision == pytest.approx((2 * 1 / 3 + 3 * 2 / 3) / 6)
    assert scores.recall == pytest.approx(3 / 6)
    assert scores.f1 == pytest.approx((2 * 2 / 5 + 3 * 2 / 3) / 6)
    assert scores.accuracy == pytest.approx(3 / 6)


def test_bad_answer_class_without_support_weighs_nothing_but_costs_precision() -> None:
    # 0 is the bad-answer value: it never occurs in the truth.
    truth = [1, 1, 2]
    predicted = [1, 0, 2]
    scores = weighted_scores(truth, predicted)
    # class 1: tp 1, pred 1 -> P 1, R 1/2, F1 2/3; class 2: P 1, R 1, F1 1
    assert scores.precision == pytest.approx(1.0)
    assert scores.recall == pytest.approx(2 / 3)
    assert scores.f1 == pytest.approx((2 * 2 / 3 + 1) / 3)


def test_never_predicted_class_has_zero_precision_not_an_error() -> None:
    scores = weighted_scores([2, 2, 2, 3], [2, 2, 2, 2])
    assert scores.precision == pytest.approx(3 * 0.75 / 4)
    assert scores.f1 == pytest.approx(3 * (2 * 3 / (4 + 3)) / 4)


def test_strings_and_unknown_class() -> None:
    scores = weighted_scores(["main", "service", "main"], ["main", "unknown", "service"])
    assert scores.accuracy == pytest.approx(1 / 3)
    assert scores.recall == pytest.approx(1 / 3)
    # main: tp 1, pred 1, support 2 -> F1 2/3; service: tp 0 -> 0
    assert scores.f1 == pytest.approx(2 * (2 / 3) / 3)


def test_perfect_and_empty_inputs() -> None:
    perfect = weighted_scores([1, 2, 3], [1, 2, 3])
    assert (perfect.precision, perfect.recall, perfect.f1) == (1.0, 1.0, 1.0)
    with pytest.raises(ValueError):
        weighted_scores([], [])
    with pytest.raises(ValueError):
        weighted_scores([1], [1, 2])


def test_rmse_counts_every_item() -> None:
    assert rmse([2, 3, 4], [2, 0, 4]) == pytest.approx(math.sqrt(9 / 3))
    assert rmse([1], [1]) == 0.0
    with pytest.raises(ValueError):
        rmse([], [])
