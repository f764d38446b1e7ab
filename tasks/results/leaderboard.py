"""A suite's leaderboard: one row per model (baselines among them) with the suite's headline
metrics (`Suite.headline`) as its vocabulary names them, their 95% intervals where computed, each
value's rank in its column, the models each one's difference is not significant from
(`metric_pairs`), and the items whose answers could not be read or ended in errors beside them.
The terminal summary, `roadeval show`, the HTML report and the Prefect artifact all show this
one structure.

A suite whose headlines are suite-wide (`task` '*') leads with those, and its per-task headlines
make a second board (`Leaderboards.per_task`); a suite with per-task headlines only (RoadBench)
leads with them.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from roadeval.benchmarks.vocabulary import TASK, Better, MetricInfo
from roadeval.storage.records import MetricPairRow, MetricRow
from roadeval.tasks.results.aggregate import ALL, SUITE_WIDE
from roadeval.tasks.results.formats import SuiteRules, decimals_for


def task_order(task: str) -> tuple[int, int, str]:
    """Numbered tasks in numeric order, named tasks alphabetically, suite-wide last."""
    return (task == SUITE_WIDE, int(task) if task.isdigit() else 1 << 30, task)


def variant_of(value: str | None) -> str:
    """A row's variant: '' for the items as released (parts landed before the column read null)."""
    return value or ""


@dataclass(frozen=True)
class Column:
    """One headline number: `metric` of the suite-wide rows or of one task's, as its suite
    describes it (`info`: label, description, which way is better), the task's name, and why
    its values measure nothing when they come from a placeholder judge."""

    metric: str
    task: str
    info: MetricInfo = field(compare=False)
    task_name: str = field(default="", compare=False)
    placeholder: str | None = field(default=None, compare=False)

    @property
    def better(self) -> Better | None:
        return self.info.better

    @property
    def label(self) -> str:
        """Short: the metric's label, after its task's code on a per-task column ('1 F1')."""
        return self.info.label if self.task == SUITE_WIDE else f"{self.task} {self.info.label}"

    @property
    def heading(self) -> str:
        """The label with the better direction's arrow ('1 F1 ↑')."""
        return f"{self.label} {self.info.arrow}".rstrip()

    @property
    def title(self) -> str:
        """Long: what the column is ('task 1, BEV lane counting: F1')."""
        if self.task == SUITE_WIDE:
            return self.info.label
        named = f", {self.task_name}" if self.task_name else ""
        return f"task {self.task}{named}: {self.info.label}"

    @property
    def legend(self) -> str:
        """One line on the column: its task, what it measures, which way is better, and a
        placeholder's reason ('1 F1 ↑: task 1 (BEV lane counting), F1 over ...; higher is
        better')."""
        parts = [self.info.description or self.info.label]
        if self.task != SUITE_WIDE:
            named = f" ({self.task_name})" if self.task_name else ""
            parts.insert(0, f"task {self.task}{named}")
        parts = [", ".join(parts), self.info.direction]
        if self.placeholder:
            parts.append(self.placeholder)
        return f"{self.heading}: " + "; ".join(parts)


@dataclass(frozen=True)
class Cell:
    """A model's value in a column, over `n` items, with its interval when one was computed,
    the models whose difference from it is not significant (none when no pairs were landed),
    and its rank in the column (1: best by the column's direction; equal values share a rank;
    None in a column without direction)."""

    value: float
    n: int
    ci_low: float | None = None
    ci_high: float | None = None
    tied_with: tuple[str, ...] = ()
    rank: int | None = None


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
    """Rows of models under columns (`ORDER_RULE`), each cell with its rank in its column."""

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


def column(rules: SuiteRules, suite: str, metric: str, task: str) -> Column:
    """`metric` of `task` of `suite`, as the suite describes it."""
    vocabulary = rules.vocabulary(suite)
    return Column(
        metric,
        task,
        vocabulary.metric(metric),
        vocabulary.task_name(task),
        rules.placeholder(suite, metric),
    )


