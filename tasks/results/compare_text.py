"""How a paired comparison row reads (`roadeval compare`, `roadeval history`, the history page):
the metric with its better direction, the two values, the difference with its 95% interval, over
how many items, and whether the move is beyond noise and which way."""

from __future__ import annotations

from roadeval.storage.records import ComparisonRow
from roadeval.tasks.results.formats import SuiteRules
from roadeval.tasks.results.intervals import LEVEL

LEVEL_TEXT = f"{LEVEL:.0%}"


def metric_text(row: ComparisonRow, rules: SuiteRules) -> str:
    """The metric's name with its arrow (↑ higher is better, ↓ lower)."""
    arrow = rules.metric(row.suite, row.metric).arrow
    return f"{row.metric} {arrow}".strip()


def difference_text(row: ComparisonRow) -> str:
    return f"{row.difference:+.3g} [{row.ci_low:+.3g}, {row.ci_high:+.3g}]"


def items_text(row: ComparisonRow, unit: str = "clusters") -> str:
    """Over how many items (and clusters, where the draw was by cluster)."""
    if row.clusters is None:
        return f"{row.n}"
    return f"{row.n} ({row.clusters} {unit})"


def verdict(row: ComparisonRow, rules: SuiteRules) -> str:
    """'worse' or 'better' when the interval leaves out 0 (by the metric's direction; 'moved'
    for a metric without one), else 'noise'."""
    if not row.significant:
        return "noise"
    way = rules.metric(row.suite, row.metric).verdict(row.difference).value
    return way if way in ("better", "worse") else "moved"


def legend(first: str, second: str) -> str:
    """What the columns of a comparison table count."""
    return (
        f"difference = {second} - {first} on the items both scored with unchanged inputs, with "
        f"its {LEVEL_TEXT} paired bootstrap interval (whole clusters where items share a scene); "
        "'worse'/'better' when the interval leaves out 0, by the metric's direction "
        "(↑ higher is better, ↓ lower); regressed/improved: items whose scores moved that way"
    )
