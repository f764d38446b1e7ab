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
        for label in suite.slice_labels:
            groups: dict[str, list[ScoredItem]] = defaultdict(list)
            for entry in entries:
                # An item without the label (e.g. a condition only some tasks carry) has no slice.
                if label in entry.item.labels:
                    groups[entry.item.labels[label]].append(entry)
            for group_value, members in sorted(groups.items()):
                for metric in suite.slice_metrics:
                    values = [m.values[metric] for m in members if metric in m.values]
                    if values:
                        rows.append(
                            row(
                                task,
                                label,
                                group_value,
                                metric,
                                sum(values) / len(values),
                                len(values),
                            )
                        )
    rows.extend(
        row(SUITE_WIDE, ALL, "", m, v, len(scored)) for m, v in suite.overall(per_task).items()
    )
    rows.extend(
        row(g.task, g.slice, g.slice_value, g.metric, g.value, g.n)
        for g in suite.group_values(scored)
    )
    return rows
