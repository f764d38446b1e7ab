"""Corpus-level figures as the release reports them: task accuracy x100 and the unweighted mean."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def accuracy_percent(correct: Sequence[float]) -> float:
    """Share of correct items times 100 (the release's `sum * 100 / len`)."""
    if not correct:
        raise ValueError("accuracy of an empty task is undefined")
    return sum(correct) * 100 / len(correct)


def unweighted_mean(task_accuracies: Iterable[float]) -> float:
    """Mean over tasks, each task counting once whatever its size (the release's average_score)."""
    values = list(task_accuracies)
    if not values:
        raise ValueError("mean over no tasks is undefined")
    return sum(values) / len(values)
