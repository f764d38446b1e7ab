"""The report's heatmaps: models x the values of one slice label (or x tasks), of one metric
each, so a colour scale never mixes kinds of number. Each cell shows its value and the items it
is over (n); columns come in the label's natural order (easy, medium, hard) with their codes
spelled out (VS1 Ego Static Scene), all from the suite's vocabulary; the colour scale is the
metric's own, widened to cover every value shown, its ends labelled."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from roadeval.benchmarks.vocabulary import TASK, Better
from roadeval.storage.records import MetricRow
from roadeval.tasks.report.blocks import Block, Figure
from roadeval.tasks.report.scales import colour_scale
from roadeval.tasks.results.aggregate import ALL, SUITE_WIDE
from roadeval.tasks.results.formats import SuiteRules, decimals_for, format_value
from roadeval.tasks.results.leaderboard import Board


@dataclass(frozen=True)
class SliceMap:
    """A heatmap of model x value of one slice label (or x task, `slice` ''), of one metric."""

    suite: str
    metric: str
    slice: str


# What each suite is sliced by: TRIP by role, capability, difficulty and modality; V2X-QA by
# task and view; STRIDE by task family; TB-Bench by task.
SLICE_MAPS = (
    *(
        SliceMap("trip", "correct", label)
        for label in ("role", "capability", "difficulty", "modality")
    ),
    SliceMap("v2xqa", "accuracy", ALL),
    SliceMap("v2xqa", "accuracy", "view"),
    SliceMap("v2xqa", "ece", "view"),
    SliceMap("stride", "mcq_accuracy", "family"),
    SliceMap("stride", "judge_score", "family"),
    SliceMap("stride", "traj_ade", "family"),
    SliceMap("tbbench", "accuracy", ALL),
)


@dataclass(frozen=True)
class Grid:
    """What one heatmap shows: rows (models), column keys (slice values or tasks), and per
    (model, key) the value and the items it is over."""

    suite: str
    metric: str
    label: str
    models: list[str]
    keys: list[str]
    cells: Mapping[tuple[str, str], tuple[float, int]]


def _slice_grid(
    spec: SliceMap, metrics: Sequence[MetricRow], rules: SuiteRules, order: Sequence[str]
) -> Grid | None:
    rows = [
        m
        for m in metrics
        if m.suite == spec.suite
        and m.metric == spec.metric
        and m.slice == spec.slice
        and not m.variant
        and (spec.slice != ALL or m.task != SUITE_WIDE)
    ]
    if not rows:
        return None
    tasks = {m.task for m in rows}

    def key(m: MetricRow) -> str:
        if spec.slice == ALL:
            return m.task
        return m.slice_value if len(tasks) == 1 else f"{m.task} {m.slice_value}"

    cells = {(m.model, key(m)): (m.value, m.n) for m in rows}
    label = spec.slice or TASK
    models = [m for m in order if any(k[0] == m for k in cells)]
    models += sorted({k[0] for k in cells} - set(models))
    keys = rules.vocabulary(spec.suite).ordered(label, {k[1] for k in cells})
    return Grid(spec.suite, spec.metric, label, models, keys, cells)


def _figure(grid: Grid, rules: SuiteRules, title: str) -> Figure:
    from roadeval.tasks.report.drawing import draw
    from roadeval.tasks.report.plots import heatmap

    info = rules.metric(grid.suite, grid.metric)
    vocabulary = rules.vocabulary(grid.suite)
    found = [grid.cells.get((m, k)) for m in grid.models for k in grid.keys]
    seen = [cell[0] for cell in found if cell is not None]
    # A bar as short as one row has room for its ends and middle only.
    scale = colour_scale(info.scale, seen, 2 if len(grid.models) < 2 else 5)
    places = decimals_for(seen)
    values, texts, counts = [], [], []
    for model in grid.models:
        row = [grid.cells.get((model, k)) for k in grid.keys]
        values.append([None if c is None else c[0] for c in row])
        texts.append(["" if c is None else format_value(c[0], decimals=places) for c in row])
        counts.append([None if c is None else c[1] for c in row])
    names = [vocabulary.value_name(grid.label, k) for k in grid.keys]
    svg = draw(
        heatmap,
        grid.models,
        names,
        values,
        texts,
        counts,
        ticks=scale.ticks,
        unit=scale.unit,
        lower_is_better=info.better is Better.LOWER,
    )
    placeholder = rules.placeholder(grid.suite, grid.metric)
    caption = f"{grid.suite}: {title} ({info.direction}; n: the items behind each cell)"
    if placeholder:
        caption += f"; placeholder: {placeholder}"
    data = {
        "suite": grid.suite,
        "metric": grid.metric,
        "label": grid.label,
        "columns": json.dumps(grid.keys),
        "scale-low": repr(scale.low),
        "scale-high": repr(scale.high),
        "values-low": repr(min(seen)),
        "values-high": repr(max(seen)),
    }
    return Figure(svg, caption, data)


def slice_maps(
    metrics: Sequence[MetricRow], rules: SuiteRules, order: Mapping[str, list[str]]
) -> list[Block]:
    """A heatmap per slice spec with rows in the run (models in leaderboard order)."""
    blocks: list[Block] = []
    for spec in SLICE_MAPS:
        grid = _slice_grid(spec, metrics, rules, order.get(spec.suite, []))
        if grid is None:
            continue
        info = rules.metric(spec.suite, spec.metric)
        label = rules.vocabulary(spec.suite).label(grid.label).title
        blocks.append(_figure(grid, rules, f"{info.label} by {label}"))
    return blocks


def metric_maps(board: Board, rules: SuiteRules) -> list[Block]:
    """A suite that leads with per-task headlines (RoadBench): model x task, one heatmap per
    headline metric (F1, lane exact match, buffer F1, accuracy each on its own scale)."""
    blocks: list[Block] = []
    per_task = [c for c in board.columns if c.task != SUITE_WIDE]
    for metric in dict.fromkeys(c.metric for c in per_task):
        cells = {
            (row.model, c.task): (cell.value, cell.n)
            for row in board.rows
            for c, cell in zip(board.columns, row.cells, strict=True)
            if c.metric == metric and c.task != SUITE_WIDE and cell is not None
        }
        if not cells:
            continue
        tasks = [c.task for c in per_task if c.metric == metric]
        models = [row.model for row in board.rows if any(k[0] == row.model for k in cells)]
        grid = Grid(board.suite, metric, TASK, models, tasks, cells)
        info = rules.metric(board.suite, metric)
        blocks.append(_figure(grid, rules, f"{info.label} by task"))
    return blocks
