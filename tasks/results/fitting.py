"""A terminal table that fits its width without cutting what must be read whole: columns go in
by priority, each at a width it reads well at (a few words a line) or else its narrowest (its
longest word; a whole column its longest cell), while the table still fits; the rest are left
out and named; the room left widens the columns in priority order. Rich alone shrinks every
column, ids included, to `2026…` when a table is too wide."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.markup import escape
from rich.table import Table

# What a column costs beyond its text: one space of padding each side and one rule; the
# table has no outer rules (the last column has no rule of its own then, the first gains none).
_PER_COLUMN = 3
_EDGE = -1
# A wrapping column is given this much (or its widest cell, if less) where it fits, before
# columns of lower priority come in: a few words a line, not one.
_COMFORTABLE = 20


@dataclass(frozen=True)
class FitColumn:
    """A column, in priority order among its table's: `whole` keeps every cell on one line
    (an id someone copies), else cells wrap between words; `numeric` aligns right."""

    heading: str
    cells: tuple[str, ...]
    whole: bool = False
    numeric: bool = False

    @property
    def narrowest(self) -> int:
        texts = (self.heading, *self.cells)
        if self.whole:
            return max(len(text) for text in texts)
        return max((len(word) for text in texts for word in text.split()), default=1)

    @property
    def comfortable(self) -> int:
        """The width it reads well at: its narrowest, or a few words a line if it wraps."""
        return max(self.narrowest, min(self.widest_cell, _COMFORTABLE))

    @property
    def widest_cell(self) -> int:
        return max((len(line) for text in self.cells for line in text.split("\n")), default=0)

    @property
    def widest(self) -> int:
        return max(len(self.heading), self.widest_cell)


@dataclass(frozen=True)
class Fitted:
    """The table, and the headings of the columns it left out for want of width."""

    table: Table
    left_out: tuple[str, ...]


def _chosen(columns: Sequence[FitColumn], width: int) -> dict[int, int]:
    """The columns that fit, taken in priority order, each at its comfortable width or else
    its narrowest: index -> width. The first column always (a table without it says nothing)."""
    chosen: dict[int, int] = {}
    used = _EDGE
    for index, column in enumerate(columns):
        for wide in (column.comfortable, column.narrowest):
            if not chosen or used + wide + _PER_COLUMN <= width:
                chosen[index] = wide
                used += wide + _PER_COLUMN
                break
    return chosen


def fitted_table(columns: Sequence[FitColumn], width: int, title: str | None = None) -> Fitted:
    """`columns` as a table at most `width` wide (the first column whole however narrow the
    terminal: a wider table is cut by the terminal, not the id); their cells are plain text."""
    widths = _chosen(columns, width)
    chosen = sorted(widths)
    room = width - _EDGE - sum(widths[index] + _PER_COLUMN for index in chosen)
    # The room left goes first to cells (a wrapped value is harder to read than a wrapped
    # heading), then to headings, each time in priority order.
    for widest in (lambda c: c.widest_cell, lambda c: c.widest):
        for index in chosen:
            grow = min(max(room, 0), widest(columns[index]) - widths[index])
            if grow > 0:
                widths[index] += grow
                room -= grow
    table = Table(title=title, title_justify="left", show_edge=False)
    for index in chosen:
        column = columns[index]
        table.add_column(
            escape(column.heading),
            width=widths[index],
            justify="right" if column.numeric else "left",
            no_wrap=column.whole,
            overflow="fold",
        )
    rows = zip(*(columns[index].cells for index in chosen), strict=True)
    for row in rows:
        table.add_row(*(escape(cell) for cell in row))
    dropped = tuple(column.heading for i, column in enumerate(columns) if i not in widths)
    return Fitted(table, dropped)
