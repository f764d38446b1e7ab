"""Task-3 metrics: greedy junction matching, discrete Fréchet, Hungarian line matching with
capping, buffer F1, and the release's failure cases."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
import roadbench_reference as reference

from roadeval.benchmarks.roadbench.frechet import frechet_matrix, frechet_pair
from roadeval.benchmarks.roadbench.metrics_network import (
    buffer_f1_scores,
    greedy_match_distances,
    junction_scores,
    line_scores,
    network_metric_names,
    score_network,
)


def pts(*xy: float) -> np.ndarray:
    return np.array(xy, dtype=float).reshape(-1, 2)


def test_greedy_takes_the_closest_pair_first_not_the_optimal_assignment() -> None:
    # Optimal assignment would pair (0->1, 1->0) for total 0.2 + 0.2; greedy takes 0->0 at 0.05
    # and then is left with 1->1 at 0.45.
    predicted = pts(0.0, 0.0, 0.25, 0.0)
    truth = pts(0.05, 0.0, -0.2, 0.0)
    picks = greedy_match_distances(predicted, truth)
    assert picks == pytest.approx([0.05, 0.45])


def test_junction_rmse_and_recall_by_hand() -> None:
    predicted = pts(0.0, 0.0, 0.5, 0.5, 0.9, 0.9)
    truth = pts(0.03, 0.04, 0.5, 0.65)
    values = junction_scores(predicted, truth)
    # theta 0.1: one match (0.05); unmatched: 2 predicted + 1 true, each theta^2.
    assert values["junction_rmse@0.1"] == pytest.approx(math.sqrt((0.05**2 + 3 * 0.01) / 4))
    assert values["junction_recall@0.1"] == pytest.approx(0.5)
    # theta 0.2: also (0.5,0.5)-(0.5,0.65) at 0.15; one predicted point left over.
    assert values["junction_rmse@0.2"] == pytest.approx(math.sqrt((0.05**2 + 0.15**2 + 0.04) / 3))
    assert values["junction_recall@0.2"] == pytest.approx(1.0)


def test_junctions_without_truth_or_prediction() -> None:
    none = junction_scores(pts(), pts())
    assert none["junction_rmse@0.5"] == 0.0 and none["junction_recall@0.5"] == 0.0
    missing = junction_scores(pts(), pts(0.1, 0.1, 0.2, 0.2))
    assert missing["junction_rmse@0.2"] == pytest.approx(0.2)
    assert missing["junction_recall@0.2"] == 0.0
    extra = junction_scores(pts(0.1, 0.1), pts())
    assert extra["junction_rmse@0.1"] == pytest.approx(0.1)
    assert extra["junction_recall@0.1"] == 0.0


def test_frechet_is_discrete_over_vertices() -> None:
    # Continuous Fréchet of these two would be 0; the discrete one pairs vertex (1,0) with an
    # end vertex at distance 1.
    a = pts(0, 0, 2, 0)
    b = pts(0, 0, 1, 0, 2, 0)
    assert frechet_pair(a, b) == pytest.approx(1.0)
    assert frechet_pair(pts(0, 0, 1, 1), pts(0, 1, 1, 2)) == pytest.approx(1.0)


def test_frechet_matrix_matches_the_textbook_table() -> None:
    rng = np.random.default_rng(5)
    for _ in range(60):
        first = [rng.random((rng.integers(1, 9), 2)) for _ in range(rng.integers(1, 5))]
        second = [rng.random((rng.integers(1, 9), 2)) for _ in range(rng.integers(1, 5))]
        fast = frechet_matrix(first, second)
        slow = np.array([[reference.frechet(a, b) for b in second] for a in first])
        np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-15)


def test_lines_hungarian_capping_and_unmatched_by_hand() -> None:
    predicted = [pts(0, 0, 1, 0), pts(0, 0.3, 1, 0.3)]
    truth = [pts(0, 0.05, 1, 0.05)]
    values = line_scores(predicted, truth)
    # The first line matches at 0.05; the second is unmatched and counts theta.
    assert values["line_frechet@0.1"] == pytest.approx((0.05 + 0.1) / 2)
    assert values["line_frechet@0.5"] == pytest.approx((0.05 + 0.5) / 2)
    far = line_scores([pts(0, 0.9, 1, 0.9)], truth)
    # Matched but farther than theta: capped.
    assert far["line_frechet@0.1"] == pytest.approx(0.1)
    assert far["line_frechet@0.5"] == pytest.approx(0.5)


def test_buffer_f1_of_identical_and_disjoint_lines() -> None:
    line = [pts(0, 0, 1, 0)]
    assert buffer_f1_scores(line, line) == pytest.approx([1.0, 1.0, 1.0])
    far = [pts(0, 5, 1, 5)]
    assert buffer_f1_scores(far, line) == pytest.approx([0.0, 0.0, 0.0])
    assert buffer_f1_scores([], line) == pytest.approx([0.0, 0.0, 0.0])


def test_buffer_f1_equals_the_multiline_overlay() -> None:
    rng = random.Random(11)
    for _ in range(25):
        predicted = [
            pts(*[rng.random() for _ in range(2 * rng.randint(2, 6))])
            for _ in range(rng.randint(1, 4))
        ]
        truth = [
            pts(*[rng.random() for _ in range(2 * rng.randint(2, 6))])
            for _ in range(rng.randint(1, 4))
        ]
        # A zero-length line buffers to a disc in both formulations.
        predicted.append(pts(0.5, 0.5, 0.5, 0.5))
        fast = buffer_f1_scores(predicted, truth)
        for index, theta in enumerate((0.1, 0.2, 0.5)):
            _, slow = reference.lines(
                [reference.LineString(p) for p in predicted],
                [reference.LineString(t) for t in truth],
                theta,
            )
            assert fast[index] == pytest.approx(slow, abs=1e-12)


def random_wkt_case(rng: random.Random, width: int, height: int) -> tuple[dict, dict]:
    def line() -> str:
        xy = [
            f"{rng.uniform(0, width):.1f} {rng.uniform(0, height):.1f}"
            for _ in range(rng.randint(2, 6))
        ]
        return f"LINESTRING ({', '.join(xy)})"

    def point() -> str:
        return f"POINT ({rng.uniform(0, width):.1f} {rng.uniform(0, height):.1f})"

    truth = {
        "junctions": [point() for _ in range(rng.randint(0, 4))],
        "lines": [line() for _ in range(rng.randint(1, 4))],
    }
    predicted = {
        "junctions": [point() for _ in range(rng.randint(0, 4))],
        "lines": [line() for _ in range(rng.randint(0, 4))],
    }
    return predicted, truth


def test_score_network_matches_the_reference_on_random_items() -> None:
    rng = random.Random(3)
    for _ in range(30):
        width, height = rng.randint(300, 1300), rng.randint(300, 1300)
        predicted, truth = random_wkt_case(rng, width, height)
        fast = score_network(predicted, truth, width, height)
        slow = reference.network_item(predicted, truth, width, height)
        assert fast.anomaly is None
        assert sorted(fast.values) == sorted(network_metric_names())
        for name, value in slow.items():
            assert fast.values[name] == pytest.approx(value, abs=1e-12), name


TRUTH = {
    "junctions": ["POINT (100 100)", "POINT (200 100)"],
    "lines": ["LINESTRING (100 100, 200 100)"],
}


def test_empty_prediction_scores_the_worst_values() -> None:
    values = score_network({"junctions": [], "lines": []}, TRUTH, 1000, 1000).values
    for theta in ("0.1", "0.2", "0.5"):
        assert values[f"junction_rmse@{theta}"] == pytest.approx(float(theta))
        assert values[f"junction_recall@{theta}"] == 0.0
        assert values[f"line_frechet@{theta}"] == pytest.approx(float(theta))
        assert values[f"buffer_f1@{theta}"] == 0.0


def test_non_point_junctions_and_non_line_lines_are_skipped() -> None:
    predicted = {
        "junctions": ["POINT (100 100)", "LINESTRING (0 0, 1 1)"],
        "lines": ["LINESTRING (100 100, 200 100)", "POINT (5 5)"],
    }
    score = score_network(predicted, TRUTH, 1000, 1000)
    assert score.anomaly is None
    assert score.values["junction_recall@0.1"] == pytest.approx(0.5)
    assert score.values["line_frechet@0.1"] == pytest.approx(0.0)
    assert score.values["buffer_f1@0.1"] == pytest.approx(1.0)


def test_empty_point_is_dropped_by_the_release_so_we_score_the_bad_answer() -> None:
    predicted = {"junctions": ["POINT EMPTY"], "lines": ["LINESTRING (100 100, 200 100)"]}
    score = score_network(predicted, TRUTH, 1000, 1000)
    worst = score_network({"junctions": [], "lines": []}, TRUTH, 1000, 1000)
    assert score.dropped and score.anomaly and "drops" in score.anomaly
    assert score.values == worst.values


def test_line_failure_keeps_junction_values_and_takes_worst_line_values() -> None:
    predicted = {"junctions": ["POINT (100 100)"], "lines": ["LINESTRING EMPTY"]}
    score = score_network(predicted, TRUTH, 1000, 1000)
    assert not score.dropped and score.anomaly is not None
    assert score.values["junction_recall@0.1"] == pytest.approx(0.5)
    assert score.values["line_frechet@0.2"] == pytest.approx(0.2)
    assert score.values["buffer_f1@0.2"] == 0.0


def test_junctions_are_matched_after_the_releases_wkt_round_trip() -> None:
    # 93.7 px at width 937 is 0.1 in full precision, but the release matches the points read
    # back from `Point.wkt` (16 digits), where the distance is just above 0.1: no match.
    truth = {"junctions": ["POINT (100 100)"], "lines": []}
    predicted = {"junctions": ["POINT (193.7 100)"], "lines": []}
    assert 193.7 / 937 - 100 / 937 <= 0.1
    values = score_network(predicted, truth, 937, 1064).values
    assert values["junction_recall@0.1"] == 0.0
    assert values["junction_rmse@0.1"] == pytest.approx(0.1)
    assert values["junction_recall@0.2"] == 1.0
    slow = reference.network_item(predicted, truth, 937, 1064)
    assert slow["junction_recall@0.1"] == 0.0


def test_junctions_exactly_at_a_threshold_match_the_reference() -> None:
    rng = random.Random(5)
    for _ in range(200):
        width, height = rng.randint(300, 1300), rng.randint(300, 1300)
        theta = rng.choice((0.1, 0.2, 0.5))
        x, y = rng.randint(0, width), rng.randint(0, height)
        diagonal = (0.6 * theta * width, 0.8 * theta * height)
        offsets = [(theta * width, 0), (0, -theta * height), diagonal]
        dx, dy = rng.choice(offsets)
        truth = {"junctions": [f"POINT ({x} {y})"], "lines": []}
        predicted = {"junctions": [f"POINT ({x + dx} {y + dy})"], "lines": []}
        fast = score_network(predicted, truth, width, height).values
        slow = reference.network_item(predicted, truth, width, height)
        for name in ("junction_recall", "junction_rmse"):
            key = f"{name}@{theta:g}"
            assert fast[key] == pytest.approx(slow[key], abs=1e-12), (width, height, dx, dy)


@pytest.mark.parametrize("junctions", [None, 7, True])
def test_junctions_that_are_not_a_list_drop_the_item(junctions: object) -> None:
    predicted = {"junctions": junctions, "lines": ["LINESTRING (100 100, 200 100)"]}
    score = score_network(predicted, TRUTH, 1000, 1000)
    worst = score_network({"junctions": [], "lines": []}, TRUTH, 1000, 1000)
    assert score.dropped and score.anomaly and "drops" in score.anomaly
    assert score.values == worst.values


@pytest.mark.parametrize("lines", [None, 0, True, 5])
def test_lines_without_a_length_keep_junction_values_and_count_an_error(lines: object) -> None:
    # The release keeps this item's junction values, then fails on len(lines) outside its try
    # and leaves the item out of its line means (counting an error): worst lines here.
    score = score_network({"junctions": ["POINT (100 100)"], "lines": lines}, TRUTH, 1000, 1000)
    assert score.dropped and score.anomaly and "lines" in score.anomaly
    assert score.values["junction_recall@0.1"] == pytest.approx(0.5)
    assert score.values["line_frechet@0.2"] == pytest.approx(0.2)
    assert score.values["buffer_f1@0.2"] == 0.0


def test_unreadable_truth_is_an_error() -> None:
    with pytest.raises(ValueError, match="ground truth"):
        score_network(
            {"junctions": [], "lines": []}, {"junctions": ["nonsense"], "lines": []}, 10, 10
        )
