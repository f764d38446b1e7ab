"""V2X-QA's expected calibration error as a headline statistic (`benchmarks.suite.Statistic`):
the release's 12 bins, over the items that have a confidence, as `calibration` computes it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from roadeval.benchmarks.suite import ScoredItem, Verdicts
from roadeval.benchmarks.v2xqa.calibration import N_BINS, bin_edges, bin_index
from roadeval.benchmarks.v2xqa.summary import outcome_of

Array = NDArray[np.float64]


@dataclass(frozen=True)
class CalibrationError:
    """ECE = sum over bins of |correct - confidence| summed in the bin, over the items with a
    confidence (one outside [0, 1] counts there but in no bin, as in `calibration`). Columns:
    [with a confidence], then per bin [count, confidence, correct]."""

    strata: tuple[str, ...] = ()

    def columns(self, scored: Sequence[ScoredItem]) -> Array | None:
        edges = bin_edges(N_BINS)
        columns = np.zeros((len(scored), 1 + 3 * N_BINS))
        for row, entry in enumerate(scored):
            outcome = outcome_of(entry)
            if outcome.confidence is None:
                continue
            columns[row, 0] = 1.0
            index = bin_index(outcome.confidence, edges)
            if index is not None:
                start = 1 + 3 * index
                columns[row, start : start + 3] = (1.0, outcome.confidence, outcome.correct)
        return columns if columns[:, 0].any() else None

    def value(self, sums: Array) -> Array:
        confidence, correct = sums[:, 2::3], sums[:, 3::3]
        with np.errstate(divide="ignore", invalid="ignore"):
            gaps = np.abs(correct - confidence).sum(axis=1)
            return np.where(sums[:, 0] > 0, gaps / sums[:, 0], np.nan)

    def verdicts(self, sums: Array) -> Verdicts | None:
        return None
