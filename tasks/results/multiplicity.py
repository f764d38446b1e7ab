"""Many tests at once: a panel's comparison of two runs tests every suite x model x headline
row, so at 95% each, some of 60 unchanged rows would read as moved most of the time. Holm's
step-down keeps the chance of any false flag in one comparison at most the level (the
family-wise error rate), whatever the rows' dependence, and flags more than Bonferroni."""

from __future__ import annotations

from collections.abc import Sequence

from roadeval.tasks.results.intervals import LEVEL

# The family-wise error rate of one comparison's flags: 5%, as each row's interval is 95%.
FAMILY_LEVEL = round(1 - LEVEL, 10)


def holm_adjusted(p_values: Sequence[float]) -> list[float]:
    """Holm's adjusted p-values, in the order given: the k-th smallest of m is multiplied by
    m - k + 1, never below the one before it (step-down), at most 1. A row is flagged at
    level a when its adjusted p-value is at most a."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted
