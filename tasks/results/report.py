"""Terminal report of a run: official metrics per suite and task, slices, and run health."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from roadeval.storage.records import MetricRow
from roadeval.tasks.results.aggregate import ALL, SUITE_WIDE
from roadeval.tasks.results.manifest import PairCounts, RunManifest, shown_as
from roadeval.tasks.shard.counts import EVERY_METRIC


def _fmt(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" if abs(value) < 1000 else f"{value:.0f}"


def _task_order(key: tuple[str, ...]) -> tuple[int, int, str, tuple[str, ...]]:
    """Numbered tasks in numeric order, named tasks alphabetically, suite-wide rows last."""
    task = key[0]
    return (task == SUITE_WIDE, int(task) if task.isdigit() else 1 << 30, task, key[1:])


# A label with more values than this (e.g. TRIP's 226 knowledge points) is left to `roadeval query`.
MAX_SLICE_VALUES = 20


def metric_tables(metrics: Sequence[MetricRow]) -> list[Table]:
    """One table per suite: rows are task x metric, columns are models (a blind ablation's a
    column of its own, "m (blind)")."""
    tables: list[Table] = []
    suites = sorted({m.suite for m in metrics})
    for suite in suites:
        rows = [m for m in metrics if m.suite == suite and m.slice == ALL]
        models = sorted({shown_as(m.model, m.variant) for m in rows})
        cells: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
        counts: dict[tuple[str, str], int] = {}
        for m in rows:
            cells[(m.task, m.metric)][shown_as(m.model, m.variant)] = m.value
            counts[(m.task, m.metric)] = max(counts.get((m.task, m.metric), 0), m.n)
        table = Table(title=f"{suite}: metrics per task", title_justify="left")
        table.add_column("task")
        table.add_column("metric")
        table.add_column("n", justify="right")
        for model in models:
            table.add_column(model, justify="right")

        single_task = len({task for task, _ in cells if task != SUITE_WIDE}) == 1
        for key in sorted(cells, key=_task_order):
            task, metric = key
            if single_task and task == SUITE_WIDE:
                continue  # the same numbers as the one task's rows
            label = "all tasks" if task == SUITE_WIDE else task
            table.add_row(
                label, metric, str(counts[key]), *(_fmt(cells[key].get(m)) for m in models)
            )
        tables.append(table)
    return tables


def slice_tables(metrics: Sequence[MetricRow]) -> list[Table]:
    """One table per suite that slices: rows are label = value, columns are models."""
    tables: list[Table] = []
    rows = [m for m in metrics if m.slice != ALL]
    for suite in sorted({m.suite for m in rows}):
        suite_rows = [m for m in rows if m.suite == suite]
        models = sorted({shown_as(m.model, m.variant) for m in suite_rows})
        cells: dict[tuple[str, str, str, str], dict[str, float]] = defaultdict(dict)
        counts: dict[tuple[str, str, str, str], int] = {}
        for m in suite_rows:
            key = (m.task, m.slice, m.slice_value, m.metric)
            cells[key][shown_as(m.model, m.variant)] = m.value
            counts[key] = max(counts.get(key, 0), m.n)
        table = Table(title=f"{suite}: per slice", title_justify="left")
        for column in ("task", "slice", "value", "metric"):
            table.add_column(column)
        table.add_column("n", justify="right")
        for model in models:
            table.add_column(model, justify="right")
        values_per_label: dict[str, set[str]] = defaultdict(set)
        for _, label, value, _ in cells:
            values_per_label[label].add(value)
        hidden = sorted(
            label for label, vals in values_per_label.items() if len(vals) > MAX_SLICE_VALUES
        )
        for key in sorted(cells, key=_task_order):
            if key[1] not in hidden:
                table.add_row(*key, str(counts[key]), *(_fmt(cells[key].get(m)) for m in models))
        if hidden:
            table.caption = (
                f"not shown (over {MAX_SLICE_VALUES} values): {', '.join(hidden)}; "
                "see `roadeval query \"select * from metrics where slice = '...'\"`"
            )
        tables.append(table)
    return tables


# Health columns: (heading, count name). "requests" counts HTTP requests, retries included.
_HEALTH_COLUMNS = (
    ("items", "items"),
    ("calls", "calls"),
    ("cached", "cached"),
    ("errors", "errors"),
    ("requests", "requests"),
    ("abnormal", "abnormal"),
    ("unparsed", "unparsed"),
    ("re-asks", "reasks"),
)


def health_table(counts: Sequence[PairCounts]) -> Table:
    """Calls, cache hits, errors and abnormal outputs per suite x model; judge calls, items
    whose scorer raised and items a stop left unfinished get columns of their own when there
    are any."""
    stopped = any(c.interrupted or c.not_run for c in counts)
    judged = any(c.judge_calls or c.judge_cached or c.unscored for c in counts)
    scorer_failed = any(c.scorer_errors for c in counts)
    table = Table(title="run health", title_justify="left")
    table.add_column("suite")
    table.add_column("model")
    for heading, _ in _HEALTH_COLUMNS:
        table.add_column(heading, justify="right")
    if judged:
        for heading in ("judge calls", "judge cached", "unscored"):
            table.add_column(heading, justify="right")
    if scorer_failed:
        table.add_column("scorer errors", justify="right")
    if stopped:
        table.add_column("not finished", justify="right")
    table.add_column("cost USD", justify="right")
    for c in counts:
        cost = f"{c.cost_usd:.4f}"
        if not c.cost_known:
            # No price in LiteLLM's map and none in the panel: unknown, which is not zero.
            cost = "unpriced" if c.cost_usd == 0 else f"≥{cost} (some unpriced)"
        cells = [str(getattr(c, name)) for _, name in _HEALTH_COLUMNS]
        if judged:
            cells += [str(c.judge_calls), str(c.judge_cached), str(c.unscored)]
        if scorer_failed:
            cells.append(str(c.scorer_errors))
        if stopped:
            cells.append(str(c.interrupted + c.not_run))
        table.add_row(c.suite, c.who, *cells, cost)
    return table


def print_report(console: Console, metrics: Sequence[MetricRow], manifest: RunManifest) -> None:
    for table in metric_tables(metrics):
        console.print(table)
    for table in slice_tables(metrics):
        console.print(table)
    console.print(health_table(manifest.counts))
    for c in manifest.counts:
        where = f"{escape(c.who)} on {escape(c.suite)}"
        if c.errors:
            kinds = ", ".join(f"{k}: {n}" for k, n in sorted(c.error_kinds.items()))
            console.print(
                f"[red]{where}: {c.errors} items failed ({kinds}); "
                f"first error: {escape(c.first_error or '')}[/red]"
            )
        if c.may_be_billed:
            console.print(
                f"[yellow]{where}: {c.may_be_billed} requests timed out or were cut off; "
                "the provider may still bill them[/yellow]"
            )
        for metric, unscored in sorted(c.unscored_metrics.items()):
            if metric == EVERY_METRIC:
                continue  # items whose scorer raised: the command's warning names them
            console.print(
                f"[yellow]{where}: {metric} not scored for {unscored.items} items; first "
                f"reason: {escape(unscored.first_reason)}[/yellow]"
            )
        if c.corrupt_cache_entries:
            first = c.corrupt_cache_entries[0]
            console.print(
                f"[yellow]{where}: {len(c.corrupt_cache_entries)} stored answers could not "
                f"be read and were asked again; first: {escape(first)}[/yellow]"
            )
