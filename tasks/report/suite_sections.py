"""Each suite's own figures, where the run has their data: TRIP's modality and difficulty
penalties and its Pareto charts of errors per role; V2X-QA's reliability diagrams with ECE and
Brier per model; STRIDE's ADE/FDE distributions and judge scores with the items left unscored;
RoadBench's per-task headline bars."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from roadeval.storage.records import MetricRow
from roadeval.tasks.report.blocks import Block, Cell, Figure, Fold, Header, Note, Table, plain
from roadeval.tasks.report.reading import PARETO_TOP, WHOLE, ReportData
from roadeval.tasks.report.score_reads import Histogram, ParetoBar, ReliabilityBin
from roadeval.tasks.results.aggregate import ALL, SUITE_WIDE
from roadeval.tasks.results.formats import SuiteRules
from roadeval.tasks.results.leaderboard import Board, task_order

PENALTIES = ("modality_penalty", "difficulty_penalty")
ALL_ITEMS = "all items"
# Pareto charts for the models first on TRIP's leaderboard; the others' as tables (a chart of
# four roles costs a fifth of a second to draw, and twenty of them say little more).
PARETO_CHARTS = 6


def _released(data: ReportData, suite: str) -> list[MetricRow]:
    return [m for m in data.metrics if m.suite == suite and not m.variant]


def trip_blocks(data: ReportData, rules: SuiteRules, order: Sequence[str]) -> list[Block]:
    """Per model, each penalty suite-wide and within each capability (bars), then per model a
    Pareto chart of errors per role."""
    from roadeval.tasks.report.drawing import draw
    from roadeval.tasks.report.plots import grouped_bars

    rows = _released(data, "trip")
    blocks: list[Block] = []
    for metric in PENALTIES:
        info = rules.metric("trip", metric)
        found = [
            m
            for m in rows
            if m.metric == metric
            and ((m.task == SUITE_WIDE and m.slice == ALL) or m.slice == "capability")
        ]
        if not found:
            continue
        groups = [ALL_ITEMS, *sorted({m.slice_value for m in found if m.slice})]
        value = {(m.model, m.slice_value if m.slice else ALL_ITEMS): m.value for m in found}
        models = [m for m in order if any(k[0] == m for k in value)]
        series = [(model, [value.get((model, g)) for g in groups]) for model in models]
        ylabel = f"{info.label} ({info.arrow} {info.direction})"
        svg = draw(grouped_bars, groups, series, ylabel=ylabel, zero_line=True)
        caption = f"trip: {info.label}, {info.description}; overall and per capability"
        blocks.append(Figure(svg, caption))
    by_model: dict[str, dict[str, list[ParetoBar]]] = defaultdict(lambda: defaultdict(list))
    for bar in data.pareto:
        by_model[bar.model][bar.group].append(bar)
    charted = [m for m in order if m in by_model] + sorted(set(by_model) - set(order))
    for index, model in enumerate(charted):
        roles = sorted(by_model[model].items())
        if index < PARETO_CHARTS:
            blocks.append(
                Fold(
                    f"trip: Pareto of errors per role, {model}",
                    (_pareto_chart(model, roles),),
                    index == 0,
                )
            )
        else:
            blocks.append(
                Fold(
                    f"trip: Pareto of errors per role, {model} (a table)",
                    (_pareto_table(model, roles),),
                )
            )
    return blocks


def _pareto_chart(model: str, roles: Sequence[tuple[str, list[ParetoBar]]]) -> Figure:
    from roadeval.tasks.report.drawing import draw
    from roadeval.tasks.report.plots import pareto_charts

    panels = [
        (f"{model}: {role}", [(b.category, b.errors, b.cumulative_share) for b in bars])
        for role, bars in roles
    ]
    caption = (
        f"{model}: items answered wrong per knowledge point (bars, the {PARETO_TOP} most, "
        "most first; bottom axis: items), and the cumulative share of the role's errors down "
        "to each bar (line; top axis: 0-100%)"
    )
    return Figure(draw(pareto_charts, panels), caption)


def _pareto_table(model: str, roles: Sequence[tuple[str, list[ParetoBar]]]) -> Table:
    headers = (
        Header("role"),
        Header("rank", True),
        Header("knowledge point"),
        Header("errors", True),
        Header("cumulative share", True),
    )
    rows = tuple(
        (
            plain(role),
            Cell(str(b.rank), b.rank),
            plain(b.category),
            Cell(str(b.errors), b.errors),
            Cell(f"{b.cumulative_share:.0%}", b.cumulative_share),
        )
        for role, bars in roles
        for b in bars
    )
    return Table(f"trip: Pareto of errors, {model}", headers, rows, "pareto")


def _calibration_table(rows: Sequence[MetricRow], rules: SuiteRules, order: Sequence[str]) -> Table:
    names = ("accuracy", "ece", "brier", "confidence_items", "no_confidence_items")
    value = {
        (m.model, m.metric): m.value
        for m in rows
        if m.task == SUITE_WIDE and m.slice == ALL and m.metric in names
    }
    headers = (Header("model"), *(Header(n.replace("_", " "), True) for n in names))
    table_rows = tuple(
        (
            plain(model),
            *(
                Cell(rules.text("v2xqa", n, value.get((model, n))), value.get((model, n)))
                for n in names
            ),
        )
        for model in order
        if any((model, n) in value for n in names)
    )
    return Table("v2xqa: calibration per model (all views)", headers, table_rows, "calibration")


def v2xqa_blocks(data: ReportData, rules: SuiteRules, order: Sequence[str]) -> list[Block]:
    """ECE, Brier and items with a confidence per model, and a reliability diagram each."""
    from roadeval.benchmarks.v2xqa.calibration import N_BINS
    from roadeval.tasks.report.drawing import draw
    from roadeval.tasks.report.plots import reliability_diagrams

    rows = _released(data, "v2xqa")
    if not rows:
        return []
    blocks: list[Block] = [_calibration_table(rows, rules, order)]
    bins: dict[str, list[ReliabilityBin]] = defaultdict(list)
    for b in data.reliability.get("v2xqa", []):
        bins[b.model].append(b)
    if not bins:
        blocks.append(Note("v2xqa: no answer came with letter probabilities: no reliability"))
        return blocks
    panels = [
        (model, [(b.lo, b.mean_confidence, b.accuracy, b.count) for b in bins[model]])
        for model in [*[m for m in order if m in bins], *sorted(set(bins) - set(order))]
    ]
    svg = draw(reliability_diagrams, panels, N_BINS)
    caption = (
        f"v2xqa: reliability ({N_BINS} equal confidence bins, as its ECE): accuracy per bin, "
        "with its items counted above the bar"
    )
    blocks.append(Figure(svg, caption))
    return blocks


def _histogram_figure(found: Histogram, rules: SuiteRules, order: Sequence[str]) -> Figure:
    from roadeval.tasks.report.drawing import draw
    from roadeval.tasks.report.plots import histograms

    models = [m for m in order if m in found.counts] + sorted(set(found.counts) - set(order))
    panels = [
        (f"{model} (unscored {found.unscored.get(model, 0)})", found.counts[model])
        for model in models
    ]
    whole = (found.suite, found.metric) in WHOLE
    info = rules.metric(found.suite, found.metric)
    xlabel = f"{info.label} ({info.scale.unit}; {info.direction})"
    svg = draw(histograms, panels, found.lo, found.hi, xlabel=xlabel, whole=whole)
    caption = f"{found.suite}: {info.label} per item (unscored items counted apart)"
    placeholder = rules.placeholder(found.suite, found.metric)
    data = {"suite": found.suite, "metric": found.metric}
    if placeholder:
        caption += f"; placeholder: {placeholder}"
        data["placeholder"] = placeholder
    return Figure(svg, caption, data)


def stride_blocks(data: ReportData, rules: SuiteRules, order: Sequence[str]) -> list[Block]:
    """ADE and FDE per trajectory item, and the judge's scores per judged item."""
    blocks: list[Block] = []
    for found in data.histograms:
        if found.suite == "stride" and any(sum(c) for c in found.counts.values()):
            blocks.append(_histogram_figure(found, rules, order))
        elif found.suite == "stride":
            total = sum(found.unscored.values())
            blocks.append(Note(f"stride: {found.metric}: no item scored ({total} unscored)"))
    return blocks


def roadbench_blocks(board: Board | None) -> list[Block]:
    """Bars of each task's headline metric per model."""
    from roadeval.tasks.report.drawing import draw
    from roadeval.tasks.report.plots import grouped_bars

    if board is None or not board.columns:
        return []
    columns = sorted(board.columns, key=lambda c: task_order(c.task))
    index = {c: i for i, c in enumerate(board.columns)}
    series = [
        (
            row.model,
            [None if (cell := row.cells[index[c]]) is None else cell.value for c in columns],
        )
        for row in board.rows
    ]
    ylabel = "value (each task's own metric, 0-1)"
    svg = draw(grouped_bars, [c.label for c in columns], series, ylabel=ylabel)
    return [Figure(svg, "roadbench: each task's headline metric per model")]
