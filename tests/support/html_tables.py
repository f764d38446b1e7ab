"""The tables, figures and section ids of a report page, read with the standard library's HTML
parser: each table's kind and caption, its cells' text and data-* attributes, each figure's
caption, data-* attributes and SVG text."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class PageCell:
    text: str = ""
    attrs: dict[str, str] = field(default_factory=dict)


@dataclass
class PageTable:
    kind: str
    caption: str = ""
    headers: list[str] = field(default_factory=list)
    rows: list[list[PageCell]] = field(default_factory=list)

    def column(self, heading: str) -> list[str]:
        index = self.headers.index(heading)
        return [row[index].text for row in self.rows]

    def row(self, first: str, at: int = 0) -> list[str]:
        """The texts of the row whose cell `at` reads `first`."""
        return next([c.text for c in r] for r in self.rows if r[at].text.startswith(first))


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tables: list[PageTable] = []
        self.figures: list[PageFigure] = []
        self._in_figure = False
        self._figcaption = False
        self._svg_text = False
        self.sections: list[str] = []
        self.scripts = 0
        self._cell: PageCell | None = None
        self._caption = False
        self._header = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag == "section":
            self.sections.append(found.get("id", ""))
        elif tag == "figure":
            self.figures.append(PageFigure(found))
            self._in_figure = True
        elif tag == "figcaption":
            self._figcaption = True
        elif tag == "text" and self._in_figure:
            self._svg_text = True
            self.figures[-1].texts.append("")
        elif tag == "script":
            self.scripts += 1
        elif tag == "table":
            self.tables.append(PageTable(found.get("data-kind", "")))
        elif tag == "caption":
            self._caption = True
        elif tag == "tr" and self.tables:
            self._header = False
        elif tag == "th":
            self._header = True
            self._cell = PageCell(attrs=found)
        elif tag == "td":
            self._cell = PageCell(attrs=found)
            if not self.tables[-1].rows:
                self.tables[-1].rows.append([])

    def handle_endtag(self, tag: str) -> None:
        if tag == "figure":
            self._in_figure = False
        elif tag == "figcaption":
            self._figcaption = False
        elif tag == "text":
            self._svg_text = False
        if tag == "caption":
            self._caption = False
        elif tag == "th" and self._cell is not None:
            self.tables[-1].headers.append(self._cell.text.strip())
            self._cell = None
        elif tag == "td" and self._cell is not None:
            self._cell.text = " ".join(self._cell.text.split())
            self.tables[-1].rows[-1].append(self._cell)
            self._cell = None
        elif tag == "tr" and self.tables and not self._header:
            self.tables[-1].rows.append([])

    def handle_data(self, data: str) -> None:
        if self._figcaption:
            self.figures[-1].caption += data
        elif self._svg_text:
            self.figures[-1].texts[-1] += data
        elif self._caption and self.tables:
            self.tables[-1].caption += data
        elif self._cell is not None:
            self._cell.text += data


@dataclass
class PageFigure:
    attrs: dict[str, str]
    caption: str = ""
    # The SVG's <text> elements, in order (matplotlib writes its labels as text).
    texts: list[str] = field(default_factory=list)


@dataclass
class Page:
    tables: list[PageTable]
    sections: list[str]
    scripts: int
    figures: list[PageFigure] = field(default_factory=list)

    def figure(self, caption_start: str) -> PageFigure:
        return next(f for f in self.figures if f.caption.strip().startswith(caption_start))

    def table(self, caption: str) -> PageTable:
        return next(t for t in self.tables if t.caption.strip() == caption)

    def captions(self) -> list[str]:
        return [t.caption.strip() for t in self.tables]


def read_page(html: str) -> Page:
    reader = _Reader()
    reader.feed(html)
    for table in reader.tables:
        table.rows = [row for row in table.rows if row]
    return Page(reader.tables, reader.sections, reader.scripts, reader.figures)
