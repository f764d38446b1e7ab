"""Headline statistics common to the suites (the `Statistic` contract of `benchmarks.suite`):
a mean of a per-item value, a share of 0/1 verdicts, and an unweighted mean over tasks.

Each reads the per-item values the suite's scorer landed, over the items that have the value,
so that the metric recomputed from all items is the suite's own number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from roadeval.benchmarks.suite import ScoredItem, Verdicts

Array = NDArray[np.float64]


def value_columns(scored: Sequence[ScoredItem], key: str) -> Array | None:
    """[value, 1] for the items that have `key`, [0, 0] for those that do not; None when none
    has it (the metric is then undefined)."""
    found = [entry.values.get(key) for entry in scored]
    has = np.array([value is not None for value in found], dtype=np.float64)
    if not has.any():
        return None
    values = np.array([0.0 if value is None else value for value in found], dtype=np.float64)
    return np.column_stack([values, has])


def group_columns(columns: Array, groups: Sequence[str | None], order: Sequence[str]) -> Array:
    """[value, has] columns spread per group: [value, has] of the first group of `order`, then
    of the next...; an item whose group is not in `order` has zeros throughout."""
    position = {group: index for index, group in enumerate(order)}
    at = np.array([position.get(group, -1) if group is not None else -1 for group in groups])
    spread = np.zeros((len(groups), 2 * len(order)))
    rows = np.flatnonzero(at >= 0)
    spread[rows, 2 * at[rows]] = columns[rows, 0]
    spread[rows, 2 * at[rows] + 1] = columns[rows, 1]
    return spread


def ratio(numerator: Array, denominator: Array) -> Array:
    """numerator / denominator, NaN where the denominator is 0 (a resample without any item
    the metric covers: no value, never a made-up 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, numerator / denominator, np.nan)


@dataclass(frozen=True)
class Mean:
    """The mean of per-item value `key` over the items that have it, times `scale`."""

    key: str
    scale: float = 1.0
    strata: tuple[str, ...] = ()

    def columns(self, scored: Sequence[ScoredItem]) -> Array | None:
        return value_columns(scored, self.key)

    def value(self, sums: Array) -> Array:
        return ratio(sums[:, 0], sums[:, 1]) * self.scale

    def verdicts(self, sums: Array) -> Verdicts | None:
        return None


@dataclass(frozen=True)
class Proportion(Mean):
    """A share of 0/1 verdicts (accuracy): a `Mean` whose interval is a binomial one."""

    def columns(self, scored: Sequence[ScoredItem]) -> Array | None:
        columns = value_columns(scored, self.key)
        if columns is not None and not np.isin(columns[:, 0], (0.0, 1.0)).all():
            raise ValueError(f"{self.key!r} is declared a share of verdicts, but is not 0 or 1")
        return columns

    def verdicts(self, sums: Array) -> Verdicts:
        return Verdicts(round(float(sums[0])), round(float(sums[1])), self.scale)


@dataclass(frozen=True)
class TaskMean:
    """The unweighted mean over tasks of each task's mean of `key` (times `scale`): every task
    counts once whatever its size (TB-Bench's overall score). Columns: [sum, count] per task."""

    key: str
    scale: float = 1.0
    strata: tuple[str, ...] = ()

    def columns(self, scored: Sequence[ScoredItem]) -> Array | None:
        by_task = value_columns(scored, self.key)
        if by_task is None:
            return None
        tasks = [entry.item.task for entry in scored]
        return group_columns(by_task, tasks, sorted(set(tasks)))

    def value(self, sums: Array) -> Array:
        means = ratio(sums[:, 0::2], sums[:, 1::2])
        return means.mean(axis=1) * self.scale

    def verdicts(self, sums: Array) -> Verdicts | None:
        return None
