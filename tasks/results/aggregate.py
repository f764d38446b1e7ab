"""Corpus-level metrics from scored items: per task, per slice of each label, and suite-wide."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

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
    collected: dict[tuple[str, str, str], list[float]] = {}
    labels, metrics = suite.slice_labels, suite.slice_metrics
    for entry in entries:
        item_labels, values = entry.item.labels, entry.values
        for label in labels:
            if label not in item_labels:
                continue
            group_value = item_labels[label]
            for metric in metrics:
                if metric in values:
                    collected.setdefault((label, group_value, metric), []).append(values[metric])
    label_order = {label: n for n, label in enumerate(labels)}
    metric_order = {metric: n for n, metric in enumerate(metrics)}
    return sorted(
        collected.items(),
        key=lambda pair: (label_order[pair[0][0]], pair[0][1], metric_order[pair[0][2]]),
    )
