"""Terminal report of a run: the leaderboard per suite (its headline metrics), the blind
ablation where there is one, and run health; with `detail` (`roadeval show --detail`) the
official metrics per suite and task, and per slice."""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from roadeval.storage.records import EVERY_METRIC, MetricPairRow, MetricRow
from roadeval.tasks.results.ablation import BlindTable, blind_tables
from roadeval.tasks.results.aggregate import ALL, SUITE_WIDE
from roadeval.tasks.results.fitting import FitColumn, captioned, fitted_table
from roadeval.tasks.results.formats import (
    MISSING,
    SuiteRules,
    decimals_for,
    format_interval,
    judge_placeholder,
)
from roadeval.tasks.results.health_table import health_table
from roadeval.tasks.results.interval_legend import interval_legend
from roadeval.tasks.results.leaderboard import (
    ORDER_RULE,
    Board,
    Cell,
    Column,
    ItemHealth,
    Leaderboards,
    column_decimals,
    leaderboards,
    next_ties,
    ranking_column,
    task_order,
    variant_of,
)
from roadeval.tasks.results.left_out import left_out, left_out_table
from roadeval.tasks.results.manifest import IntervalsRecord, RunManifest, shown_as
from roadeval.tasks.results.provenance_table import provenance_table
from roadeval.tasks.shard.counts import COUNT_HEADINGS


def _task_order(key: tuple[str, ...]) -> tuple[tuple[int, int, str], tuple[str, ...]]:
    """Numbered tasks in numeric order, named tasks alphabetically, suite-wide rows last."""
    return (task_order(key[0]), key[1:])


# A label with more values than this (e.g. TRIP's 226 knowledge points) is left to `roadeval query`.
MAX_SLICE_VALUES = 20


def _released(metrics: Sequence[MetricRow]) -> list[MetricRow]:
    """The rows of the items as released (a blind ablation's rows have their own table)."""
    return [m for m in metrics if not variant_of(m.variant)]


def metric_tables(metrics: Sequence[MetricRow], rules: SuiteRules) -> list[Table]:
    """One table per suite: rows are task x metric, columns are models."""
    tables: list[Table] = []
    metrics = _released(metrics)
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
            places = decimals_for(cells[key].values())
            texts = (rules.text(suite, metric, cells[key].get(m), ALL, places) for m in models)
            table.add_row(label, metric, str(counts[key]), *texts)
        tables.append(table)
    return tables


def slice_tables(metrics: Sequence[MetricRow], rules: SuiteRules) -> list[Table]:
    """One table per suite that slices: rows are label = value, columns are models."""
    tables: list[Table] = []
    rows = [m for m in _released(metrics) if m.slice != ALL]
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
        vocabulary = rules.vocabulary(suite)
        # Each label's values in their natural order (easy, medium, hard), not alphabetical.
        position = {
            (label, value): at
            for label, values in values_per_label.items()
            for at, value in enumerate(vocabulary.ordered(label, values))
        }

        def natural(
            key: tuple[str, str, str, str], at: dict[tuple[str, str], int] = position
        ) -> tuple[object, ...]:
            task, label, value, metric = key
            return (task_order(task), label, at[(label, value)], metric)

        for key in sorted(cells, key=natural):
            if key[1] not in hidden:
                _, label, _, metric = key
                places = decimals_for(cells[key].values())
                texts = (
                    rules.text(suite, metric, cells[key].get(m), label, places) for m in models
                )
                table.add_row(*key, str(counts[key]), *texts)
        if hidden:
            table.caption = (
                f"not shown (over {MAX_SLICE_VALUES} values): {', '.join(hidden)}; "
                "see `roadeval query \"select * from metrics where slice = '...'\"`"
            )
        tables.append(table)
    return tables


def _heading(column: Column) -> str:
    return column.heading + (" (placeholder judge)" if column.placeholder else "")


