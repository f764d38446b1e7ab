"""The report's sections on scores: each suite's leaderboard (headline metrics as the suite names
them, each value's rank in its column, intervals, the pairs whose difference is not significant,
items not read or in error beside them, a legend line per column), and the blind ablation."""

from __future__ import annotations

from collections.abc import Sequence

from roadeval.storage.records import MetricPairRow
from roadeval.tasks.report.blocks import Block, Cell, Fold, Header, Note, Table, plain
from roadeval.tasks.results.ablation import BlindTable
from roadeval.tasks.results.aggregate import ALL, SUITE_WIDE
from roadeval.tasks.results.formats import (
    MISSING,
    SuiteRules,
    format_interval,
)
from roadeval.tasks.results.interval_legend import interval_legend
from roadeval.tasks.results.leaderboard import (
    ORDER_RULE,
    Board,
    Column,
    Leaderboards,
    column,
    column_decimals,
    next_ties,
    ranking_column,
)
from roadeval.tasks.results.leaderboard import Cell as Value
from roadeval.tasks.results.left_out import LEFT_OUT_TITLE, left_out
from roadeval.tasks.results.manifest import IntervalsRecord, RunManifest
from roadeval.tasks.shard.counts import COUNT_HEADINGS

_HEALTH = tuple(
    (name, COUNT_HEADINGS[name], meaning)
    for name, meaning in (
        ("unparsed", "answers that could not be read (scored by the protocol's bad-answer rule)"),
        ("abnormal", "answers read only by a fallback rule"),
        ("errors", "items that ended in a model error: not scored, never a wrong answer"),
    )
)
PLACEHOLDER_FLAG = "placeholder judge"


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
    hover = [f"n = {cell.n} items"]
    if cell.rank is not None:
        hover.append(f"rank {cell.rank} in this column ({column.info.direction})")
    if tied:
        hover.append(f"not significantly different from {tied}")
    if column.placeholder:
        hover.append(column.placeholder)
    data = {
        "suite": board.suite,
        "model": model,
        "task": column.task,
        "metric": column.metric,
        "value": repr(cell.value),
    }
    if column.placeholder:
        data["placeholder"] = column.placeholder
    return Cell(
        rules.text(board.suite, column.metric, cell.value, ALL, places),
        cell.value,
        note=format_interval(cell.ci_low, cell.ci_high),
        title="; ".join(hover),
        mark="≈" if tied_next else "",
        data=data,
        rank=cell.rank,
        flag=PLACEHOLDER_FLAG if column.placeholder else "",
    )


def board_table(board: Board, rules: SuiteRules, caption: str, kind: str) -> Table:
    """A board as a sortable table: model (baselines marked), each headline value with its
    rank in its column and its interval, and the items not read, read by a fallback, or in
    error; under it, a legend line per column (what it is, which way is better) and how the
    rows are ordered."""
    headers = [Header("model")]
    headers += [
        Header(
            column.heading,
            True,
            column.legend,
            sub=column.task_name if column.task != SUITE_WIDE else "",
        )
        for column in board.columns
    ]
    with_health = any(row.health is not None for row in board.rows)
    if with_health:
        headers += [Header(heading, True, meaning) for _, heading, meaning in _HEALTH]
    rows = []
    places = column_decimals(board)
    ranked = ranking_column(board)
    tied_next = next_ties(board)
    for row in board.rows:
        cells = [Cell(row.model, row.model, mark="baseline" if row.baseline else "")]
        cells += [
            _value_cell(rules, board, row.model, c, cell, p, i == ranked and row.model in tied_next)
            for i, (c, cell, p) in enumerate(zip(board.columns, row.cells, places, strict=True))
        ]
        if with_health:
            health = row.health
            for name, _, _ in _HEALTH:
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
    legend = (*(column.legend for column in board.columns), ORDER_RULE)
    return Table(caption, tuple(headers), tuple(rows), kind=kind, footnote=footnote, legend=legend)


def _pairs_table(pairs: Sequence[MetricPairRow], rules: SuiteRules, suite: str) -> Table:
    headers = ("metric", "model a", "model b", "n", "a − b", "95% interval", "significant")
    rows = []
    for p in pairs:
        label = column(rules, suite, p.metric, p.task).label
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


def left_out_blocks(manifest: RunManifest | None) -> list[Block]:
    """Per suite, the rows its load skipped and the items a baseline was not asked, with the
    first reasons: above the leaderboards, whose numbers are over what is left."""
    found = left_out(manifest) if manifest is not None else []
    if not found:
        return []
    headers = tuple(Header(h) for h in ("suite", "whose", "left out", "why (the first reasons)"))
    rows = tuple(
        (plain(suite.suite), plain(whose), plain(what), plain(why))
        for suite in found
        for whose, what, why in suite.lines()
    )
    return [Table(LEFT_OUT_TITLE, headers, rows, "left-out")]
