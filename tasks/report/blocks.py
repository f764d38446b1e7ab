"""What a report section is made of, as the page template draws it: tables (sortable by any
column), figures (inline SVG), notes, and groups folded under a summary line."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Union

from markupsafe import Markup

from roadeval.tasks.report.drawing import Drawn


@dataclass(frozen=True)
class Cell:
    """One table cell: its text; `sort`, the value a click on its column sorts by (a number
    sorts as one); `note`, small text after it (an interval); `title`, its hover text;
    `data`, `data-*` attributes (what the cell is, for a reader or a test); `rank`, the
    value's rank in its column; `flag`, a warning beside it (a placeholder judge's score);
    `href`, a relative link the text leads to (another page of the store's reports)."""

    text: str
    sort: float | str | None = None
    note: str = ""
    title: str = ""
    data: Mapping[str, str] = field(default_factory=dict)
    mark: str = ""
    emphasis: bool = False
    rank: int | None = None
    flag: str = ""
    href: str = ""

    @property
    def numeric(self) -> bool:
        return isinstance(self.sort, int | float)


@dataclass(frozen=True)
class Header:
    """A column heading; `sub`, a second, smaller line (a task's name under its code)."""

    text: str
    numeric: bool = False
    title: str = ""
    sub: str = ""


@dataclass(frozen=True)
class Table:
    """A table; `legend`, a line per column that needs saying what it is, under it."""

    caption: str
    headers: tuple[Header, ...]
    rows: tuple[tuple[Cell, ...], ...]
    kind: str = ""
    footnote: str = ""
    legend: tuple[str, ...] = ()


@dataclass(frozen=True)
class Figure:
    """A drawn figure; `data`, `data-*` attributes of what it shows (its metric, its scale)."""

    drawn: Drawn
    caption: str
    data: Mapping[str, str] = field(default_factory=dict)

    @property
    def svg(self) -> Markup:
        return self.drawn.svg


@dataclass(frozen=True)
class Note:
    text: str
    warning: bool = False


@dataclass(frozen=True)
class Fold:
    """Blocks shown under a summary line, open or folded."""

    summary: str
    blocks: tuple[Block, ...]
    open: bool = False


Block = Union[Table, Figure, Note, Fold]  # noqa: UP007 (a runtime alias the template tests)


@dataclass(frozen=True)
class Section:
    id: str
    title: str
    blocks: tuple[Block, ...]


def kind_of(block: Block) -> str:
    """The template's name for a block's kind."""
    return type(block).__name__.lower()


def number(value: float | None, text: str, **data: str) -> Cell:
    """A numeric cell: sorts by `value`, shows `text`."""
    return Cell(text, value, data=data)


def plain(text: str, **data: str) -> Cell:
    return Cell(text, text, data=data)
