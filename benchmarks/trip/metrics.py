"""TRIP's report figures: accuracy overall and by label, two structural penalties, abnormal counts.

Every figure is computed from per-item `correct` values, so an abnormal reply that the rule marks
wrong lowers accuracy exactly as the protocol says, and is counted separately as well.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from roadeval.benchmarks.suite import ParseStatus, ScoredItem
from roadeval.benchmarks.trip.taxonomy import Modality

CORRECT = "correct"
MODALITY = "modality"
DIFFICULTY = "difficulty"


def accuracy(scored: Sequence[ScoredItem]) -> float:
    """Share of items answered correctly (unparsed replies count as wrong)."""
    return float(np.mean([row.values[CORRECT] for row in scored]))


def accuracy_by_label(scored: Sequence[ScoredItem], label: str) -> dict[str, float]:
    """Accuracy per value of one item label (role, subject, ..., modality), values sorted."""
    return accuracy_by_labels(scored, (label,))[label]


def accuracy_by_labels(
    scored: Sequence[ScoredItem], labels: Sequence[str]
) -> dict[str, dict[str, float]]:
    """`accuracy_by_label` of each of `labels`, in one pass over the items."""
    groups: dict[str, dict[str, list[float]]] = {label: {} for label in labels}
    for row in scored:
        item_labels, correct = row.item.labels, row.values[CORRECT]
        for label in labels:
            by_value = groups[label]
            found = by_value.get(item_labels[label])
            if found is None:
                by_value[item_labels[label]] = [correct]
            else:
                found.append(correct)
    # The mean of each group's values, as `accuracy` takes it.
    return {
        label: {value: float(np.mean(by_value[value])) for value in sorted(by_value)}
        for label, by_value in groups.items()
    }


def modality_penalty(scored: Sequence[ScoredItem]) -> float | None:
    """Text accuracy minus the worst non-text modality's; None unless both kinds are present."""
    return _modality_penalty(accuracy_by_label(scored, MODALITY))


def difficulty_penalty(scored: Sequence[ScoredItem]) -> float | None:
    """Easy accuracy minus hard accuracy; None unless both levels are present."""
    return _difficulty_penalty(accuracy_by_label(scored, DIFFICULTY))


def penalties(scored: Sequence[ScoredItem]) -> dict[str, float | None]:
    """Both penalties (`modality_penalty`, `difficulty_penalty`), in one pass over the items."""
    by_label = accuracy_by_labels(scored, (MODALITY, DIFFICULTY))
    return {
        "modality_penalty": _modality_penalty(by_label[MODALITY]),
        "difficulty_penalty": _difficulty_penalty(by_label[DIFFICULTY]),
    }


def _modality_penalty(by_modality: dict[str, float]) -> float | None:
    text = by_modality.get(Modality.TEXT.value)
    others = [value for modality, value in by_modality.items() if modality != Modality.TEXT.value]
    if text is None or not others:
        return None
    return text - min(others)


def _difficulty_penalty(by_difficulty: dict[str, float]) -> float | None:
    if "easy" not in by_difficulty or "hard" not in by_difficulty:
        return None
    return by_difficulty["easy"] - by_difficulty["hard"]


def abnormal_by_rule(scored: Sequence[ScoredItem]) -> Counter[str]:
    """How many replies each abnormal rule caught (the paper's stability indicator)."""
    return Counter(row.parsed.rule for row in scored if row.parsed.status is not ParseStatus.OK)


def summarize_items(scored: Sequence[ScoredItem]) -> dict[str, float]:
    """The corpus figures of one task: accuracy, abnormal counts, and the penalties when defined."""
    if not scored:
        return {}
    abnormal = abnormal_by_rule(scored)
    total_abnormal = sum(abnormal.values())
    summary = {
        "accuracy": accuracy(scored),
        "abnormal_count": float(total_abnormal),
        "abnormal_rate": total_abnormal / len(scored),
    }
    summary.update({f"abnormal.{rule}": float(count) for rule, count in sorted(abnormal.items())})
    summary.update({name: value for name, value in penalties(scored).items() if value is not None})
    return summary


@dataclass(frozen=True)
class ParetoRow:
    """One bar of a role's Pareto error plot: a knowledge point, its errors, its share of the
    role's errors and the running share down to it."""

    knowledge_point: str
    errors: int
    share: float
    cumulative_share: float


def error_pareto(scored: Sequence[ScoredItem]) -> dict[str, list[ParetoRow]]:
    """Per role (roles sorted), knowledge points by error count (most first, ties by name) with
    their share and cumulative share of the role's errors; a role without errors has no chart."""
    errors: dict[str, Counter[str]] = {}
    for row in scored:
        if row.values[CORRECT] < 1.0:
            role = row.item.labels["role"]
            errors.setdefault(role, Counter())[row.item.labels["knowledge_point"]] += 1
    charts: dict[str, list[ParetoRow]] = {}
    for role in sorted(errors):
        ranked = sorted(errors[role].items(), key=lambda pair: (-pair[1], pair[0]))
        counts = np.array([count for _, count in ranked])
        total = counts.sum()
        # The running total in integers, divided once: the last share is exactly 1.0.
        running = np.cumsum(counts)
        charts[role] = [
            ParetoRow(point, int(count), float(count / total), float(cumulative / total))
            for (point, count), cumulative in zip(ranked, running, strict=True)
        ]
    return charts
