"""The release's calibration metrics (compute_ece and the Brier loop of its eval script), over
the items that have a confidence.

ECE: 12 equal-width bins from np.linspace(0, 1, 13); the first bin is closed [0, 1/12], the
others (lo, hi]; ECE = sum over non-empty bins of |mean correct - mean confidence| * n_b / N.
Brier: per item, sum over A-D of (p_k - onehot_k)^2 (0 to 2), averaged.
Computed in float64; the release casts to float32 first, so values differ by up to ~2e-8, and
a confidence that sits exactly on a bin edge in float64 can fall one bin higher there (float32
rounds 1/12 up): the bins here are the stated ones, applied to the value as given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from roadeval.benchmarks.v2xqa.tasks import LETTERS

N_BINS = 12  # the release's Config.n_bins


def bin_edges(n_bins: int = N_BINS) -> list[float]:
    """The release's np.linspace(0.0, 1.0, n_bins + 1), as floats."""
    return [float(edge) for edge in np.linspace(0.0, 1.0, n_bins + 1)]


def bin_index(confidence: float, edges: Sequence[float]) -> int | None:
    """The bin holding `confidence` ([e0, e1], then (e_i, e_i+1]); None outside [0, 1]."""
    for index in range(len(edges) - 1):
        lo, hi = edges[index], edges[index + 1]
        inside = lo <= confidence <= hi if index == 0 else lo < confidence <= hi
        if inside:
            return index
    return None


@dataclass(frozen=True)
class CalibrationBin:
    lo: float
    hi: float
    count: int
    mean_confidence: float
    accuracy: float


def calibration_bins(
    confidences: Sequence[float], correct: Sequence[float], n_bins: int = N_BINS
) -> list[CalibrationBin]:
    """The non-empty bins, in order (the release's bin_stats, with edges instead of centres)."""
    if len(confidences) != len(correct):
        raise ValueError("calibration needs one correctness value per confidence")
    edges = bin_edges(n_bins)
    members: dict[int, list[int]] = {}
    for position, confidence in enumerate(confidences):
        index = bin_index(confidence, edges)
        if index is not None:
            members.setdefault(index, []).append(position)
    return [
        CalibrationBin(
            edges[index],
            edges[index + 1],
            len(rows),
            sum(confidences[r] for r in rows) / len(rows),
            sum(correct[r] for r in rows) / len(rows),
        )
        for index, rows in sorted(members.items())
    ]


def expected_calibration_error(
    confidences: Sequence[float], correct: Sequence[float], n_bins: int = N_BINS
) -> float | None:
    """ECE as in the module docstring; None for no items (the release prints 0.0 there)."""
    total = len(confidences)
    if total == 0:
        return None
    bins = calibration_bins(confidences, correct, n_bins)
    return sum(abs(b.accuracy - b.mean_confidence) * b.count / total for b in bins)


def brier_item(probs: Mapping[str, float], gold: str) -> float:
    """Sum over A-D of (p_k - [k == gold])^2; a gold outside A-D is an all-zero target, as in
    the release."""
    return sum((probs[letter] - (1.0 if letter == gold else 0.0)) ** 2 for letter in LETTERS)


def mean_brier(per_item: Sequence[float]) -> float | None:
    """The mean of per-item Brier scores; None for no items (the release prints 0.0)."""
    return sum(per_item) / len(per_item) if per_item else None
