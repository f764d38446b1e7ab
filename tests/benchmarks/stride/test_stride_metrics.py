"""ADE / FDE / min-FDE: hand-computed cases, unequal lengths, and the vectorised corpus function
against a plain per-trajectory restatement of the release's `trajectory_metrics`."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest

from roadeval.benchmarks.stride.trajectory_metrics import (
    errors_of,
    item_errors,
    lengths_from_padding,
    stack,
    trajectory_errors,
)


def reference(pred: list[list[float]], gt: list[list[float]]) -> tuple[float, float, float]:
    """The release's definition, one trajectory at a time."""
    n = min(len(pred), len(gt))
    pred, gt = pred[:n], gt[:n]
    steps = [math.hypot(p[0] - g[0], p[1] - g[1]) for p, g in zip(pred, gt, strict=True)]
    last = pred[-1]
    return (
        statistics.mean(steps),
        steps[-1],
        min(math.hypot(last[0] - g[0], last[1] - g[1]) for g in gt),
    )


def test_hand_computed_case() -> None:
    gt = [[1.0, 0.0], [2.0, 0.0], [3.0, 0.0], [4.0, 0.0]]
    pred = [[1.0, 0.0], [2.0, 3.0], [3.0, 4.0], [2.0, 0.0]]
    # Step errors 0, 3, 4, 2: ADE 9/4, FDE 2; the last predicted point sits on GT point 2.
    assert item_errors(pred, gt) == {"ade": 2.25, "fde": 2.0, "min_fde": 0.0}


def test_unequal_lengths_are_cut_to_the_shorter() -> None:
    gt = [[3.0, 4.0], [6.0, 8.0], [9.0, 12.0], [12.0, 16.0], [15.0, 20.0]]
    short = [[0.0, 0.0], [6.0, 8.0]]  # n = 2: errors 5 and 0
    assert item_errors(short, gt) == {"ade": 2.5, "fde": 0.0, "min_fde": 0.0}
    long = [*gt[:4], [0.0, 0.0], [1.0, 1.0]]  # 6 points against GT's 5: n = 5
    errors = item_errors(long, gt)
    assert errors["fde"] == pytest.approx(25.0)
    assert errors["ade"] == pytest.approx(25.0 / 5)
    assert errors["min_fde"] == pytest.approx(5.0)  # origin to GT point 1
    # The origin fallback against any GT: min-FDE is the distance to the nearest GT point.
    origin = item_errors([[0.0, 0.0]] * 5, gt)
    assert origin["min_fde"] == pytest.approx(5.0) and origin["fde"] == pytest.approx(25.0)


def test_min_fde_only_looks_at_the_first_n_gt_points() -> None:
    gt = [[1.0, 0.0], [2.0, 0.0], [3.0, 0.0], [10.0, 0.0]]
    pred = [[0.0, 0.0], [0.0, 0.0], [10.0, 0.0]]  # n = 3: GT point 4 is not compared
    assert item_errors(pred, gt)["min_fde"] == pytest.approx(7.0)


def test_vectorised_equals_the_reference_on_random_cases() -> None:
    rng = np.random.default_rng(3)
    preds, gts = [], []
    for _ in range(500):
        preds.append(rng.normal(0, 5, size=(int(rng.integers(1, 8)), 2)).round(3).tolist())
        gts.append(rng.normal(0, 5, size=(int(rng.integers(1, 8)), 2)).round(3).tolist())
    errors = errors_of(preds, gts)
    expected = np.array([reference(p, g) for p, g in zip(preds, gts, strict=True)])
    np.testing.assert_allclose(errors.ade, expected[:, 0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(errors.fde, expected[:, 1], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(errors.min_fde, expected[:, 2], rtol=1e-12, atol=1e-12)
    assert errors.means()["ade"] == pytest.approx(expected[:, 0].mean())


def test_nan_padding_alone_gives_the_lengths() -> None:
    preds = [[[1.0, 1.0]] * 4, [[2.0, 2.0]] * 6]
    gts = [[[0.0, 0.0]] * 5, [[0.0, 0.0]] * 4]
    pred, pred_n = stack(preds)
    gt, gt_n = stack(gts)
    assert lengths_from_padding(pred).tolist() == pred_n.tolist() == [4, 6]
    assert lengths_from_padding(gt).tolist() == [5, 4]
    implied = trajectory_errors(pred, gt)
    explicit = trajectory_errors(pred, gt, pred_n, gt_n)
    np.testing.assert_array_equal(implied.ade, explicit.ade)
    assert implied.compared.tolist() == [4, 4]


def test_an_empty_trajectory_is_refused() -> None:
    with pytest.raises(ValueError, match="empty trajectory"):
        errors_of([[]], [[[0.0, 0.0]]])
