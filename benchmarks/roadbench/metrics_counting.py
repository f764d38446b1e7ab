"""Classification metrics as the release reads them off sklearn's `classification_report`:
accuracy and support-weighted precision, recall and F1 with zero_division=0, plus RMSE."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class WeightedScores:
    """The report's `accuracy` and its `weighted avg` row."""

    accuracy: float
    precision: float
    recall: float
    f1: float


def weighted_scores(truth: Sequence[Hashable], predicted: Sequence[Hashable]) -> WeightedScores:
    """Per-class scores over every label seen on either side, averaged with weights = support.

    A class that is never predicted has precision 0 (zero_division=0); a predicted class with no
    support (e.g. the bad-answer value 0) weighs nothing but still takes precision from others.
    """
    if len(truth) != len(predicted):
        raise ValueError(f"{len(truth)} true labels but {len(predicted)} predictions")
    if not truth:
        raise ValueError("no items to score")
    support = Counter(truth)
    predicted_count = Counter(predicted)
    hits = Counter(t for t, p in zip(truth, predicted, strict=True) if t == p)
    total = len(truth)
    precision = recall = f1 = 0.0
    for label, weight in support.items():
        tp = hits[label]
        n_pred = predicted_count[label]
        precision += weight * (tp / n_pred if n_pred else 0.0)
        recall += weight * tp / weight
        # 2PR/(P+R) written as 2tp/(|pred| + |true|): identical, and defined when tp == 0.
        f1 += weight * (2 * tp / (n_pred + weight))
    return WeightedScores(
        accuracy=sum(hits.values()) / total,
        precision=precision / total,
        recall=recall / total,
        f1=f1 / total,
    )


def rmse(truth: Sequence[float], predicted: Sequence[float]) -> float:
    """Root mean squared error over all items (bad answers already mapped to their value)."""
    if len(truth) != len(predicted):
        raise ValueError(f"{len(truth)} true values but {len(predicted)} predictions")
    if not truth:
        raise ValueError("no items to score")
    squared = sum((p - t) ** 2 for t, p in zip(truth, predicted, strict=True))
    return math.sqrt(squared / len(truth))
