"""The report's figures, drawn with matplotlib (imported here, lazily, on the Agg backend) as SVG
to inline in the page: no script, no external file. Text stays text in DejaVu Sans (or the
reader's sans-serif), and margins are set from the labels' lengths rather than measured by a
layout engine: measuring every label is most of what a figure costs, and a report of twenty
models draws dozens of them. Each figure's element ids are salted with its own number, so that
no two figures in one page share an id (a shared clip-path id would clip one by another's box).
"""

from __future__ import annotations

import io
import itertools
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from roadeval.environment import collector_paused

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

_NUMBERS = itertools.count(1)
# The figure's number in its page, when the page numbers its figures (`drawing.Drawings`).
_NUMBER: ContextVar[int | None] = ContextVar("figure_number", default=None)
_METADATA = ("Date", "Creator", "Format", "Type")
# Labels longer than this are cut with an ellipsis.
LABEL_CHARS = 28
SMALL_COLUMNS = 4
# Inches per character of a 9 pt label (DejaVu Sans averages 0.6 em; rounded up for wider
# fallback fonts), and the sine of the x labels' slant.
CHAR = 0.075
SLANT = 35
_SIN = math.sin(math.radians(SLANT))
_COS = math.cos(math.radians(SLANT))
# A heatmap's column names carry a code and its full name ('EGO-TRA ego traverse distance').
HEATMAP_LABEL_CHARS = 38


# What matplotlib says when its font has no glyph for a character of a label (a model named in
# CJK, an emoji): the SVG keeps the text as text, which the reader's browser draws with its own
# fonts, and the margins are set from the labels' lengths, so matplotlib's own glyphs are never
# seen and the warning (one per character per figure) says nothing.
MISSING_GLYPH = r"Glyph \d+ \(.*\) missing from font\(s\)"


def _matplotlib() -> Any:
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    warnings.filterwarnings("ignore", message=MISSING_GLYPH, category=UserWarning)
    matplotlib.rcParams.update(
        {
            "svg.fonttype": "none",
            # Measured in DejaVu Sans; the SVG names it and then the reader's sans-serif, which
            # draws the characters DejaVu Sans has not.
            "font.family": "sans-serif",
            "font.sans-serif": ["DejaVu Sans"],
            # Labels are data (model and suite names, costs in $): never TeX-like math.
            "text.parse_math": False,
            "font.size": 9,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.titlesize": 10,
        }
    )
    return matplotlib


def warm() -> None:
    """Import matplotlib and its backends now (a helper process does, ahead of its figures),
    without collecting meanwhile, and keep them frozen for the figures to come."""
    with collector_paused(freeze=True):
        _matplotlib()
        from matplotlib.backends import backend_svg  # noqa: F401
        from matplotlib.figure import Figure  # noqa: F401


@contextmanager
def numbered(number: int) -> Iterator[None]:
    """The figures drawn inside are figure `number` of their page (their SVG ids say so)."""
    token = _NUMBER.set(number)
    try:
        yield
    finally:
        _NUMBER.reset(token)


def short(label: str, limit: int = LABEL_CHARS) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"


def _longest(labels: Sequence[str], limit: int = LABEL_CHARS) -> int:
    return max((len(short(label, limit)) for label in labels), default=0)


def figure(width: float, height: float) -> Figure:
    _matplotlib()
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height))


def _frame(fig: Figure, left: float, bottom: float, right: float = 0.2, top: float = 0.3) -> None:
    """Margins in inches, whatever the figure's size."""
    width, height = fig.get_size_inches()
    fig.subplots_adjust(
        left=left / width, right=1 - right / width, bottom=bottom / height, top=1 - top / height
    )


def to_svg(fig: Figure) -> Markup:
    """The figure as an `<svg>` element (no XML prolog), ids unique in the page."""
    matplotlib = _matplotlib()
    number = _NUMBER.get()
    salt = f"roadeval-figure-{next(_NUMBERS) if number is None else number}"
    with matplotlib.rc_context({"svg.hashsalt": salt}):
        buffer = io.StringIO()
        # No metadata block: it names a creator and a date, which the page does not need.
        fig.savefig(buffer, format="svg", metadata=dict.fromkeys(_METADATA))
    text = buffer.getvalue()
    # Drawn here from the store's numbers and labels, which matplotlib escapes: markup to inline.
    return Markup(text[text.index("<svg") :])


