"""The line beside a suite's leaderboard that says what its bracketed intervals are, read from
the run's manifest (`IntervalsRecord`): the level, and per headline how its interval was
computed, over how many items, or clusters of items (`clusters`), the same in `roadeval show`
and the HTML report."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from roadeval.tasks.results.aggregate import SUITE_WIDE
from roadeval.tasks.results.intervals import BOOTSTRAP, CLUSTERED, WILSON
from roadeval.tasks.results.manifest import HeadlineMethod, IntervalsRecord

# Tasks named where a per-task method holds in some tasks only; the rest are counted.
NAMED_TASKS = 5


def _wide(method: HeadlineMethod) -> str:
    if not method.items:
        return _per_task(method)  # a manifest from before items were recorded
    if method.method == WILSON:
        return f"Wilson score interval over {method.items:,} independent items"
    if method.method == CLUSTERED:
        return (
            f"percentile bootstrap over {method.clusters or 0:,} {method.unit} "
            f"({method.items:,} items, each {_singular(method.unit)}'s drawn together)"
        )
    return f"percentile bootstrap over {method.items:,} items"


def _per_task(method: HeadlineMethod) -> str:
    if method.method == WILSON:
        return "Wilson score interval (items independent)"
    if method.method == CLUSTERED:
        return f"percentile bootstrap over the task's {method.unit}"
    return "percentile bootstrap over items"


def _singular(unit: str) -> str:
    """'scene' of 'scenes'; a unit that is no plain plural noun reads as 'cluster'."""
    return unit[:-1] if unit.endswith("s") and " " not in unit else "cluster"


def _tasks(tasks: Sequence[str]) -> str:
    named = ", ".join(tasks[:NAMED_TASKS])
    rest = len(tasks) - NAMED_TASKS
    return named + (f" and {rest} more" if rest > 0 else "")


def _grouped(
    methods: Sequence[HeadlineMethod], phrase: Callable[[HeadlineMethod], str]
) -> list[tuple[str, list[str]]]:
    """(phrase, the metrics it describes), in the order the metrics first come."""
    found: dict[str, list[str]] = {}
    for method in methods:
        metrics = found.setdefault(phrase(method), [])
        if method.metric not in metrics:
            metrics.append(method.metric)
    return list(found.items())


def _task_phrases(methods: Sequence[HeadlineMethod]) -> dict[str, str]:
    """Per metric of per-task rows: how its intervals were computed, naming the tasks of a
    method that holds in some of them only."""
    by_metric: dict[str, dict[str, list[str]]] = {}
    for method in methods:
        by_metric.setdefault(method.metric, {}).setdefault(_per_task(method), []).append(
            method.task
        )
    phrases = {}
    for metric, ways in by_metric.items():
        if len(ways) == 1:
            phrases[metric] = next(iter(ways))
        else:
            phrases[metric] = "; ".join(f"{way} in {_tasks(tasks)}" for way, tasks in ways.items())
    return phrases


def interval_legend(record: IntervalsRecord | None, suite: str) -> str | None:
    """One line: what `[a, b]` beside `suite`'s headline values is; None when the run's
    manifest records no interval of the suite."""
    if record is None:
        return None
    methods = [
        h
        for h in record.headlines
        if h.suite == suite and not h.variant and h.method in (WILSON, BOOTSTRAP, CLUSTERED)
    ]
    if not methods:
        return None
    wide = [h for h in methods if h.task == SUITE_WIDE]
    parts = [f"{', '.join(metrics)}: {way}" for way, metrics in _grouped(wide, _wide)]
    per_task = _task_phrases([h for h in methods if h.task != SUITE_WIDE])
    ways: dict[str, list[str]] = {}
    for metric, way in per_task.items():
        ways.setdefault(way, []).append(metric)
    parts += [f"{', '.join(metrics)} per task: {way}" for way, metrics in ways.items()]
    line = f"[a, b]: {record.level:.0%} interval. " + "; ".join(parts) + "."
    if any(h.method != WILSON for h in methods):
        line += f" Bootstrap: {record.resamples:,} resamples, seed {record.seed}."
    return line
