"""RoadBench's headline metrics as statistics over column sums (`benchmarks.suite.Statistic`):
the support-weighted F1 of lane counting and road type, and the exact match pooled over lanes,
each exactly as `scoring.summarize_task` computes it from the metric scripts' view of the items
(`outcomes.Outcome`)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from roadeval.benchmarks.roadbench.metrics_lanes import compare_lanes
from roadeval.benchmarks.roadbench.outcomes import scored_outcome
from roadeval.benchmarks.roadbench.tasks import LANE_ALPHABETS, LANE_COUNTING_TASKS, ROAD_TYPE_TASK
from roadeval.benchmarks.suite import ScoredItem, Verdicts

Array = NDArray[np.float64]

# The tasks `scoring.summarize_task` reports an f1 for: lane counting and road type.
F1_TASKS = LANE_COUNTING_TASKS | {ROAD_TYPE_TASK}


@dataclass(frozen=True)
class WeightedF1:
    """`metrics_counting.weighted_scores(...).f1`: per true class, 2 tp / (|predicted| +
    |true|), weighted by its support. A predicted value no item has as its truth weighs
    nothing, so the classes are the true ones. Columns per class: [true, predicted, hit].
    Undefined (None) on the tasks whose summary has no f1 (lane designation, road network),
    as `exact_match` is off the lane tasks: a caller measuring every headline of a task (a
    comparison of two runs) gets no f1 there, as the run's own rows have none."""

    strata: tuple[str, ...] = ()

    def columns(self, scored: Sequence[ScoredItem]) -> Array | None:
        if any(entry.item.task not in F1_TASKS for entry in scored):
            return None
        truths: list[Hashable] = [entry.item.reference for entry in scored]
        # A dict matches labels as the release's Counter does (1 == 1.0, by hash and ==).
        classes: dict[Hashable, int] = {}
        for truth in truths:
            classes.setdefault(truth, len(classes))
        if not classes:
            return None
        columns = np.zeros((len(scored), 3 * len(classes)))
        for row, (entry, truth) in enumerate(zip(scored, truths, strict=True)):
            true_class = classes[truth]
            columns[row, 3 * true_class] = 1.0
            predicted = scored_outcome(entry).value
            predicted_class = classes.get(predicted) if isinstance(predicted, Hashable) else None
            if predicted_class is not None:
                columns[row, 3 * predicted_class + 1] = 1.0
                if predicted_class == true_class:
                    columns[row, 3 * true_class + 2] = 1.0
        return columns

    def value(self, sums: Array) -> Array:
        support, predicted, hits = sums[:, 0::3], sums[:, 1::3], sums[:, 2::3]
        with np.errstate(divide="ignore", invalid="ignore"):
            per_class = np.where(support > 0, 2 * hits / (predicted + support), 0.0)
            return np.asarray((support * per_class).sum(axis=1) / support.sum(axis=1))

    def verdicts(self, sums: Array) -> Verdicts | None:
        return None


@dataclass(frozen=True)
class LaneExactMatch:
    """`metrics_lanes.lane_exact_match` over all lanes of all items (per lane, not per item;
    0.0 without lanes). Columns: [exactly matched lanes, lanes]."""

    strata: tuple[str, ...] = ()

    def columns(self, scored: Sequence[ScoredItem]) -> Array | None:
        columns = np.zeros((len(scored), 2))
        for row, entry in enumerate(scored):
            alphabet = LANE_ALPHABETS.get(entry.item.task)
            if alphabet is None:
                return None
            lanes = compare_lanes(scored_outcome(entry).value, entry.item.reference, alphabet)
            columns[row] = (lanes.exact_lanes, lanes.lanes)
        return columns

    def value(self, sums: Array) -> Array:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(sums[:, 1] > 0, sums[:, 0] / sums[:, 1], 0.0)

    def verdicts(self, sums: Array) -> Verdicts | None:
        return None
