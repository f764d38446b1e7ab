"""TRIP's penalties as headline statistics (`benchmarks.suite.Statistic`): the accuracy of one
group of a label minus the worst (or the one) other group's, resampled within each group so
that every resample compares groups of the sizes the suite has."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from roadeval.benchmarks.headline_stats import group_columns, ratio, value_columns
from roadeval.benchmarks.suite import ScoredItem, Verdicts
from roadeval.benchmarks.trip.metrics import CORRECT
from roadeval.benchmarks.trip.taxonomy import Modality

Array = NDArray[np.float64]


@dataclass(frozen=True)
class AccuracyGap:
    """Accuracy on label `label` = `high` minus the lowest accuracy among the groups `low`
    names (every other group when `low` is empty), as `metrics.modality_penalty` and
    `metrics.difficulty_penalty` compute them. Columns: [correct, count] for `high`, then for
    each compared group in sorted order; undefined unless both sides have items."""

    label: str
    high: str
    low: tuple[str, ...] = ()

    @property
    def strata(self) -> tuple[str, ...]:
        return (self.label,)

    def columns(self, scored: Sequence[ScoredItem]) -> Array | None:
        groups = [entry.item.labels.get(self.label) for entry in scored]
        present = set(groups)
        others = sorted(
            group
            for group in present
            if group is not None and group != self.high and (not self.low or group in self.low)
        )
        if self.high not in present or not others:
            return None
        correct = value_columns(scored, CORRECT)
        if correct is None:
            return None
        return group_columns(correct, groups, [self.high, *others])

    def value(self, sums: Array) -> Array:
        accuracies = ratio(sums[:, 0::2], sums[:, 1::2])
        return accuracies[:, 0] - accuracies[:, 1:].min(axis=1)

    def verdicts(self, sums: Array) -> Verdicts | None:
        return None


MODALITY_PENALTY = AccuracyGap("modality", Modality.TEXT.value)
DIFFICULTY_PENALTY = AccuracyGap("difficulty", "easy", ("hard",))
