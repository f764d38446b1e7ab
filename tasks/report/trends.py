"""A panel's trend figure: one headline metric of one suite across the panel's runs, a line per
model with each run's 95% interval as an error bar, and the runs where a model drifted ringed in
red (drawn like the report's figures: matplotlib, inline SVG)."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup

from roadeval.tasks.report.plots import CHAR, _frame, figure, short, to_svg

# (model, [(run number, value, low, high)], run numbers where it drifted)
Series = tuple[str, Sequence[tuple[int, float, float | None, float | None]], Sequence[int]]


def trend(series: Sequence[Series], runs: int, ylabel: str) -> Markup:
    """Values by run number (1 = the oldest run), one line per model, intervals as bars."""
    right = 0.5 + CHAR * max((len(short(name, 24)) for name, _, _ in series), default=4)
    width = min(max(4.5, 0.22 * runs), 11.0)
    fig = figure(0.9 + width + right, 3.0)
    _frame(fig, 0.9, 0.5, right=right, top=0.2)
    ax = fig.subplots()
    for name, points, drifted in series:
        xs = [p[0] for p in points]
        ys = [p[1] for p in points]
        low = [p[1] - p[2] if p[2] is not None else 0.0 for p in points]
        high = [p[3] - p[1] if p[3] is not None else 0.0 for p in points]
        bars = ax.errorbar(
            xs,
            ys,
            yerr=[low, high],
            marker="o",
            markersize=3,
            capsize=2,
            linewidth=1,
            label=short(name, 24),
        )
        rings = [(x, y) for x, y in zip(xs, ys, strict=True) if x in set(drifted)]
        if rings:
            ax.scatter(
                [x for x, _ in rings],
                [y for _, y in rings],
                s=90,
                facecolors="none",
                edgecolors="#c0392b",
                linewidths=1.6,
                zorder=5,
            )
        del bars
    ax.set_xlabel("run (1 = oldest finished run)")
    ax.set_ylabel(ylabel)
    ax.set_xlim(0.5, runs + 0.5)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return to_svg(fig)