def _grid(
    count: int, width: float, height: float, left: float, bottom: float, shared: bool = False
) -> tuple[Figure, list[Axes]]:
    """Small multiples: `count` panels of `width` x `height` inches (margins `left` and
    `bottom` inside each) in rows of up to SMALL_COLUMNS, the spare ones hidden. `shared`
    axes have one scale, labelled on the outer panels only (fewer labels: read faster, drawn
    faster)."""
    columns = min(max(count, 1), SMALL_COLUMNS)
    rows = math.ceil(max(count, 1) / columns)
    fig = figure(width * columns, height * rows)
    spacing = {
        "wspace": left / (width - left),
        "hspace": (bottom + 0.35) / (height - bottom - 0.35),
    }
    if not shared:
        # Only the panels drawn are made: an axes costs about as much to make as to draw.
        grid = fig.add_gridspec(rows, columns, **spacing)
        made = [fig.add_subplot(grid[n // columns, n % columns]) for n in range(max(count, 1))]
        _frame(fig, left, bottom, 0.25, 0.35)
        return fig, made[:count]
    axes = list(
        fig.subplots(
            rows,
            columns,
            squeeze=False,
            sharex=True,
            sharey=True,
            gridspec_kw=spacing,
        ).flat
    )
    _frame(fig, left, bottom, 0.25, 0.35)
    for index, spare in enumerate(axes[count:], count):
        spare.set_visible(False)
        if index >= columns:
            # The panel above a hidden one is the last of its column: it shows the x labels.
            axes[index - columns].xaxis.set_tick_params(labelbottom=True)
    return fig, axes[:count]


def _outer_labels(axes: Sequence[Axes], xlabel: str, ylabel: str) -> None:
    """Axis titles on the outer panels of a grid only: the x title where no panel is below,
    the y title on the first column."""
    columns = min(len(axes), SMALL_COLUMNS)
    for index, ax in enumerate(axes):
        if index + columns >= len(axes):
            ax.set_xlabel(xlabel)
        if index % columns == 0:
            ax.set_ylabel(ylabel)


def _whole_ticks(ax: Axes, axis: str = "y") -> None:
    """Ticks on whole numbers only: the axis counts items."""
    from matplotlib.ticker import MaxNLocator

    locator = MaxNLocator(integer=True, nbins=5)
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_locator(locator)


def _slanted(ax: Axes, labels: Sequence[str], limit: int = LABEL_CHARS) -> None:
    ax.set_xticks(range(len(labels)), [short(label, limit) for label in labels])
    for text in ax.get_xticklabels():
        text.set(rotation=SLANT, ha="right", rotation_mode="anchor")


def heatmap(
    rows: Sequence[str],
    columns: Sequence[str],
    values: Sequence[Sequence[float | None]],
    texts: Sequence[Sequence[str]],
    counts: Sequence[Sequence[int | None]],
    *,
    ticks: Sequence[float],
    unit: str,
    lower_is_better: bool = False,
) -> Markup:
    """Models (rows) x slice values (columns), each cell coloured by its value (darker: worse),
    labelled with it and, under it, the items it is over (`n=`); empty cells are grey. The
    colour bar spans `ticks` (its ends labelled), in `unit`."""
    import numpy as np

    matplotlib = _matplotlib()
    data = np.array([[np.nan if v is None else v for v in row] for row in values], dtype=float)
    # Wide enough for the row names, and for the first column's slanted name.
    first = CHAR * len(short(columns[0], HEATMAP_LABEL_CHARS)) * _COS if columns else 0.0
    left = max(0.3 + CHAR * _longest(rows), first - 0.2)
    bottom = 0.35 + CHAR * _longest(columns, HEATMAP_LABEL_CHARS) * _SIN
    cell_width = max(0.7, 0.09 * max((len(t) for row in texts for t in row), default=4))
    fig = figure(left + cell_width * len(columns) + 1.5, bottom + 0.46 * len(rows) + 0.2)
    _frame(fig, left, bottom, right=1.5, top=0.2)
    ax = fig.subplots()
    low, high = ticks[0], ticks[-1]
    colours = matplotlib.colormaps["viridis_r" if lower_is_better else "viridis"]
    image = ax.imshow(
        np.ma.masked_invalid(data),
        cmap=colours.with_extremes(bad="#dddddd"),
        vmin=low,
        vmax=high,
        aspect="auto",
    )
    _slanted(ax, columns, HEATMAP_LABEL_CHARS)
    ax.set_yticks(range(len(rows)), [short(r) for r in rows])
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    middle = (low + high) / 2
    for i, row in enumerate(texts):
        for j, text in enumerate(row):
            value, n = data[i, j], counts[i][j]
            if np.isfinite(value):
                light = (value < middle) != lower_is_better
                colour = "white" if light else "black"
                ax.text(j, i - 0.12, text, ha="center", va="center", fontsize=8, color=colour)
                if n is not None:
                    ax.text(
                        j, i + 0.24, f"n={n}", ha="center", va="center", fontsize=6.5, color=colour
                    )
    width, height = fig.get_size_inches()
    bar = fig.add_axes(
        (1 - 1.35 / width, bottom / height, 0.15 / width, 1 - (bottom + 0.2) / height)
    )
    fig.colorbar(image, cax=bar, ticks=list(ticks))
    bar.set_ylabel(short(unit, 30), fontsize=7)
    return to_svg(fig)


def grouped_bars(
    groups: Sequence[str],
    series: Sequence[tuple[str, Sequence[float | None]]],
    *,
    ylabel: str,
    zero_line: bool = False,
) -> Markup:
    """Bars per group (a task, a capability), one per series (a model), with a legend."""
    _matplotlib()
    count = max(len(series), 1)
    bottom = 0.35 + CHAR * _longest(groups, 22) * _SIN
    right = 0.4 + CHAR * _longest([name for name, _ in series], 24)
    plot_width = min(max(4.0, len(groups) * (0.3 + 0.16 * count)), 12.0)
    fig = figure(0.8 + plot_width + right, bottom + 2.6)
    _frame(fig, 0.8, bottom, right=right, top=0.2)
    ax = fig.subplots()
    step = 0.8 / count
    for index, (name, values) in enumerate(series):
        xs = [g + (index - (count - 1) / 2) * step for g in range(len(groups))]
        ys = [float("nan") if v is None else v for v in values]
        ax.bar(xs, ys, width=step, label=short(name, 24))
    _slanted(ax, groups, 22)
    ax.set_ylabel(ylabel)
    if zero_line:
        ax.axhline(0, color="#444444", linewidth=0.8)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return to_svg(fig)


def reliability_diagrams(
    panels: Sequence[tuple[str, Sequence[tuple[float, float, float, int]]]], bins: int
) -> Markup:
    """One small diagram per model: accuracy per confidence bin (bars over the bin's span,
    labelled with its count), the bin's mean confidence (dots), and the diagonal of a model
    whose confidence is its accuracy. `panels`: (title, [(lo, mean confidence, accuracy, n)])."""
    fig, axes = _grid(len(panels), 3.0, 2.8, 0.6, 0.5, shared=True)
    width = 1.0 / bins
    for ax, (title, points) in zip(axes, panels, strict=True):
        ax.plot([0, 1], [0, 1], linestyle="--", color="#888888", linewidth=0.8)
        ax.bar(
            [p[0] for p in points],
            [p[2] for p in points],
            width=width,
            align="edge",
            color="#4c72b0",
            edgecolor="white",
            label="accuracy",
        )
        ax.plot(
            [p[1] for p in points],
            [p[2] for p in points],
            "o",
            color="#dd8452",
            markersize=3,
            label="mean confidence",
        )
        for lo, _, accuracy, n in points:
            ax.text(lo + width / 2, min(accuracy + 0.03, 0.97), str(n), ha="center", fontsize=6)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_title(short(title, 32))
    _outer_labels(axes, "confidence", "accuracy")
    axes[0].legend(fontsize=7, loc="upper left", frameon=False)
    return to_svg(fig)


def histograms(
    panels: Sequence[tuple[str, Sequence[int]]],
    lo: float,
    hi: float,
    *,
    xlabel: str,
    whole: bool = False,
) -> Markup:
    """One small histogram per model over the same bins from `lo` to `hi` (one bar per whole
    number when `whole`)."""
    fig, axes = _grid(len(panels), 3.0, 2.5, 0.6, 0.5, shared=True)
    for ax, (title, counts) in zip(axes, panels, strict=True):
        # One outline per panel (`stairs`), not an artist per bar: twenty panels draw fast.
        if whole:
            edges = [lo - 0.5 + i for i in range(len(counts) + 1)]
            _whole_ticks(ax, "x")
        else:
            step = (hi - lo) / len(counts) if hi > lo else 1.0
            edges = [lo + i * step for i in range(len(counts) + 1)]
        ax.stairs(counts, edges, fill=True, color="#4c72b0")
        ax.set_title(short(title, 36))
        _whole_ticks(ax)
    _outer_labels(axes, xlabel, "items")
    return to_svg(fig)


# A Pareto chart's two axes: the bars count errors, the line adds up their share.
PARETO_COUNT_AXIS = "errors (items answered wrong)"
PARETO_SHARE_AXIS = "cumulative share of the group's errors"


def pareto_charts(panels: Sequence[tuple[str, Sequence[tuple[str, int, float]]]]) -> Markup:
    """Pareto charts of errors, one per group (TRIP: a role): a bar of errors per category,
    most first from the top, on an axis of counts (whole numbers, bottom); and the cumulative
    share of the group's errors down to each bar, a line on its own axis from 0 to 100% (top).
    `panels`: (title, [(category, errors, cumulative share)])."""
    from matplotlib.ticker import PercentFormatter

    longest = _longest([b[0] for _, bars in panels for b in bars], 26)
    fig, axes = _grid(len(panels), 2.4 + CHAR * longest + 0.4, 3.6, 0.3 + CHAR * longest, 0.45)
    for ax, (title, bars) in zip(axes, panels, strict=True):
        ys = list(range(len(bars)))
        ax.barh(ys, [b[1] for b in bars], color="#c44e52", label="errors")
        # Categories as plain text beside the axis, not tick labels: a tick is four artists,
        # and twelve per panel were most of what a chart cost.
        ax.set_yticks([])
        ax.set_ylim(len(bars) - 0.5, -0.5)
        beside = ax.get_yaxis_transform()
        for y, (category, _, _) in zip(ys, bars, strict=True):
            ax.text(
                -0.02, y, short(category, 26), transform=beside, ha="right", va="center", fontsize=8
            )
        ax.set_xlabel(PARETO_COUNT_AXIS, fontsize=8)
        _whole_ticks(ax, "x")
        ax.set_xlim(0, max((b[1] for b in bars), default=1))
        share = ax.twiny()
        share.plot([b[2] for b in bars], ys, color="#333333", marker="o", markersize=3, linewidth=1)
        share.set_xlim(0, 1)
        share.set_xticks([0, 0.5, 1])
        share.xaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        share.set_xlabel(PARETO_SHARE_AXIS, fontsize=8)
        share.spines["top"].set_visible(True)
        share.tick_params(labelsize=7)
        ax.set_title(short(title, 36), pad=30)
    return to_svg(fig)


def stacked_bars(
    groups: Sequence[str], series: Sequence[tuple[str, Sequence[float]]], *, ylabel: str
) -> Markup:
    """One bar per group (a model), stacked by series (tokens in and out, a cost per role)."""
    _matplotlib()
    bottom = 0.35 + CHAR * _longest(groups, 22) * _SIN
    fig = figure(min(max(4.0, 1.2 + 0.45 * len(groups)), 14.0) + 1.4, bottom + 2.4)
    _frame(fig, 0.9, bottom, right=1.4, top=0.2)
    ax = fig.subplots()
    bottoms = [0.0] * len(groups)
    for name, values in series:
        ax.bar(range(len(groups)), values, bottom=bottoms, label=name)
        bottoms = [b + v for b, v in zip(bottoms, values, strict=True)]
    _slanted(ax, groups, 22)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return to_svg(fig)
