"""Corpus-level metrics from scored items: per task, per slice of each label, and suite-wide."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from roadeval.benchmarks.suite import ScoredItem, Suite
from roadeval.storage.records import MetricRow

ALL = ""  # the slice name of the rows that cover every item of a task
SUITE_WIDE = "*"  # the task name of suite-level rows


def aggregate(
    suite: Suite, model: str, run_id: str, scored: Sequence[ScoredItem], variant: str = ""
) -> list[MetricRow]:
    """Metric rows for one suite x model, of the items shown one way (`variant`: '' as
    released, 'blind'), never mixed; the official numbers come from the suite's summarize."""
    rows: list[MetricRow] = []
    by_task: dict[str, list[ScoredItem]] = defaultdict(list)
    for entry in scored:
        by_task[entry.item.task].append(entry)

    def row(task: str, slice_: str, value_: str, metric: str, value: float, n: int) -> MetricRow:
        return MetricRow(
            run_id=run_id,
            suite=suite.name,
            task=task,
            model=model,
            slice=slice_,
            slice_value=value_,
            metric=metric,
            value=float(value),
            n=n,
            variant=variant,
        )

    per_task: dict[str, dict[str, float]] = {}
    for task in sorted(by_task):
        entries = by_task[task]
        per_task[task] = suite.summarize(task, entries)
        rows.extend(row(task, ALL, "", m, v, len(entries)) for m, v in per_task[task].items())
        rows.extend(
            row(task, label, group_value, metric, sum(values) / len(values), len(values))
            for (label, group_value, metric), values in _slices(suite, entries)
        )
    rows.extend(
        row(SUITE_WIDE, ALL, "", m, v, len(scored)) for m, v in suite.overall(per_task).items()
    )
    rows.extend(
        row(g.task, g.slice, g.slice_value, g.metric, g.value, g.n)
        for g in suite.group_values(scored)
    )
    return rows


def _slices(
    suite: Suite, entries: Sequence[ScoredItem]
) -> list[tuple[tuple[str, str, str], list[float]]]:
    """Each slice metric's values per label and label value, in one pass over the entries (a
    pass per label was most of a rerun's metric time), in item order, ordered by label, then
    value, then metric; a slice whose items lack the metric has no values and no entry. An
    item without the label (a condition only some tasks carry) is in no slice of it."""
    labels, metrics = suite.slice_labels, suite.slice_metrics
    # Per label, per label value, per metric: the values. Nested dicts, not a dict keyed by a
    # (label, value, metric) tuple: a tuple made per item and label was the pass's cost.
    collected: dict[str, dict[str, dict[str, list[float]]]] = {label: {} for label in labels}
    for entry in entries:
        values = entry.values
        present = [(metric, values[metric]) for metric in metrics if metric in values]
        if not present:
            continue
        item_labels = entry.item.labels
        for label in labels:
            group_value = item_labels.get(label, _MISSING)
            if group_value is _MISSING:
                continue
            groups = collected[label]
            by_metric = groups.get(group_value)
            if by_metric is None:
                by_metric = groups[group_value] = {}
            for metric, value in present:
                found = by_metric.get(metric)
                if found is None:
                    by_metric[metric] = [value]
                else:
                    found.append(value)
    return [
        ((label, group_value, metric), by_metric[metric])
        for label in labels
        for group_value, by_metric in sorted(collected[label].items())
        for metric in metrics
        if metric in by_metric
    ]


_MISSING: Any = object()
