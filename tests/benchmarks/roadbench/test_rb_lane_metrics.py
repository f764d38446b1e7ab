"""Lane designation metrics: bit vectors, lane-count mismatch, pooled Hamming loss, per-lane
exact match, and the rule baseline's layout."""

from __future__ import annotations

import pytest

from roadeval.benchmarks.roadbench.metrics_lanes import (
    LaneComparison,
    add_comparisons,
    aligned_prediction,
    compare_lanes,
    hamming_loss,
    lane_bits,
    lane_exact_match,
    rule_designations,
)


def test_lane_bits_ignore_letters_outside_the_alphabet_and_non_strings() -> None:
    assert lane_bits("CD", "ABCD") == 0b1100
    assert lane_bits("G", "ABCD") == 0
    assert lane_bits("G", "ABCDG") == 0b10000
    assert lane_bits(["C"], "ABCD") == 0


def test_lane_count_mismatch_and_bad_answers_become_empty_lanes() -> None:
    assert aligned_prediction(["B", "C"], ["B", "C", "D"]) == ["", "", ""]
    assert aligned_prediction(None, ["B"]) == [""]
    assert aligned_prediction(["B"], ["C"]) == ["B"]


def test_compare_lanes_hand_case() -> None:
    # lane 1: BC vs B -> 1 wrong letter; lane 2: C vs C exact; lane 3: D vs CD -> 1 wrong
    result = compare_lanes(["BC", "C", "D"], ["B", "C", "CD"], "ABCD")
    assert result == LaneComparison(lanes=3, letter_mismatches=2, exact_lanes=1)
    assert hamming_loss(result, "ABCD") == pytest.approx(2 / 12)
    assert lane_exact_match(result) == pytest.approx(1 / 3)


def test_mismatched_count_costs_every_true_letter() -> None:
    result = compare_lanes(["B", "C"], ["B", "C", "CD"], "ABCD")
    # Empty lanes vs B, C, CD: 4 letters wrong, no lane exact.
    assert result == LaneComparison(3, 4, 0)


def test_pooling_is_over_lanes_not_items() -> None:
    one = compare_lanes(["B"], ["B"], "ABCD")
    many = compare_lanes(["C", "C", "C"], ["B", "C", "D"], "ABCD")
    total = add_comparisons([one, many])
    # Per lane: 2 exact of 4 (per item it would be (1 + 1/3) / 2).
    assert lane_exact_match(total) == pytest.approx(2 / 4)
    assert hamming_loss(total, "ABCD") == pytest.approx(4 / 16)


def test_five_letter_alphabet_for_fpv() -> None:
    result = compare_lanes(["G"], ["C"], "ABCDG")
    assert hamming_loss(result, "ABCDG") == pytest.approx(2 / 5)


def test_no_lane_at_all_uses_the_release_fallback() -> None:
    empty = LaneComparison(0, 0, 0)
    assert hamming_loss(empty, "ABCD") == 1.0
    assert lane_exact_match(empty) == 0.0


def test_rule_baseline_layout() -> None:
    assert rule_designations(1) == ["BCD"]
    assert rule_designations(2) == ["BC", "CD"]
    assert rule_designations(3) == ["B", "C", "D"]
    assert rule_designations(5) == ["B", "C", "C", "C", "D"]
