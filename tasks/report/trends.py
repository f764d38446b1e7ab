"""A panel's trend figure: one headline metric of one suite across the panel's runs, a line per
model with each run's 95% interval as an error bar, and the runs where a model drifted ringed in
red, as an inline SVG.

Written as SVG elements directly, not through matplotlib as the run report's figures are: a
panel watched for a year draws some forty of these, each with twenty models x fifty runs of
intervals, and matplotlib's artists, text layout and legend cost about a second per figure
(most of the history page's time); here a figure is one path per model and costs milliseconds.
Text stays text (the page's sans-serif), as in the report's figures.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from markupsafe import Markup, escape

# (model, [(run number, value, low, high)], run numbers where it drifted)
Point = tuple[int, float, float | None, float | None]
Series = tuple[str, Sequence[Point], Sequence[int]]

# matplotlib's tab20, in its order of strong colours first: twenty models stay apart.
COLOURS = [
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#aec7e8",
    "#ffbb78",
    "#98df8a",
    "#ff9896",
    "#c5b0d5",
    "#c49c94",
    "#f7b6d2",
    "#c7c7c7",
    "#dbdb8d",
    "#9edae5",
]
DRIFT = "#c0392b"
LEFT, RIGHT, TOP, BOTTOM = 64.0, 170.0, 12.0, 44.0
HEIGHT = 260.0
LABEL_CHARS = 24


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About `count` round tick values covering [low, high]."""
    if not math.isfinite(low) or not math.isfinite(high):
        return [0.0]
    if high <= low:
        low, high = low - 0.5, high + 0.5
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.floor(low / step) * step
    return [first + k * step for k in range(math.ceil((high - first) / step) + 1)]


def _label(value: float) -> str:
    return f"{value:.3g}"


def trend(series: Sequence[Series], runs: int, ylabel: str) -> Markup:
    """Values by run number (1 = the oldest run), one line per model, intervals as bars."""
    values = [
        v
        for _, points, _ in series
        for p in points
        for v in (p[1], p[2], p[3])
        if v is not None and math.isfinite(v)
    ]
    ticks = nice_ticks(min(values, default=0.0), max(values, default=1.0))
    low, high = ticks[0], ticks[-1]
    width = LEFT + min(max(360.0, 14.0 * runs), 900.0) + RIGHT
    # Tall enough for the legend's line per model.
    height = max(HEIGHT, TOP + 13.0 * len(series) + BOTTOM)
    plot_w, plot_h = width - LEFT - RIGHT, height - TOP - BOTTOM

    def x(run: int) -> float:
        return LEFT + plot_w * (run - 0.5) / max(runs, 1)

    def y(value: float) -> float:
        return TOP + plot_h * (1 - (value - low) / ((high - low) or 1.0))

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="DejaVu Sans, sans-serif" '
        'font-size="11" role="img">'
    ]
    for tick in ticks:
        parts.append(
            f'<line x1="{LEFT}" x2="{LEFT + plot_w:.1f}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" '
            f'stroke="#e5e5e5"/><text x="{LEFT - 6}" y="{y(tick) + 4:.1f}" '
            f'text-anchor="end">{_label(tick)}</text>'
        )
    every = max(1, math.ceil(runs / 25))
    for run in range(1, runs + 1):
        if run == 1 or run % every == 0:
            parts.append(
                f'<text x="{x(run):.1f}" y="{TOP + plot_h + 16:.1f}" '
                f'text-anchor="middle">{run}</text>'
            )
    parts.append(
        f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{TOP + plot_h:.1f}" stroke="#444"/>'
        f'<line x1="{LEFT}" x2="{LEFT + plot_w:.1f}" y1="{TOP + plot_h:.1f}" '
        f'y2="{TOP + plot_h:.1f}" stroke="#444"/>'
        f'<text x="{LEFT + plot_w / 2:.1f}" y="{height - 8:.1f}" text-anchor="middle">'
        "run (1 = oldest finished run)</text>"
        f'<text transform="translate(14 {TOP + plot_h / 2:.1f}) rotate(-90)" '
        f'text-anchor="middle">{escape(ylabel)}</text>'
    )
    for index, (name, points, drifted) in enumerate(series):
        colour = COLOURS[index % len(COLOURS)]
        shown = [p for p in points if math.isfinite(p[1])]
        line = " ".join(f"{x(p[0]):.1f},{y(p[1]):.1f}" for p in shown)
        bars = " ".join(
            f"M{x(p[0]):.1f} {y(p[2]):.1f}V{y(p[3]):.1f}"
            for p in shown
            if p[2] is not None and p[3] is not None
        )
        title = escape(name)
        parts.append(
            f'<g data-model="{title}"><title>{title}</title>'
            f'<path d="{bars}" stroke="{colour}" stroke-width="1" opacity="0.6"/>'
            f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="1.5"/>'
        )
        rings = set(drifted)
        for p in shown:
            if p[0] in rings:
                parts.append(
                    f'<circle cx="{x(p[0]):.1f}" cy="{y(p[1]):.1f}" r="6" fill="none" '
                    f'stroke="{DRIFT}" stroke-width="2" data-drift="{p[0]}"/>'
                )
        parts.append("</g>")
        label = name if len(name) <= LABEL_CHARS else name[: LABEL_CHARS - 1] + "…"
        ly = TOP + 6 + 13 * index
        parts.append(
            f'<line x1="{width - RIGHT + 10:.1f}" x2="{width - RIGHT + 26:.1f}" y1="{ly:.1f}" '
            f'y2="{ly:.1f}" stroke="{colour}" stroke-width="2"/><text '
            f'x="{width - RIGHT + 30:.1f}" y="{ly + 4:.1f}">{escape(label)}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))