def _cell_text(
    rules: SuiteRules, suite: str, column: Column, cell: Cell | None, places: int
) -> str:
    """The value, its rank in the column (#1 is best), and its interval on a line of its own."""
    if cell is None:
        return MISSING
    text = rules.text(suite, column.metric, cell.value, ALL, places)
    if cell.rank is not None:
        text += f" #{cell.rank}"
    interval = format_interval(cell.ci_low, cell.ci_high)
    return f"{text}\n{interval}" if interval else text


# The items beside a board's values: (ItemHealth field, the count it is, as headed).
HEALTH_COLUMNS = tuple((name, COUNT_HEADINGS[name]) for name in ("unparsed", "abnormal", "errors"))


def board_columns(board: Board, rules: SuiteRules) -> list[FitColumn]:
    """A board's columns as every text rendering shows them: model (whole, a baseline
    marked), its headline values (each with its rank in the column and its interval where
    computed), and beside them the items whose answers were not read, read by a fallback, or
    errors."""
    places = column_decimals(board)
    names = tuple(row.model + ("\n(baseline)" if row.baseline else "") for row in board.rows)
    columns = [FitColumn("model", names, whole=True, kept=True)]
    for at, (column, decimals) in enumerate(zip(board.columns, places, strict=True)):
        cells = (
            _cell_text(rules, board.suite, column, row.cells[at], decimals) for row in board.rows
        )
        columns.append(FitColumn(_heading(column), tuple(cells), numeric=True))
    if any(row.health is not None for row in board.rows):
        for name, heading in HEALTH_COLUMNS:
            cells = (
                MISSING if row.health is None else f"{getattr(row.health, name):,}"
                for row in board.rows
            )
            columns.append(FitColumn(heading, tuple(cells), numeric=True))
    return columns


def board_table(
    board: Board, rules: SuiteRules, title: str, width: int, legend: Sequence[str] = ()
) -> Table:
    """A board as a table at most `width` wide (`board_columns`); under it `legend` and the
    columns that did not fit. Values wrap between numbers, never inside one."""
    table = fitted_table(board_columns(board, rules), width, title, edge=True)
    return captioned(table, width, legend)


def board_legend(board: Board) -> list[str]:
    """What each column of a board is, which way is better, and how its rows are ordered."""
    return [*(column.legend for column in board.columns), ORDER_RULE]


def _ties_caption(boards: Leaderboards) -> str | None:
    """The models the ranking cannot tell from the next one (their paired interval covers 0),
    and how many pairs differ by nothing significant in all; none without such pairs."""
    ties = [p for p in boards.pairs if not p.significant]
    if not ties:
        return None
    board = boards.lead
    index = ranking_column(board)
    tied = next_ties(board)
    named = []
    for row, below in itertools.pairwise(board.rows):
        if row.model in tied and index is not None:
            named.append(f"{row.model} ≈ {below.model} on {board.columns[index].label}")
    return (
        "not significantly different (95% paired interval covers 0) from the next model: "
        + ("; ".join(named) or "none")
        + f"; {len(ties)} such pairs in all (`roadeval report` lists them)"
    )


def lead_legend(boards: Leaderboards, intervals: IntervalsRecord | None) -> list[str]:
    """The lines under a suite's leaderboard: each column and which way is better, how rows
    are ordered, what its intervals are (the manifest's `intervals`), and the models the
    ranking cannot tell apart."""
    lines = [
        *board_legend(boards.lead),
        interval_legend(intervals, boards.suite),
        _ties_caption(boards),
    ]
    return [line for line in lines if line]


def leaderboard_tables(
    found: Sequence[Leaderboards],
    rules: SuiteRules,
    width: int,
    *,
    detail: bool = False,
    intervals: IntervalsRecord | None = None,
) -> list[Table]:
    """Each suite's leaderboard at most `width` wide with its legend and what its intervals
    are (from `intervals`, the manifest's record); with `detail`, its per-task headlines too."""
    tables: list[Table] = []
    for boards in found:
        legend = lead_legend(boards, intervals)
        tables.append(
            board_table(boards.lead, rules, f"{boards.suite}: leaderboard", width, legend)
        )
        if detail and boards.per_task is not None:
            title = f"{boards.suite}: per task"
            legend = board_legend(boards.per_task)
            tables.append(board_table(boards.per_task, rules, title, width, legend))
    return tables


