"""What moved between a baseline run and a rerun: item scores (verdicts that flipped) and
corpus metrics (with their deltas); and which metrics count as moved (`moved_metrics`), one
definition for `roadeval changes`, `roadeval diff` and the report."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from roadeval.storage.records import MetricDeltaRow, MetricRow, ScoreChangeRow, ScoreRow


def _verdict(value: float | None) -> bool:
    return value in (0.0, 1.0)


def score_changes(
    run_id: str,
    baseline_run_id: str,
    old: Sequence[ScoreRow],
    new: Sequence[ScoreRow],
) -> list[ScoreChangeRow]:
    """One item's metrics whose value or status differs between the two runs' score rows
    (a metric on one side only included); `flipped` when a 0/1 verdict turned over."""
    if not new:
        return []
    before = {row.metric: row for row in old}
    after = {row.metric: row for row in new}
    first = new[0]
    rows: list[ScoreChangeRow] = []
    for metric in sorted(set(before) | set(after)):
        a, b = before.get(metric), after.get(metric)
        old_value = a.value if a else None
        new_value = b.value if b else None
        old_status = a.status if a else None
        new_status = b.status if b else None
        if old_value == new_value and old_status == new_status:
            continue
        rows.append(
            ScoreChangeRow(
                run_id=run_id,
                baseline_run_id=baseline_run_id,
                suite=first.suite,
                model=first.model,
                item_id=first.item_id,
                task=first.task,
                sample=first.sample or 1,
                metric=metric,
                old_value=old_value,
                new_value=new_value,
                old_status=old_status,
                new_status=new_status,
                flipped=_verdict(old_value) and _verdict(new_value) and old_value != new_value,
                variant=first.variant or "",
            )
        )
    return rows


def metric_deltas(
    run_id: str,
    baseline_run_id: str,
    old: Iterable[MetricRow],
    new: Iterable[MetricRow],
    models: Iterable[tuple[str, str]] | None = None,
) -> list[MetricDeltaRow]:
    """Every metric of either run against the other's, matched by suite, task, model, slice,
    metric and variant (a blind metric against the baseline's blind one, never a released one).
    `models` (suite, model) limits the comparison to the pairs the rerun ran, so a model left
    out of the panel is not read as every metric of it removed."""

    def key(row: MetricRow) -> tuple[str, str, str, str, str, str, str]:
        variant = row.variant or ""
        return (row.suite, row.task, row.model, row.slice, row.slice_value, row.metric, variant)

    after = {key(row): row for row in new}
    pairs = set(models) if models is not None else {(k[0], k[2]) for k in after}
    before = {key(row): row for row in old if (row.suite, row.model) in pairs}
    rows: list[MetricDeltaRow] = []
    for k in sorted(set(before) | set(after)):
        a, b = before.get(k), after.get(k)
        old_value = a.value if a else None
        new_value = b.value if b else None
        delta = new_value - old_value if old_value is not None and new_value is not None else None
        rows.append(
            MetricDeltaRow(
                run_id=run_id,
                baseline_run_id=baseline_run_id,
                suite=k[0],
                task=k[1],
                model=k[2],
                slice=k[3],
                slice_value=k[4],
                metric=k[5],
                baseline_value=old_value,
                new_value=new_value,
                delta=delta,
                variant=k[6],
            )
        )
    return rows


SUITE_WIDE = "*"


def one_task_suites(keys: Iterable[tuple[str, str]]) -> frozenset[str]:
    """Of (suite, task) keys of metric rows: the suites with one task besides the suite-wide
    '*'. Such a suite (TRIP) lands its suite-wide numbers again under its task."""
    tasks: dict[str, set[str]] = {}
    for suite, task in keys:
        tasks.setdefault(suite, set()).add(task)
    return frozenset(suite for suite, found in tasks.items() if len(found - {SUITE_WIDE}) == 1)


def moved_metrics(
    rows: Iterable[MetricDeltaRow], one_task: Collection[str] = frozenset()
) -> list[MetricDeltaRow]:
    """The metrics that moved, the one definition `changes`, `diff` and the report count: a
    delta other than 0, or a value on one side only, over all items and in slices, each
    metric once (the task rows of a suite in `one_task` repeat its suite-wide rows, and are
    left out where the suite-wide row exists). Sorted: all items before slices, then by suite,
    task, model, metric and slice."""
    found = [row for row in rows if row.delta is None or row.delta != 0]
    wide = {_key(row) for row in found if row.task == SUITE_WIDE}
    kept = [
        row
        for row in found
        if row.task == SUITE_WIDE or row.suite not in one_task or _key(row) not in wide
    ]
    return sorted(kept, key=moved_order)


def _key(row: MetricDeltaRow) -> tuple[str, str, str, str, str, str]:
    return (row.suite, row.model, row.variant or "", row.slice, row.slice_value, row.metric)


def moved_order(row: MetricDeltaRow) -> tuple[bool, str, bool, str, str, str, str, str, str]:
    """All items before slices; suite-wide rows before a suite's tasks."""
    return (
        row.slice != "",
        row.suite,
        row.task != SUITE_WIDE,
        row.task,
        row.model,
        row.variant or "",
        row.metric,
        row.slice,
        row.slice_value,
    )
