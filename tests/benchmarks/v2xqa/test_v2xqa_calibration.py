"""ECE and Brier as the release computes them, on cases worked out by hand, on the bin edges,
and against a float32 re-statement of the release's compute_ece."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from roadeval.benchmarks.v2xqa.calibration import (
    bin_edges,
    bin_index,
    brier_item,
    calibration_bins,
    expected_calibration_error,
    mean_brier,
)


def test_edges_are_the_release_linspace() -> None:
    edges = bin_edges()
    assert len(edges) == 13
    assert edges == [float(e) for e in np.linspace(0.0, 1.0, 13)]
    assert edges[0] == 0.0 and edges[-1] == 1.0


def test_first_bin_is_closed_and_the_others_open_below() -> None:
    edges = bin_edges()
    assert bin_index(0.0, edges) == 0  # the closed lower edge of the first bin
    assert bin_index(1 / 12, edges) == 0  # an upper edge belongs to the bin below it
    assert bin_index(1 / 12 + 1e-12, edges) == 1
    assert bin_index(2 / 12, edges) == 1
    assert bin_index(1.0, edges) == 11
    assert bin_index(-0.01, edges) is None and bin_index(1.01, edges) is None


def test_ece_by_hand_with_confidences_on_edges() -> None:
    confidences = [0.0, 1 / 12, 2 / 12, 0.95]
    correct = [1.0, 0.0, 1.0, 1.0]
    # bin 0 [0, 1/12]: confs 0 and 1/12 (mean 1/24), acc 1/2 -> |1/2 - 1/24| * 2/4
    # bin 1 (1/12, 2/12]: conf 1/6, acc 1              -> |1 - 1/6| * 1/4
    # bin 11 (11/12, 1]: conf 0.95, acc 1               -> 0.05 * 1/4
    expected = (0.5 - 1 / 24) * 0.5 + (5 / 6) * 0.25 + 0.05 * 0.25
    assert expected == pytest.approx(0.45)
    assert expected_calibration_error(confidences, correct) == pytest.approx(expected, abs=1e-15)
    bins = calibration_bins(confidences, correct)
    assert [(b.count, b.accuracy) for b in bins] == [(2, 0.5), (1, 1.0), (1, 1.0)]


def test_perfect_and_worst_calibration() -> None:
    assert expected_calibration_error([1.0, 1.0], [1.0, 1.0]) == 0.0
    assert expected_calibration_error([1.0, 0.25], [0.0, 1.0]) == pytest.approx(
        0.5 * 1.0 + 0.5 * 0.75
    )
    assert expected_calibration_error([], []) is None


def test_brier_by_hand() -> None:
    probs = {"A": 0.7, "B": 0.1, "C": 0.1, "D": 0.1}
    assert brier_item(probs, "A") == pytest.approx(0.09 + 3 * 0.01)
    assert brier_item(probs, "B") == pytest.approx(0.49 + 0.81 + 0.01 + 0.01)
    assert brier_item({"A": 1.0, "B": 0.0, "C": 0.0, "D": 0.0}, "A") == 0.0
    assert brier_item({"A": 1.0, "B": 0.0, "C": 0.0, "D": 0.0}, "D") == 2.0  # the maximum
    assert mean_brier([0.12, 1.32]) == pytest.approx(0.72)
    assert mean_brier([]) is None


def _release_ece(confs: list[float], accs: list[float], n_bins: int = 12) -> float:
    """The release's compute_ece, restated: float32 arrays against float64 linspace edges."""
    c = np.asarray(confs, dtype=np.float32)
    a = np.asarray(accs, dtype=np.float32)
    bins = np.linspace(0.0, 1.0, n_bins + 1)
    ece = 0.0
    for i in range(n_bins):
        lo, hi = bins[i], bins[i + 1]
        mask = (c >= lo) & (c <= hi) if i == 0 else (c > lo) & (c <= hi)
        if mask.sum():
            ece += abs(float(a[mask].mean()) - float(c[mask].mean())) * int(mask.sum()) / len(c)
    return float(ece)


def test_matches_the_release_within_float32_rounding() -> None:
    rng = random.Random(3)
    for _ in range(20):
        confs = [rng.uniform(0.25, 1.0) for _ in range(300)]
        accs = [1.0 if rng.random() < c else 0.0 for c in confs]
        ours = expected_calibration_error(confs, accs)
        assert ours is not None
        # Off the edges, float32 moves no confidence across a bin: the values agree to ~1e-8.
        assert math.isclose(ours, _release_ece(confs, accs), abs_tol=5e-8)


def test_float32_rounding_can_move_an_edge_confidence_in_the_release() -> None:
    # float32(1/12) rounds up, so the release puts 1/12 in the second bin; we keep the stated
    # bins on the value as given. Documented in calibration.py.
    assert float(np.float32(1 / 12)) > bin_edges()[1]
    assert _release_ece([1 / 12], [0.0]) == pytest.approx(float(np.float32(1 / 12)))
    assert bin_index(1 / 12, bin_edges()) == 0