def blind_table(found: BlindTable, rules: SuiteRules) -> Table:
    """The blind ablation of one suite: each model's headline metrics with and without vision."""
    table = Table(title=f"{found.suite}: with vision and blind", title_justify="left")
    for heading in ("model", "metric"):
        table.add_column(heading)
    for heading in ("with vision", "blind", "difference"):
        table.add_column(heading, justify="right")
    for line in found.lines:
        name = escape(line.model) + (" (baseline)" if line.baseline else "")
        metric = line.column.metric
        values = (line.seen, line.blind)
        texts = [rules.text(found.suite, metric, v.value if v else None) for v in values]
        difference = line.difference
        texts.append(MISSING if difference is None else f"{difference:+.3f}")
        table.add_row(name, escape(line.column.label), *texts)
    return table


def manifest_health(manifest: RunManifest) -> dict[tuple[str, str, str], ItemHealth]:
    """The leaderboard's health columns from the run's own counts (items as released)."""
    return {
        (c.suite, c.model, c.variant): ItemHealth(c.unparsed, c.abnormal, c.errors)
        for c in manifest.counts
    }


def run_rules(manifest: RunManifest) -> SuiteRules:
    """The printing rules of a run's suites, with its judge's placeholder reason if any."""
    return SuiteRules((s.name for s in manifest.suites), judge_placeholder(manifest))


def manifest_baselines(manifest: RunManifest) -> set[str]:
    """The run's models that are built-in baselines, by the label rows carry."""
    from roadeval.tasks.requests.model_spec import ModelSpec

    specs = [ModelSpec.model_validate(model) for model in manifest.models]
    return {spec.label for spec in specs if spec.is_baseline}


def print_leaderboards(
    console: Console,
    metrics: Sequence[MetricRow],
    rules: SuiteRules,
    *,
    health: Mapping[tuple[str, str, str], ItemHealth],
    baselines: Collection[str],
    pairs: Sequence[MetricPairRow] = (),
    detail: bool = False,
    intervals: IntervalsRecord | None = None,
) -> None:
    """The leaderboard per suite (with what its intervals are, from the manifest's
    `intervals`), then the blind ablation where the run has one; with `detail`, each suite's
    per-task headlines, its metrics per task and per slice."""
    found = leaderboards(metrics, rules, health=health, baselines=baselines, pairs=pairs)
    width = console.width
    for table in leaderboard_tables(found, rules, width, detail=detail, intervals=intervals):
        console.print(table)
    for blind in blind_tables(metrics, rules, baselines=baselines):
        console.print(blind_table(blind, rules))
    if detail:
        for table in [*metric_tables(metrics, rules), *slice_tables(metrics, rules)]:
            console.print(table)


def print_report(
    console: Console,
    metrics: Sequence[MetricRow],
    manifest: RunManifest,
    *,
    health: Mapping[tuple[str, str, str], ItemHealth] | None = None,
    pairs: Sequence[MetricPairRow] = (),
    detail: bool = False,
) -> None:
    """A run's summary: its leaderboards (and with `detail` every metric), its health, and a
    line per suite x model for what went wrong. `health` defaults to the manifest's counts."""
    rules = run_rules(manifest)
    print_leaderboards(
        console,
        metrics,
        rules,
        health=manifest_health(manifest) if health is None else health,
        baselines=manifest_baselines(manifest),
        pairs=pairs,
        detail=detail,
        intervals=manifest.intervals,
    )
    console.print(health_table(manifest.counts, console.width))
    if found := left_out(manifest):
        console.print(left_out_table(found, console.width))
    if (provenance := provenance_table(manifest, console.width)) is not None:
        console.print(provenance)
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
