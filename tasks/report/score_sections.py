"""The report's sections on scores: each suite's leaderboard (headline metrics, intervals, the
pairs whose difference is not significant, items not read or in error beside them), the blind
ablation, and heatmaps of model x slice."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from roadeval.storage.records import MetricPairRow, MetricRow
from roadeval.tasks.report.blocks import Block, Cell, Figure, Fold, Header, Note, Table, plain
from roadeval.tasks.results.ablation import BlindTable
from roadeval.tasks.results.aggregate import ALL, SUITE_WIDE
from roadeval.tasks.results.formats import (
    MISSING,
    SuiteRules,
    decimals_for,
    format_interval,
    format_value,
)
from roadeval.tasks.results.interval_legend import interval_legend
from roadeval.tasks.results.leaderboard import (
    Board,
    Column,
    Leaderboards,
    column_decimals,
    next_ties,
    ranking_column,
    task_order,
)
from roadeval.tasks.results.leaderboard import Cell as Value
from roadeval.tasks.results.manifest import IntervalsRecord

_ARROWS = {"higher": " ↑", "lower": " ↓"}
_HEALTH = (
    ("unparsed", "answers that could not be read (scored by the protocol's bad-answer rule)"),
    ("abnormal", "answers read only by a fallback rule"),
    ("errors", "items that ended in a model error: not scored, never a wrong answer"),
)


def _value_cell(
    rules: SuiteRules,
    board: Board,
    model: str,
    column: Column,
    cell: Value | None,
    places: int,
    tied_next: bool,
) -> Cell:
    if cell is None:
        return Cell(MISSING, None)
    tied = ", ".join(cell.tied_with)
    return Cell(
        rules.text(board.suite, column.metric, cell.value, ALL, places),
        cell.value,
        note=format_interval(cell.ci_low, cell.ci_high),
        title=(f"n = {cell.n}" + (f"; not significantly different from {tied}" if tied else "")),
        mark="≈" if tied_next else "",
        data={
            "suite": board.suite,
            "model": model,
            "task": column.task,
            "metric": column.metric,
            "value": repr(cell.value),
        },
    )


def board_table(board: Board, rules: SuiteRules, caption: str, kind: str) -> Table:
    """A board as a sortable table: rank, model (baselines marked), each headline value with
    its interval, and the items not read, read by a fallback, or in error."""
    headers = [Header("#", True), Header("model")]
    headers += [
        Header(column.label + _ARROWS.get(column.better or "", ""), True, column.metric)
        for column in board.columns
    ]
    with_health = any(row.health is not None for row in board.rows)
    if with_health:
        headers += [Header(name, True, meaning) for name, meaning in _HEALTH]
    rows = []
    places = column_decimals(board)
    ranked = ranking_column(board)
    tied_next = next_ties(board)
    for rank, row in enumerate(board.rows, 1):
        # A model without the value the board is ranked by has no rank.
        unranked = ranked is None or row.cells[ranked] is None
        cells = [
            Cell("", None) if unranked else Cell(str(rank), rank),
            Cell(row.model, row.model, mark="baseline" if row.baseline else ""),
        ]
        cells += [
            _value_cell(rules, board, row.model, c, cell, p, i == ranked and row.model in tied_next)
            for i, (c, cell, p) in enumerate(zip(board.columns, row.cells, places, strict=True))
        ]
        if with_health:
            health = row.health
            for name, _ in _HEALTH:
                count = None if health is None else int(getattr(health, name))
                cells.append(
                    Cell(MISSING if count is None else str(count), count, emphasis=bool(count))
                )
        rows.append(tuple(cells))
    footnote = (
        "≈: not significantly different from the model ranked next (95% paired interval "
        "covers 0); hover a value for every model it cannot be told apart from"
        if tied_next
        else ""
    )
    return Table(caption, tuple(headers), tuple(rows), kind=kind, footnote=footnote)


def _pairs_table(pairs: Sequence[MetricPairRow], rules: SuiteRules, suite: str) -> Table:
    headers = ("metric", "model a", "model b", "n", "a − b", "95% interval", "significant")
    rows = []
    for p in pairs:
        label = Column(p.metric, p.task).label
        rows.append(
            (
                plain(label),
                plain(p.model_a),
                plain(p.model_b),
                Cell(str(p.n), p.n),
                Cell(f"{p.difference:+.3f}", p.difference),
                plain(format_interval(p.ci_low, p.ci_high)),
                Cell(
                    "yes" if p.significant else "no (≈)",
                    int(p.significant),
                    emphasis=not p.significant,
                ),
            )
        )
    return Table(
        f"{suite}: paired differences",
        tuple(Header(h, h in ("n", "a − b")) for h in headers),
        tuple(rows),
        footnote="a paired bootstrap over the items both models were scored on; ≈: the "
        "interval covers 0, so the two models' difference is not significant",
    )


def leaderboard_blocks(
    found: Sequence[Leaderboards], rules: SuiteRules, intervals: IntervalsRecord | None = None
) -> list[Block]:
    """Per suite: its leaderboard, the line saying what its intervals are (from the manifest's
    `intervals`), its per-task headlines and its paired differences."""
    blocks: list[Block] = []
    for boards in found:
        lead = board_table(boards.lead, rules, f"{boards.suite}: leaderboard", "leaderboard")
        blocks.append(lead)
        legend = interval_legend(intervals, boards.suite)
        if legend:
            blocks.append(Note(legend))
        if boards.per_task is not None:
            table = board_table(boards.per_task, rules, f"{boards.suite}: per task", "per-task")
            blocks.append(Fold(f"{boards.suite}: headline metrics per task", (table,)))
        if boards.pairs:
            blocks.append(
                Fold(
                    f"{boards.suite}: paired differences "
                    f"({sum(not p.significant for p in boards.pairs)} not significant)",
                    (_pairs_table(boards.pairs, rules, boards.suite),),
                )
            )
    return blocks


def blind_blocks(tables: Sequence[BlindTable], rules: SuiteRules) -> list[Block]:
    """Per suite: each model's headline values with vision, blind, and the difference, the
    built-in baselines among the rows."""
    blocks: list[Block] = []
    headers = (
        Header("model"),
        Header("metric"),
        Header("with vision", True),
        Header("blind", True),
        Header("difference", True, "with vision minus blind"),
    )
    for table in tables:
        rows = []
        for line in table.lines:
            metric = line.column.metric
            seen = line.seen.value if line.seen else None
            blind = line.blind.value if line.blind else None
            difference = line.difference
            rows.append(
                (
                    Cell(line.model, line.model, mark="baseline" if line.baseline else ""),
                    plain(line.column.label),
                    Cell(rules.text(table.suite, metric, seen), seen),
                    Cell(
                        rules.text(table.suite, metric, blind),
                        blind,
                        data={"suite": table.suite, "model": line.model, "metric": metric},
                    ),
                    Cell(MISSING if difference is None else f"{difference:+.3f}", difference),
                )
            )
        blocks.append(Table(f"{table.suite}: with vision and blind", headers, tuple(rows), "blind"))
    return blocks


@dataclass(frozen=True)
class SliceMap:
    """A heatmap of model x value of one slice label (or x task, `slice` ''), of one metric."""

    suite: str
    title: str
    metric: str
    slice: str
    better: str = "higher"
    limits: tuple[float, float] | None = (0.0, 1.0)


# What each suite is sliced by: TRIP by role, capability, difficulty and modality; V2X-QA by
# task and view; STRIDE by task family; TB-Bench by task (its percentages, 0-100).
SLICE_MAPS = (
    *(
        SliceMap("trip", f"accuracy by {label}", "correct", label)
        for label in ("role", "capability", "difficulty", "modality")
    ),
    SliceMap("v2xqa", "accuracy by task", "accuracy", ALL),
    SliceMap("v2xqa", "accuracy by view", "accuracy", "view"),
    SliceMap("v2xqa", "ECE by view", "ece", "view", better="lower"),
    SliceMap("stride", "MCQ accuracy by task family", "mcq_accuracy", "family"),
    SliceMap("stride", "judge score by task family", "judge_score", "family", limits=(0.0, 10.0)),
    SliceMap("stride", "trajectory ADE (m) by task family", "traj_ade", "family", "lower", None),
    SliceMap("tbbench", "accuracy (%) by task", "accuracy", ALL, limits=(0.0, 100.0)),
)


def _slice_cells(spec: SliceMap, metrics: Sequence[MetricRow]) -> dict[tuple[str, str], float]:
    """(model, column) -> value: columns are slice values (tasks when `slice` is '')."""
    rows = [
        m
        for m in metrics
        if m.suite == spec.suite
        and m.metric == spec.metric
        and m.slice == spec.slice
        and not m.variant
        and (spec.slice != ALL or m.task != SUITE_WIDE)
    ]
    tasks = {m.task for m in rows}

    def column(m: MetricRow) -> str:
        if spec.slice == ALL:
            return m.task
        return m.slice_value if len(tasks) == 1 else f"{m.task} {m.slice_value}"

    return {(m.model, column(m)): m.value for m in rows}


def slice_maps(
    metrics: Sequence[MetricRow], rules: SuiteRules, order: dict[str, list[str]]
) -> list[Block]:
    """A heatmap per slice spec with rows in the run (models in leaderboard order)."""
    from roadeval.tasks.report.drawing import draw
    from roadeval.tasks.report.plots import heatmap

    blocks: list[Block] = []
    for spec in SLICE_MAPS:
        cells = _slice_cells(spec, metrics)
        if not cells:
            continue
        models = [m for m in order.get(spec.suite, []) if any(k[0] == m for k in cells)]
        models += sorted({k[0] for k in cells} - set(models))
        columns = sorted({k[1] for k in cells}, key=task_order)
        values = [[cells.get((m, c)) for c in columns] for m in models]
        places = decimals_for(cells.values())
        texts = [["" if v is None else format_value(v, decimals=places) for v in r] for r in values]
        svg = draw(
            heatmap,
            models,
            columns,
            values,
            texts,
            lower_is_better=spec.better == "lower",
            limits=spec.limits,
        )
        blocks.append(Figure(svg, f"{spec.suite}: {spec.title}"))
    return blocks


def task_map(board: Board) -> Block | None:
    """A suite that leads with per-task headlines (RoadBench): model x task, each cell the
    task's headline, when every headline is a 0-1 score where higher is better."""
    from roadeval.tasks.report.drawing import draw
    from roadeval.tasks.report.plots import heatmap

    values = [
        [cell.value if cell is not None else None for cell in row.cells] for row in board.rows
    ]
    seen = [v for row in values for v in row if v is not None]
    if not seen or any(c.better != "higher" for c in board.columns):
        return None
    if not all(0.0 <= v <= 1.0 for v in seen):
        return Note(f"{board.suite}: headline metrics on different scales; see the tables")
    places = decimals_for(seen)
    texts = [["" if v is None else format_value(v, decimals=places) for v in r] for r in values]
    svg = draw(
        heatmap, [r.model for r in board.rows], [c.label for c in board.columns], values, texts
    )
    return Figure(svg, f"{board.suite}: headline metric by task")