def _columns(
    rules: SuiteRules, suite: str, present: Collection[tuple[str, str]]
) -> tuple[list[Column], list[Column]]:
    """(suite-wide, per-task) columns of the suite's headlines that have rows, tasks in the
    suite's order."""
    vocabulary = rules.vocabulary(suite)
    tasks = vocabulary.ordered(TASK, {task for task, _ in present if task != SUITE_WIDE})
    wide: list[Column] = []
    per_task: list[Column] = []
    for headline in rules.headlines().get(suite, ()):
        if headline.task == SUITE_WIDE:
            if (SUITE_WIDE, headline.metric) in present:
                wide.append(column(rules, suite, headline.metric, SUITE_WIDE))
            continue
        chosen = tasks if headline.task == "" else [headline.task]
        per_task.extend(
            column(rules, suite, headline.metric, task)
            for task in chosen
            if (task, headline.metric) in present
        )
    position = {task: at for at, task in enumerate(tasks)}
    per_task.sort(key=lambda c: position.get(c.task, len(position)))
    return wide, per_task


def _fallback(rules: SuiteRules, suite: str, present: Collection[tuple[str, str]]) -> list[Column]:
    """For a suite with no headline that has rows (one not installed here): its suite-wide
    metrics, else every task's, counts left out."""
    counts = rules.counts().get(suite, frozenset())
    wide = sorted(m for t, m in present if t == SUITE_WIDE and m not in counts)
    if wide:
        return [column(rules, suite, metric, SUITE_WIDE) for metric in wide]
    return [
        column(rules, suite, m, t)
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
    unranked = len(rows) + 1  # after every rank: no value, or a column without direction

    def order(row: Standing) -> tuple[tuple[int, ...], str]:
        ranks = (cell.rank if cell and cell.rank else unranked for cell in row.cells)
        return (tuple(ranks), row.model)

    return Board(suite, variant, tuple(columns), tuple(sorted(_ranked(columns, rows), key=order)))


def _ranked(columns: Sequence[Column], rows: Sequence[Standing]) -> list[Standing]:
    """The rows with each cell's rank in its column (a column with a direction): 1 for the
    best value, equal values sharing a rank (1, 1, 3)."""
    ranks: dict[tuple[int, str], int] = {}
    for at, col in enumerate(columns):
        if col.better is None:
            continue
        keys = {
            row.model: col.info.sort_key(cell.value)
            for row in rows
            if (cell := row.cells[at]) is not None
        }
        for model, key in keys.items():
            ranks[(at, model)] = 1 + sum(other < key for other in keys.values())
    return [
        replace(
            row,
            cells=tuple(
                None if cell is None else replace(cell, rank=ranks.get((at, row.model)))
                for at, cell in enumerate(row.cells)
            ),
        )
        for row in rows
    ]


# How a board's rows are ordered, as the report and `show` state it.
ORDER_RULE = (
    "rows: by rank in the first column, then (for models without it) in the next, and so on; "
    "#k beside a value: its rank in its column (1 = best, by the column's arrow)"
)


def leaderboards(
    metrics: Sequence[MetricRow],
    rules: SuiteRules,
    *,
    health: Mapping[tuple[str, str, str], ItemHealth] | None = None,
    baselines: Collection[str] = (),
    pairs: Sequence[MetricPairRow] = (),
    variant: str = "",
) -> list[Leaderboards]:
    """One `Leaderboards` per suite with metrics of `variant`, in suite order: the suites'
    headlines, counts (left out of a fallback board) and vocabularies come from `rules`;
    `health` is keyed by (suite, model, variant); `baselines` names the models that are
    built-in baselines."""
    health = health or {}
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
        wide, per_task = _columns(rules, suite, present)
        if not wide and not per_task:
            wide = _fallback(rules, suite, present)
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
