"""ADE, FDE and min-FDE as the release defines them (`stride/trajectory.py: trajectory_metrics`),
computed for a whole corpus at once with numpy.

For one trajectory: n = min(len(pred), len(GT)), both cut to n; ADE is the mean L2 distance over
the n steps, FDE the distance at step n, min-FDE the smallest distance from the prediction's point
n to any of the first n GT points. Trajectories of different lengths go in one stacked array padded
with NaN, their true lengths alongside, so no Python loop runs per trajectory.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class TrajectoryErrors:
    """Per-trajectory errors, one entry per stacked trajectory."""

    ade: FloatArray
    fde: FloatArray
    min_fde: FloatArray
    compared: IntArray  # n, the points compared

    def means(self) -> dict[str, float]:
        """The corpus means (the release's `_bucket(...)["mean"]`); empty for no trajectories."""
        if not len(self.ade):
            return {}
        return {
            "ade": float(self.ade.mean()),
            "fde": float(self.fde.mean()),
            "min_fde": float(self.min_fde.mean()),
        }


def stack(trajectories: Sequence[Sequence[Sequence[float]]]) -> tuple[FloatArray, IntArray]:
    """(N, T, 2) points padded with NaN to the longest, and the (N,) lengths."""
    lengths = np.fromiter((len(t) for t in trajectories), dtype=np.int64, count=len(trajectories))
    width = int(lengths.max()) if len(lengths) else 0
    out = np.full((len(trajectories), max(width, 1), 2), np.nan)
    # Ragged input has to be copied row by row once; all the arithmetic below is vectorised.
    for row, points in enumerate(trajectories):
        if len(points):
            out[row, : len(points)] = np.asarray(points, dtype=np.float64)[:, :2]
    return out, lengths


def lengths_from_padding(points: FloatArray) -> IntArray:
    """Lengths of NaN-padded trajectories (the points before the first NaN x)."""
    present = ~np.isnan(points[..., 0])
    return np.where(present.all(axis=1), points.shape[1], np.argmin(present, axis=1)).astype(
        np.int64
    )


def trajectory_errors(
    pred: FloatArray,
    gt: FloatArray,
    pred_lengths: IntArray | None = None,
    gt_lengths: IntArray | None = None,
) -> TrajectoryErrors:
    """Errors of N predictions (N, P, 2) against N ground truths (N, G, 2).

    Without lengths, each trajectory ends at its first NaN. Every pair must compare at least one
    point (the release raises on an empty one).
    """
    if pred.ndim != 3 or gt.ndim != 3 or pred.shape[0] != gt.shape[0]:
        raise ValueError(f"expected (N, T, 2) arrays of one N, got {pred.shape} and {gt.shape}")
    pred_n = lengths_from_padding(pred) if pred_lengths is None else np.asarray(pred_lengths)
    gt_n = lengths_from_padding(gt) if gt_lengths is None else np.asarray(gt_lengths)
    compared = np.minimum(pred_n, gt_n).astype(np.int64)
    if compared.size and compared.min() <= 0:
        raise ValueError("empty trajectory: every prediction and ground truth needs a point")
    width = min(pred.shape[1], gt.shape[1])
    p = pred[:, :width]
    g = gt[:, :width]
    rows = np.arange(p.shape[0])
    steps = np.arange(width)[None, :] < compared[:, None]
    distance = np.hypot(p[..., 0] - g[..., 0], p[..., 1] - g[..., 1])
    ade = np.where(steps, distance, 0.0).sum(axis=1) / np.maximum(compared, 1)
    last = compared - 1
    fde = distance[rows, last]
    end = p[rows, last]
    to_gt = np.hypot(end[:, None, 0] - g[..., 0], end[:, None, 1] - g[..., 1])
    min_fde = np.where(steps, to_gt, np.inf).min(axis=1)
    return TrajectoryErrors(ade, fde, min_fde, compared)


def errors_of(
    predictions: Sequence[Sequence[Sequence[float]]], truths: Sequence[Sequence[Sequence[float]]]
) -> TrajectoryErrors:
    """`trajectory_errors` over lists of point lists (stacked here)."""
    pred, pred_n = stack(predictions)
    gt, gt_n = stack(truths)
    return trajectory_errors(pred, gt, pred_n, gt_n)


def item_errors(pred: Sequence[Sequence[float]], gt: Sequence[Sequence[float]]) -> dict[str, float]:
    """One trajectory's {ade, fde, min_fde}."""
    errors = errors_of([pred], [gt])
    return {
        "ade": float(errors.ade[0]),
        "fde": float(errors.fde[0]),
        "min_fde": float(errors.min_fde[0]),
    }
