"""A suite's leaderboard: one row per model (baselines among them) with the suite's headline
metrics (`Suite.headline`), their 95% intervals where computed, the models each one's difference
is not significant from (`metric_pairs`), and the items whose answers could not be read or
ended in errors beside them. The terminal summary, `roadeval show`, the HTML report and the
Prefect artifact all show this one structure.

A suite whose headlines are suite-wide (`task` '*') leads with those, and its per-task headlines
make a second board (`Leaderboards.per_task`); a suite with per-task headlines only (RoadBench)
leads with them.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from roadeval.benchmarks.suite import Headline
from roadeval.storage.records import MetricPairRow, MetricRow
from roadeval.tasks.results.aggregate import ALL, SUITE_WIDE
from roadeval.tasks.results.formats import decimals_for


def task_order(task: str) -> tuple[int, int, str]:
    """Numbered tasks in numeric order, named tasks alphabetically, suite-wide last."""
    return (task == SUITE_WIDE, int(task) if task.isdigit() else 1 << 30, task)


def variant_of(value: str | None) -> str:
    """A row's variant: '' for the items as released (parts landed before the column read null)."""
    return value or ""


@dataclass(frozen=True)
class Column:
    """One headline number: `metric` of the suite-wide rows or of one task's, and which way is
    better (None: neither)."""

    metric: str
    task: str
    better: str | None = "higher"

    @property
    def label(self) -> str:
        return self.metric if self.task == SUITE_WIDE else f"{self.task} {self.metric}"


@dataclass(frozen=True)
class Cell:
    """A model's value in a column, over `n` items, with its interval when one was computed and
    the models whose difference from it is not significant (none when no pairs were landed)."""

    value: float
    n: int
    ci_low: float | None = None
    ci_high: float | None = None
    tied_with: tuple[str, ...] = ()


@dataclass(frozen=True)
class ItemHealth:
    """A suite x model's items whose final answer could not be read (`unparsed`, scored by the
    protocol's bad-answer rule), was read only by a fallback rule (`abnormal`), or ended in a
    model error (`errors`: not scored, never a wrong answer)."""

    unparsed: int = 0
    abnormal: int = 0
    errors: int = 0


@dataclass(frozen=True)
class Standing:
    """One model's row."""

    model: str
    cells: tuple[Cell | None, ...]
    health: ItemHealth | None = None
    baseline: bool = False


@dataclass(frozen=True)
class Board:
    """Rows of models under columns, best first by the first column that says which way is
    better."""

    suite: str
    variant: str
    columns: tuple[Column, ...]
    rows: tuple[Standing, ...]


@dataclass(frozen=True)
class Leaderboards:
    """A suite's leaderboard, and its per-task headlines when it leads with suite-wide ones."""

    suite: str
    lead: Board
    per_task: Board | None = None
    pairs: tuple[MetricPairRow, ...] = field(default_factory=tuple)


def _columns(
    present: Collection[tuple[str, str]], headlines: Sequence[Headline]
) -> tuple[list[Column], list[Column]]:
    """(suite-wide, per-task) columns of the headlines that have rows."""
    tasks = sorted({task for task, _ in present if task != SUITE_WIDE}, key=task_order)
    wide: list[Column] = []
    per_task: list[Column] = []
    for headline in headlines:
        if headline.task == SUITE_WIDE:
            if (SUITE_WIDE, headline.metric) in present:
                wide.append(Column(headline.metric, SUITE_WIDE, headline.better))
            continue
        chosen = tasks if headline.task == "" else [headline.task]
        per_task.extend(
            Column(headline.metric, task, headline.better)
            for task in chosen
            if (task, headline.metric) in present
        )
    per_task.sort(key=lambda column: task_order(column.task))
    return wide, per_task


def _fallback(present: Collection[tuple[str, str]], counts: Collection[str]) -> list[Column]:
    """For a suite with no headline that has rows (one not installed here): its suite-wide
    metrics, else every task's, counts left out."""
    wide = sorted(m for t, m in present if t == SUITE_WIDE and m not in counts)
    if wide:
        return [Column(metric, SUITE_WIDE, None) for metric in wide]
    return [
        Column(m, t, None)
        for t, m in sorted(present, key=lambda key: (task_order(key[0]), key[1]))
        if m not in counts
    ]


