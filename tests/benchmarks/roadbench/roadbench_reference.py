"""A slow, literal statement of what the release's metric scripts compute, written with plain
loops and whole-geometry shapely calls; the tests compare the fast implementation with it."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import shapely
from scipy.optimize import linear_sum_assignment
from shapely import LineString, MultiLineString, Point


def report(truth: list[Any], predicted: list[Any]) -> dict[str, float]:
    """accuracy and support-weighted precision/recall/F1 from a confusion matrix."""
    labels = sorted(set(truth) | set(predicted), key=repr)
    index = {label: k for k, label in enumerate(labels)}
    matrix = np.zeros((len(labels), len(labels)))
    for t, p in zip(truth, predicted, strict=True):
        matrix[index[t], index[p]] += 1
    tp = np.diag(matrix)
    support = matrix.sum(axis=1)
    predicted_count = matrix.sum(axis=0)
    precision = np.divide(tp, predicted_count, out=np.zeros_like(tp), where=predicted_count > 0)
    recall = np.divide(tp, support, out=np.zeros_like(tp), where=support > 0)
    denom = precision + recall
    f1 = np.divide(2 * precision * recall, denom, out=np.zeros_like(tp), where=denom > 0)
    weights = support / support.sum()
    return {
        "accuracy": float(tp.sum() / matrix.sum()),
        "precision": float((precision * weights).sum()),
        "recall": float((recall * weights).sum()),
        "f1": float((f1 * weights).sum()),
    }


def frechet(a: np.ndarray, b: np.ndarray) -> float:
    """Discrete Fréchet distance by the textbook table."""
    n, m = len(a), len(b)
    table = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            d = math.sqrt((a[i][0] - b[j][0]) ** 2 + (a[i][1] - b[j][1]) ** 2)
            if i == 0 and j == 0:
                table[i, j] = d
            elif i == 0:
                table[i, j] = max(table[i, j - 1], d)
            elif j == 0:
                table[i, j] = max(table[i - 1, j], d)
            else:
                table[i, j] = max(min(table[i - 1, j], table[i, j - 1], table[i - 1, j - 1]), d)
    return float(table[n - 1, m - 1])


def junctions(pred: list[Point], gt: list[Point], theta: float) -> tuple[float, float]:
    """(rmse, recall): closest remaining pair first while it is within theta."""
    free_pred, free_gt, errors = list(range(len(pred))), list(range(len(gt))), []
    matched = 0
    while free_pred and free_gt:
        best = None
        for i in free_pred:
            for j in free_gt:
                d = math.sqrt((pred[i].x - gt[j].x) ** 2 + (pred[i].y - gt[j].y) ** 2)
                if best is None or d < best[0]:
                    best = (d, i, j)
        assert best is not None
        if best[0] > theta:
            break
        errors.append(best[0] ** 2)
        free_pred.remove(best[1])
        free_gt.remove(best[2])
        matched += 1
    errors += [theta**2] * (len(free_pred) + len(free_gt))
    rmse = math.sqrt(sum(errors) / len(errors)) if errors else 0.0
    return rmse, (matched / len(gt) if gt else 0.0)


def lines(pred: list[LineString], gt: list[LineString], theta: float) -> tuple[float, float]:
    """(mean capped Fréchet, buffer F1) for normalised lines, both sides non-empty."""
    b1 = MultiLineString(pred).buffer(theta)
    b2 = MultiLineString(gt).buffer(theta)
    union = b1.union(b2).area
    iou = b1.intersection(b2).area / union if union else 0.0
    f1 = 2 * iou / (1 + iou) if iou else 0.0
    costs = np.array([[frechet(np.array(p.coords), np.array(g.coords)) for g in gt] for p in pred])
    rows, cols = linear_sum_assignment(costs)
    distances = [min(costs[r, c], theta) for r, c in zip(rows, cols, strict=True)]
    distances += [theta] * (len(pred) + len(gt) - 2 * len(rows))
    return float(np.mean(distances)), f1


def network_item(predicted: dict, truth: dict, width: int, height: int) -> dict[str, float]:
    """Every task-3 value of one item, for theta 0.1, 0.2, 0.5."""

    def scale_point(text: str) -> Point:
        # The release writes the normalised point as WKT and reads it back before matching.
        p = shapely.from_wkt(text)
        return shapely.from_wkt(Point(p.x / width, p.y / height).wkt)

    def scale_line(text: str) -> LineString:
        return LineString([(x / width, y / height) for x, y in shapely.from_wkt(text).coords])

    pred_points = [
        scale_point(t) for t in predicted["junctions"] if shapely.from_wkt(t).geom_type == "Point"
    ]
    gt_points = [scale_point(t) for t in truth["junctions"]]
    values: dict[str, float] = {}
    for theta in (0.1, 0.2, 0.5):
        rmse, recall = junctions(pred_points, gt_points, theta)
        values[f"junction_rmse@{theta:g}"] = rmse
        values[f"junction_recall@{theta:g}"] = recall
        if predicted["lines"] and truth["lines"]:
            mean, f1 = lines(
                [scale_line(t) for t in predicted["lines"]],
                [scale_line(t) for t in truth["lines"]],
                theta,
            )
        else:
            mean, f1 = theta, 0.0
        values[f"line_frechet@{theta:g}"] = mean
        values[f"buffer_f1@{theta:g}"] = f1
    return values
