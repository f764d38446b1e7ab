"""What a report's figures say agrees with what they show: a Pareto chart's count axis counts the
bars and its cumulative share has an axis of its own, 0-100%; a heatmap's cells name the items
they are over; a colour scale covers every value it colours, its ends labelled, and never spans
two kinds of metric."""

from __future__ import annotations

import re

from markupsafe import Markup

from roadeval.benchmarks.vocabulary import JUDGE_POINTS, METRES, SHARE
from roadeval.tasks.report.plots import (
    PARETO_COUNT_AXIS,
    PARETO_SHARE_AXIS,
    heatmap,
    pareto_charts,
)
from roadeval.tasks.report.scales import colour_scale


def _texts(svg: Markup) -> list[str]:
    """The SVG's text elements (matplotlib writes every label as text), stripped."""
    return [" ".join(t.split()) for t in re.findall(r"<text[^>]*>([^<]*)</text>", str(svg))]


def test_a_pareto_charts_axes_are_its_bars_counts_and_the_cumulative_share() -> None:
    # Errors per category, most first, and the share of the group's errors down to each bar.
    bars = [("speed", 5, 5 / 9), ("lanes", 3, 8 / 9), ("signs", 1, 1.0)]
    texts = _texts(pareto_charts([("m: vehicle", bars)]))
    # On main one axis read "errors (cumulative share)" over bars of counts, with percentages
    # printed beside the bars.
    assert "errors (cumulative share)" not in texts
    assert PARETO_COUNT_AXIS in texts and PARETO_SHARE_AXIS in texts
    counts = sorted(int(t) for t in texts if t.isdigit())
    assert counts[-1] >= 5  # the count axis reaches the longest bar
    assert {"0%", "50%", "100%"} <= set(texts)  # the share's own axis, 0-100%
    assert not any(re.fullmatch(r"\d+%", t) and t not in ("0%", "50%", "100%") for t in texts)


def test_every_heatmap_cell_names_the_items_it_is_over() -> None:
    scale = colour_scale(SHARE, [0.0, 0.5])
    svg = heatmap(
        ["m", "n"],
        ["easy", "medium", "hard"],
        [[0.0, 0.5, None], [0.25, 0.5, 0.5]],
        [["0.000", "0.500", ""], ["0.250", "0.500", "0.500"]],
        [[3, 12, None], [3, 12, 7]],
        ticks=scale.ticks,
        unit=scale.unit,
    )
    texts = _texts(svg)
    assert texts.count("n=3") == 2 and texts.count("n=12") == 2 and texts.count("n=7") == 1


def test_a_colour_scale_covers_its_values_and_labels_its_ends() -> None:
    # STRIDE's ADE: metres from 0, no upper bound but the data (on main the bar stopped at 5
    # under a 9.44 cell).
    ade = colour_scale(METRES, [9.44, 2.0])
    assert ade.covers(9.44) and ade.covers(2.0) and ade.low == 0.0
    assert ade.ticks[0] == ade.low and ade.ticks[-1] == ade.high
    # A kind's own range is kept (a share is 0-1, a judge's points 0-10), widened past it
    # only by a value outside it.
    assert (colour_scale(SHARE, [0.3]).low, colour_scale(SHARE, [0.3]).high) == (0.0, 1.0)
    assert colour_scale(JUDGE_POINTS, [12.0]).covers(12.0)
    svg = heatmap(
        ["m"],
        ["trajectory-prediction"],
        [[9.44]],
        [["9.440"]],
        [[6]],
        ticks=ade.ticks,
        unit=ade.unit,
        lower_is_better=True,
    )
    texts = _texts(svg)
    assert "10" in texts and "metres" in texts  # the bar's top end is labelled, with its unit
