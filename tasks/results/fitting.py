"""A terminal table that fits its width without cutting what must be read whole: columns go in
by priority, each at a width it reads well at (a few words a line) or else its narrowest (its
longest word; a whole column its longest cell), while the table still fits; the rest are left
out and named; the room left widens the columns in priority order. Rich alone shrinks every
column, ids and names included, to `2026…` (`tr…`, `0.1…`) when a table is too wide. `roadeval
runs`, and the leaderboards, health, left-out and cost tables of `run`, `demo` and `show` fit
themselves by this one rule."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.markup import escape
from rich.table import Table

# What a column costs beyond its text: one space of padding each side and one rule; a table
# without outer rules saves one (its last column has no rule of its own), one with them costs
# one more (the first column's left rule).
_PER_COLUMN = 3
_EDGES = {False: -1, True: 1}
# A wrapping column is given this much (or its widest cell, if less) where it fits, before
# columns of lower priority come in: a few words a line, not one.
_COMFORTABLE = 20


@dataclass(frozen=True)
class FitColumn:
    """A column, in priority order among its table's: `whole` keeps every line of a cell
    whole (an id someone copies, a name), else cells wrap between words; `numeric` aligns
    right; `kept` columns are in the table however narrow the terminal (a row's names: the
    table says nothing without them), the others give way; `folds`: see `narrowest`."""

    heading: str
    cells: tuple[str, ...]
    whole: bool = False
    numeric: bool = False
    kept: bool = False
    folds: bool = False

    @property
    def narrowest(self) -> int:
        """Its longest line if whole, else its longest word; a word of a `folds` column (a
        path in a reason) folds over lines past a few words' width rather than push the
        column out of the table."""
        texts = (self.heading, *self.cells)
        if self.whole:
            return max(len(line) for text in texts for line in text.split("\n"))
        longest = max((len(word) for text in texts for word in text.split()), default=1)
        return min(longest, _COMFORTABLE) if self.folds else longest

    @property
    def comfortable(self) -> int:
        """The width it reads well at: its narrowest, or a few words a line if it wraps text
        (numbers read as well one a line: a value, its rank, an interval's bounds)."""
        if self.numeric:
            return self.narrowest
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


def _always(columns: Sequence[FitColumn]) -> set[int]:
    """The columns in the table however narrow it is: the kept ones, or else the first (a
    table without it says nothing)."""
    return {i for i, column in enumerate(columns) if column.kept} or {0}


def _chosen(columns: Sequence[FitColumn], width: int, edge: bool) -> dict[int, int]:
    """The columns that fit, taken in priority order, each at its comfortable width or else
    its narrowest, after the columns always there (at their narrowest): index -> width."""
    always = _always(columns)
    chosen = {index: columns[index].narrowest for index in always}
    used = _EDGES[edge] + sum(wide + _PER_COLUMN for wide in chosen.values())
    for index, column in enumerate(columns):
        if index in always:
            continue
        for wide in (column.comfortable, column.narrowest):
            if used + wide + _PER_COLUMN <= width:
                chosen[index] = wide
                used += wide + _PER_COLUMN
                break
    return chosen


def fitted_table(
    columns: Sequence[FitColumn], width: int, title: str | None = None, *, edge: bool = False
) -> Fitted:
    """`columns` as a table at most `width` wide, with outer rules if `edge` (the kept
    columns whole however narrow the terminal: a wider table is cut by the terminal, not an
    id or a name); their cells are plain text."""
    widths = _chosen(columns, width, edge)
    chosen = sorted(widths)
    room = width - _EDGES[edge] - sum(widths[index] + _PER_COLUMN for index in chosen)
    # The room left goes first to cells (a wrapped value is harder to read than a wrapped
    # heading), each column its share of what its widest cell lacks (one long column does
    # not take it all from the next), then to headings in priority order.
    lacks = {i: columns[i].widest_cell - widths[i] for i in chosen}
    lacks = {i: lack for i, lack in lacks.items() if lack > 0}
    wanted, share = sum(lacks.values()), max(room, 0)
    for index, lack in lacks.items():
        grow = lack if wanted <= share else share * lack // wanted
        widths[index] += grow
        room -= grow
    for widest in (lambda c: c.widest_cell, lambda c: c.widest):
        for index in chosen:
            grow = min(max(room, 0), widest(columns[index]) - widths[index])
            if grow > 0:
                widths[index] += grow
                room -= grow
    table = Table(title=title, title_justify="left", show_edge=edge)
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


def dropped_note(fitted: Fitted, width: int, elsewhere: str) -> str | None:
    """The line under a table that left columns out: which, and `elsewhere` to see them."""
    if not fitted.left_out:
        return None
    return f"not shown at {width} columns: {', '.join(fitted.left_out)} ({elsewhere})"


# Where a run's columns that `run`, `demo` and `show` leave out are.
IN_THE_REPORT = "a wider terminal, or the run's HTML report (`roadeval report`), shows every column"


def captioned(fitted: Fitted, width: int, lines: Sequence[str] = ()) -> Table:
    """A run's fitted table with `lines` (its legend) under it, then which of its columns it
    left out and where they are."""
    note = dropped_note(fitted, width, IN_THE_REPORT)
    caption = "\n".join([*lines, *([note] if note else [])])
    if caption:
        fitted.table.caption = escape(caption)
        fitted.table.caption_justify = "left"
    return fitted.table
