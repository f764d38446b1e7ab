"""Paired differences between two models on one headline metric: the difference over the items
both were scored on, and its percentile interval from the same resampled items for both (the
same resampled clusters where the items are clustered), so what the items have in common
cancels (a paired bootstrap)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from roadeval.benchmarks.suite import Statistic
from roadeval.storage.records import MetricPairRow
from roadeval.tasks.results.intervals import percentile

Array = NDArray[np.float64]


@dataclass(frozen=True)
class Measured:
    """One model's headline metric over a set of items: its value, the column sums over those
    items, and its value in each resample of draw `draw` (one id per draw of items, shared by
    the models drawn together); the draw's clusters (None: it drew items) and strata."""

    model: str
    metric: str
    statistic: Statistic
    value: float
    sums: Array
    draws: Array
    n: int
    draw: int
    clusters: int | None = None
    strata: tuple[str, ...] = ()


def pair_row(
    a: Measured, b: Measured, run_id: str, suite: str, task: str, variant: str
) -> MetricPairRow | None:
    """a - b with its paired interval (a and b from one draw); `significant` when the interval
    leaves out 0. Identical answers give identical sums in every resample (`resampling`), so
    their difference is exactly 0 throughout, never significant. None when no resample defines
    both metrics."""
    if a.draw != b.draw:
        raise ValueError(f"{a.model} and {b.model} were not drawn together: no paired interval")
    interval = percentile(a.draws - b.draws)
    if interval is None:
        return None
    low, high = interval
    return MetricPairRow(
        run_id=run_id,
        suite=suite,
        task=task,
        metric=a.metric,
        model_a=a.model,
        model_b=b.model,
        n=a.n,
        difference=a.value - b.value,
        ci_low=low,
        ci_high=high,
        significant=bool(low > 0 or high < 0),
        variant=variant,
    )
