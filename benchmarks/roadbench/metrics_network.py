"""Task-3 (road-network correction) metrics with the release's semantics, for theta in THETAS:
junction RMSE and recall (greedy matching), line Fréchet (discrete, Hungarian matching, capped)
and buffer F1, all in coordinates normalised by the image width and height."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Sized
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import shapely
from scipy.optimize import linear_sum_assignment

from roadeval.benchmarks.roadbench.frechet import frechet_matrix
from roadeval.benchmarks.roadbench.network_geometry import (
    ReleaseDropsItem,
    ReleaseLineFailure,
    normalised_lines,
    normalised_points,
)
from roadeval.benchmarks.roadbench.tasks import THETAS

# The release calls the `.buffer()` method, whose default is 16 segments per quarter circle.
BUFFER_QUAD_SEGS = 16


def theta_key(theta: float) -> str:
    return f"{theta:g}"


def network_metric_names(thetas: Sequence[float] = THETAS) -> list[str]:
    """The per-item (and, averaged over items, per-task) metric names of task 3."""
    names: list[str] = []
    for theta in thetas:
        key = theta_key(theta)
        names += [f"junction_rmse@{key}", f"junction_recall@{key}"]
        names += [f"line_frechet@{key}", f"buffer_f1@{key}"]
    return names


@dataclass(frozen=True)
class NetworkScore:
    """Per-item values; `anomaly` says why the release would have failed on this item, and
    `dropped` whether that failure leaves the item out of its means (and in its error count)."""

    values: dict[str, float]
    anomaly: str | None = None
    dropped: bool = False


def greedy_match_distances(predicted: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Distances of the release's greedy junction pairs, in the order it takes them: the closest
    remaining pair each time (ties to the lowest predicted, then true, index). The sequence never
    decreases, so the pairs matched under a threshold are a prefix of it."""
    if len(predicted) == 0 or len(truth) == 0:
        return np.empty(0)
    dx = predicted[:, None, 0] - truth[None, :, 0]
    dy = predicted[:, None, 1] - truth[None, :, 1]
    distances = np.sqrt(dx**2 + dy**2)
    # The release compares with `<` from +inf, so NaN and +inf distances are never taken.
    distances[~(distances < np.inf)] = np.inf
    picked: list[float] = []
    for _ in range(min(distances.shape)):
        flat = int(np.argmin(distances))
        row, col = divmod(flat, distances.shape[1])
        value = distances[row, col]
        if not value < np.inf:
            break
        picked.append(float(value))
        distances[row, :] = np.inf
        distances[:, col] = np.inf
    return np.array(picked)


def junction_scores(
    predicted: np.ndarray, truth: np.ndarray, thetas: Sequence[float] = THETAS
) -> dict[str, float]:
    """RMSE (matched d^2, theta^2 for every unmatched point on either side; 0 with no point at
    all) and recall (matches / true junctions, 0 with none) for each theta."""
    picks = greedy_match_distances(predicted, truth)
    values: dict[str, float] = {}
    for theta in thetas:
        matched = picks[picks <= theta]
        unmatched = len(predicted) + len(truth) - 2 * len(matched)
        count = len(matched) + unmatched
        squared = float(np.sum(matched**2)) + unmatched * theta**2
        key = theta_key(theta)
        values[f"junction_rmse@{key}"] = float(np.sqrt(squared / count)) if count else 0.0
        values[f"junction_recall@{key}"] = len(matched) / len(truth) if len(truth) else 0.0
    return values


def line_geometries(lines: Sequence[np.ndarray]) -> np.ndarray:
    """Shapely LineStrings of (k_i, 2) vertex arrays, built in one vectorised call."""
    if not lines:
        return np.empty(0, dtype=object)
    counts = [len(line) for line in lines]
    return shapely.linestrings(
        np.concatenate(lines), indices=np.repeat(np.arange(len(lines)), counts)
    )


