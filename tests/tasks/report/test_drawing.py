"""A report's figures drawn half in a helper process: the same page as drawn in one process,
and a figure the helper cannot draw is drawn here."""

from __future__ import annotations

import os
import re
from concurrent.futures import Future

import pytest
from markupsafe import Markup

from roadeval.tasks.report.drawing import Drawings, draw, drawings
from roadeval.tasks.report.plots import grouped_bars, histograms, pareto_charts

FIGURES = [
    (grouped_bars, (["a", "b"], [("m", [0.5, 0.25]), ("n", [None, 1.0])]), {"ylabel": "score"}),
    (pareto_charts, ([("m: role", [("speed", 3, 0.6), ("lanes", 2, 1.0)])],), {}),
    (histograms, ([("m", [1, 4, 2])], 0.0, 3.0), {"xlabel": "ade"}),
    (grouped_bars, (["c"], [("m", [0.1])]), {"ylabel": "penalty", "zero_line": True}),
]


def _page(helper: bool) -> list[Markup]:
    with drawings(helper=helper):
        drawn = [draw(plot, *args, **kwargs) for plot, args, kwargs in FIGURES]
        return [d.svg for d in drawn]


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="a helper is started on 2 cores or more")
def test_figures_drawn_by_the_helper_are_those_drawn_here() -> None:
    alone, helped = _page(helper=False), _page(helper=True)
    assert helped == alone
    # Numbered by the page: no clip path (what `url(#id)` names) is shared by two figures.
    ids = [set(re.findall(r'<clipPath id="([^"]+)"', svg)) for svg in alone]
    assert all(ids) and sum(map(len, ids)) == len(set().union(*ids))


class _DeadHelper:
    """A helper whose every figure fails, as when its process died."""

    def submit(self, *args: object) -> Future[Markup]:
        failed: Future[Markup] = Future()
        failed.set_running_or_notify_cancel()  # taken: it cannot be cancelled back
        failed.set_exception(RuntimeError("the helper died"))
        return failed


def test_figures_the_helper_could_not_draw_are_drawn_here() -> None:
    alone = _page(helper=False)
    page = Drawings(_DeadHelper())  # type: ignore[arg-type]
    drawn = [page.draw(plot, *args, **kwargs) for plot, args, kwargs in FIGURES]
    assert [d.svg for d in drawn] == alone


def test_a_page_without_a_helper_draws_every_figure_as_asked() -> None:
    page = Drawings()
    first = page.draw(grouped_bars, ["a"], [("m", [0.5])], ylabel="score")
    assert first.svg.startswith("<svg")
