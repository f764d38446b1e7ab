"""The blind ablation beside the run's own scores: per suite, model and headline metric, the value
with vision (the items as released) and blind (every image replaced by a black one, variant
'blind'), and their difference, the built-in baselines among the rows (a model that does no
better than `random` with its eyes open, or than itself blind, is not reading the images)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from roadeval.storage.records import MetricRow
from roadeval.tasks.results.formats import SuiteRules
from roadeval.tasks.results.leaderboard import Board, Cell, Column, leaderboards, variant_of

BLIND = "blind"


@dataclass(frozen=True)
class BlindLine:
    """One model's headline metric with vision and blind."""

    model: str
    column: Column
    seen: Cell | None
    blind: Cell | None
    baseline: bool

    @property
    def difference(self) -> float | None:
        """With vision minus blind (None unless both were measured)."""
        if self.seen is None or self.blind is None:
            return None
        return self.seen.value - self.blind.value


@dataclass(frozen=True)
class BlindTable:
    suite: str
    lines: tuple[BlindLine, ...]


def blind_tables(
    metrics: Sequence[MetricRow], rules: SuiteRules, *, baselines: Collection[str] = ()
) -> list[BlindTable]:
    """One table per suite that has blind rows; none when the run ran no ablation."""
    suites = {m.suite for m in metrics if variant_of(m.variant) == BLIND}

    def boards(variant: str) -> dict[str, Board]:
        found = leaderboards(metrics, rules, baselines=baselines, variant=variant)
        return {b.suite: b.lead for b in found}

    seen, blind = (boards(""), boards(BLIND)) if suites else ({}, {})
    tables = (_table(suite, seen.get(suite), blind.get(suite), baselines) for suite in suites)
    return sorted((t for t in tables if t is not None), key=lambda t: t.suite)


def _table(
    suite: str, seen: Board | None, blind: Board | None, baselines: Collection[str]
) -> BlindTable | None:
    lead = seen or blind
    if lead is None:
        return None
    columns = lead.columns
    cells: dict[tuple[str, Column], list[Cell | None]] = {}
    order: list[str] = []  # the board with vision's order (best first), then blind-only models
    for side, board in enumerate((seen, blind)):
        if board is None:
            continue
        for row in board.rows:
            if row.model not in order:
                order.append(row.model)
            for column, cell in zip(board.columns, row.cells, strict=True):
                cells.setdefault((row.model, column), [None, None])[side] = cell
    # The headlines measured blind (a penalty between slices may not be).
    measured = [c for c in columns if any(cells.get((m, c), [None, None])[1] for m in order)]
    lines = []
    for model in order:
        for column in measured:
            with_vision, without = cells.get((model, column), [None, None])
            lines.append(BlindLine(model, column, with_vision, without, model in baselines))
    return BlindTable(suite, tuple(lines))
