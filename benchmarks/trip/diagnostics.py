"""TRIP's diagnostics beyond accuracy: the structural penalties per capability, and the Pareto of
errors by knowledge point per role as rows of the suite's own `pareto` table (`records`).

The paper (Fig. 12) compares the capability slices under two pressures, with the two penalties it
defines for the whole set, taken within each capability's items:

- modality penalty of capability c: accuracy on c's text items minus the worst accuracy among c's
  non-text modalities (image, point cloud), so positive is a drop under visual input;
- difficulty penalty of capability c: accuracy on c's easy items minus on c's hard items, so
  positive is a drop as items get harder.

A penalty is left out for a capability whose items lack one side (no text item, or no non-text
item; no easy or no hard item), as it is for the whole set.
"""

from __future__ import annotations

from collections.abc import Sequence

from roadeval.benchmarks.suite import GroupValue, ScoredItem
from roadeval.benchmarks.trip.metrics import error_pareto, penalties
from roadeval.benchmarks.trip.records import ErrorParetoRow
from roadeval.benchmarks.trip.taxonomy import SUITE_NAME, TASK

CAPABILITY = "capability"
MODALITY_PENALTY = "modality_penalty"
DIFFICULTY_PENALTY = "difficulty_penalty"


def capability_penalties(scored: Sequence[ScoredItem]) -> list[GroupValue]:
    """Both penalties per capability (capabilities sorted), as slice rows of the `capability`
    label beside its accuracy; `n` is the capability's item count."""
    groups: dict[str, list[ScoredItem]] = {}
    for row in scored:
        groups.setdefault(row.item.labels[CAPABILITY], []).append(row)
    values: list[GroupValue] = []
    for capability in sorted(groups):
        members = groups[capability]
        found = penalties(members)
        values.extend(
            GroupValue(TASK, CAPABILITY, capability, metric, value, len(members))
            for metric in (MODALITY_PENALTY, DIFFICULTY_PENALTY)
            if (value := found[metric]) is not None
        )
    return values


def pareto_rows(run_id: str, model: str, scored: Sequence[ScoredItem]) -> list[ErrorParetoRow]:
    """One model's Pareto charts (see `metrics.error_pareto`) as `pareto` rows, rank from 1."""
    return [
        ErrorParetoRow(
            run_id=run_id,
            suite=SUITE_NAME,
            model=model,
            role=role,
            knowledge_point=bar.knowledge_point,
            rank=rank,
            errors=bar.errors,
            share=bar.share,
            cumulative_share=bar.cumulative_share,
        )
        for role, chart in error_pareto(scored).items()
        for rank, bar in enumerate(chart, start=1)
    ]