def buffer_f1_scores(
    predicted: Sequence[np.ndarray], truth: Sequence[np.ndarray], thetas: Sequence[float] = THETAS
) -> np.ndarray:
    """F1 = 2 IoU / (1 + IoU) of the theta-buffers of both multilines, for each theta.

    The union of per-line buffers is the buffer of the multiline (equal to ~1e-14), and the
    intersection area is A + B - area(A u B): one overlay per theta instead of two.
    """
    scores = np.zeros(len(thetas))
    if not predicted or not truth:
        return scores
    geoms = line_geometries([*predicted, *truth])
    radii = np.asarray(thetas, dtype=float)
    buffers = shapely.buffer(geoms[None, :], radii[:, None], quad_segs=BUFFER_QUAD_SEGS)
    split = len(predicted)
    pred_area = shapely.union_all(buffers[:, :split], axis=1)
    true_area = shapely.union_all(buffers[:, split:], axis=1)
    union = shapely.union(pred_area, true_area)
    area_p, area_t, area_u = shapely.area(pred_area), shapely.area(true_area), shapely.area(union)
    overlaps = shapely.intersects(pred_area, true_area)
    for index in range(len(thetas)):
        if area_u[index] == 0 or not overlaps[index]:
            continue
        iou = (area_p[index] + area_t[index] - area_u[index]) / area_u[index]
        if iou > 0:
            scores[index] = 2 * iou / (1 + iou)
    return scores


def worst_line_scores(thetas: Sequence[float] = THETAS) -> dict[str, float]:
    """The release's values when a side has no line or its line metrics fail."""
    values: dict[str, float] = {}
    for theta in thetas:
        values[f"line_frechet@{theta_key(theta)}"] = theta
        values[f"buffer_f1@{theta_key(theta)}"] = 0.0
    return values


def line_scores(
    predicted: Sequence[np.ndarray], truth: Sequence[np.ndarray], thetas: Sequence[float] = THETAS
) -> dict[str, float]:
    """Mean Fréchet per item: Hungarian matching on uncapped distances, matched distances capped
    at theta, theta for every unmatched line on either side; and buffer F1."""
    distances = frechet_matrix(list(predicted), list(truth))
    if not np.isfinite(distances).all():
        raise ReleaseLineFailure("a Fréchet distance is not finite")
    rows, cols = linear_sum_assignment(distances) if distances.size else ([], [])
    matched = distances[rows, cols] if distances.size else np.empty(0)
    unmatched = len(predicted) + len(truth) - 2 * len(matched)
    f1 = buffer_f1_scores(predicted, truth, thetas)
    values: dict[str, float] = {}
    for index, theta in enumerate(thetas):
        capped = np.minimum(matched, theta)
        count = len(matched) + unmatched
        mean = (float(np.sum(capped)) + unmatched * theta) / count if count else 0.0
        values[f"line_frechet@{theta_key(theta)}"] = mean
        values[f"buffer_f1@{theta_key(theta)}"] = float(f1[index])
    return values


def score_network(
    predicted: Mapping[str, Any],
    truth: Mapping[str, Any],
    width: int,
    height: int,
    thetas: Sequence[float] = THETAS,
) -> NetworkScore:
    """All task-3 values of one item from WKT lists {"junctions", "lines"} in pixels.

    Where the release drops the item we score the bad answer (no junction, no line) instead and
    say so in `anomaly`; where its line metrics fail we keep its worst line values, likewise.
    Ground truth that the release cannot read raises ValueError (there is nothing to score).
    """
    try:
        true_points = normalised_points(truth["junctions"], width, height, skip_other=False)
    except ReleaseDropsItem as exc:
        raise ValueError(f"unusable ground truth: {exc}") from exc
    anomaly: str | None = None
    dropped = False
    try:
        pred_points = normalised_points(predicted["junctions"], width, height, skip_other=True)
    except ReleaseDropsItem as exc:
        predicted = {"junctions": [], "lines": []}
        pred_points = np.empty((0, 2))
        anomaly, dropped = f"the release drops this item: {exc}", True
    values = junction_scores(pred_points, true_points, thetas)
    pred_entries, true_entries = predicted["lines"], truth["lines"]
    if not isinstance(pred_entries, Sized):
        # Lines without len() (null, a number): the release's line metrics raise outside their
        # own try after its junction values are kept, so the item leaves only its line means
        # (and counts as an error). We keep those junction values and score the worst lines.
        values.update(worst_line_scores(thetas))
        anomaly = anomaly or f"the release drops this item's lines: lines {pred_entries!r}"
        return NetworkScore(values, anomaly, True)
    if not pred_entries or not true_entries:
        values.update(worst_line_scores(thetas))
        return NetworkScore(values, anomaly, dropped)
    try:
        pred_lines = normalised_lines(
            cast(Iterable[Any], pred_entries), width, height, skip_other=True
        )
        true_lines = normalised_lines(true_entries, width, height, skip_other=False)
        values.update(line_scores(pred_lines, true_lines, thetas))
    except ReleaseLineFailure as exc:
        values.update(worst_line_scores(thetas))
        anomaly = f"the release's line metrics fail: {exc}"
    return NetworkScore(values, anomaly, dropped)