def _ties(pairs: Iterable[MetricPairRow]) -> dict[tuple[str, str, str], set[str]]:
    """(task, metric, model) -> the models its difference from is not significant."""
    ties: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for pair in pairs:
        if not pair.significant:
            ties[(pair.task, pair.metric, pair.model_a)].add(pair.model_b)
            ties[(pair.task, pair.metric, pair.model_b)].add(pair.model_a)
    return ties


def _board(
    suite: str,
    variant: str,
    columns: Sequence[Column],
    values: Mapping[tuple[str, str, str], MetricRow],
    models: Iterable[str],
    health: Mapping[tuple[str, str, str], ItemHealth],
    baselines: Collection[str],
    ties: Mapping[tuple[str, str, str], set[str]],
) -> Board:
    rows = []
    for model in models:
        cells: list[Cell | None] = []
        for column in columns:
            row = values.get((column.task, column.metric, model))
            tied = tuple(sorted(ties.get((column.task, column.metric, model), ())))
            cells.append(
                None
                if row is None
                else Cell(row.value, row.n, row.ci_low, row.ci_high, tied_with=tied)
            )
        rows.append(
            Standing(model, tuple(cells), health.get((suite, model, variant)), model in baselines)
        )
    # Best first by the first column with a direction; models without a value last.
    ranked = next((i for i, c in enumerate(columns) if c.better is not None), None)
    if ranked is not None:
        sign = -1.0 if columns[ranked].better == "higher" else 1.0

        def rank(row: Standing) -> tuple[bool, float, str]:
            cell = row.cells[ranked]
            return (cell is None, 0.0 if cell is None else sign * cell.value, row.model)

        rows.sort(key=rank)
    return Board(suite, variant, tuple(columns), tuple(rows))


def leaderboards(
    metrics: Sequence[MetricRow],
    headlines: Mapping[str, Sequence[Headline]],
    *,
    counts: Mapping[str, Collection[str]] | None = None,
    health: Mapping[tuple[str, str, str], ItemHealth] | None = None,
    baselines: Collection[str] = (),
    pairs: Sequence[MetricPairRow] = (),
    variant: str = "",
) -> list[Leaderboards]:
    """One `Leaderboards` per suite with metrics of `variant`, in suite order. `headlines` and
    `counts` (the count metrics, left out of a fallback board) are per suite; `health` is keyed
    by (suite, model, variant); `baselines` names the models that are built-in baselines."""
    health = health or {}
    counts = counts or {}
    found: list[Leaderboards] = []
    rows = [m for m in metrics if m.slice == ALL and variant_of(m.variant) == variant]
    for suite in sorted({m.suite for m in rows}):
        mine = [m for m in rows if m.suite == suite]
        values = {(m.task, m.metric, m.model): m for m in mine}
        present = {(m.task, m.metric) for m in mine}
        models = sorted(
            {m.model for m in mine}
            | {model for (s, model, v) in health if s == suite and v == variant}
        )
        wide, per_task = _columns(present, headlines.get(suite, ()))
        if not wide and not per_task:
            wide = _fallback(present, counts.get(suite, ()))
        suite_pairs = tuple(
            p for p in pairs if p.suite == suite and variant_of(p.variant) == variant
        )
        ties = _ties(suite_pairs)

        boards = [
            _board(suite, variant, columns, values, models, health, baselines, ties)
            for columns in ((wide, per_task) if wide else (per_task,))
            if columns
        ]
        if not boards:
            continue  # nothing but counts: no number to rank by
        lead, per_task_board = boards[0], boards[1] if len(boards) > 1 else None
        found.append(Leaderboards(suite, lead, per_task_board, suite_pairs))
    return found


def column_decimals(board: Board) -> list[int]:
    """Per column, the decimals its values print with (`formats.decimals_for`)."""
    return [
        decimals_for(cell.value for row in board.rows if (cell := row.cells[i]) is not None)
        for i in range(len(board.columns))
    ]


def ranking_column(board: Board) -> int | None:
    """The column a board is ranked by: the first that says which way is better."""
    return next((i for i, c in enumerate(board.columns) if c.better is not None), None)


def next_ties(board: Board) -> set[str]:
    """The models whose value in the ranking column is not significantly different from the
    next model's (the one ranked just below): where the ranking cannot tell two apart."""
    index = ranking_column(board)
    if index is None:
        return set()
    tied: set[str] = set()
    for row, below in itertools.pairwise(board.rows):
        cell = row.cells[index]
        if cell is not None and below.model in cell.tied_with:
            tied.add(row.model)
    return tied
