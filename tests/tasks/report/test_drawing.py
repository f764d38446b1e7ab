"""A report's figures drawn in helper processes: the same page as drawn in one process, a figure
the helpers cannot draw is drawn here, and helpers that are ready draw every figure."""

from __future__ import annotations

import os
import re
from concurrent.futures import Future
from typing import Any

import pytest
from markupsafe import Markup

from roadeval.tasks.report.drawing import (
    MAX_HELPERS,
    Drawings,
    Helpers,
    _start_helpers,
    draw,
    drawings,
)
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


def _helpers(pool: object, ready: bool) -> Helpers:
    first: Future[int] = Future()
    if ready:
        first.set_result(0)
    return Helpers(pool, first)  # type: ignore[arg-type]


@pytest.mark.parametrize("ready", [False, True])
def test_figures_the_helper_could_not_draw_are_drawn_here(ready: bool) -> None:
    alone = _page(helper=False)
    page = Drawings(_helpers(_DeadHelper(), ready))
    drawn = [page.draw(plot, *args, **kwargs) for plot, args, kwargs in FIGURES]
    assert [d.svg for d in drawn] == alone


class _TellingHelper:
    """A helper that draws at once, and says so in its figure."""

    def submit(self, _plot: object, number: int, *args: object) -> Future[Markup]:
        done: Future[Markup] = Future()
        done.set_running_or_notify_cancel()
        done.set_result(Markup(f"by the helper: {number}"))
        return done


def test_helpers_that_are_ready_draw_every_figure_and_this_process_none() -> None:
    page = Drawings(_helpers(_TellingHelper(), ready=True))
    drawn = [page.draw(plot, *args, **kwargs) for plot, args, kwargs in FIGURES]
    assert [d.svg for d in drawn] == [f"by the helper: {n}" for n in range(1, len(FIGURES) + 1)]


class _BusyHelper:
    """A helper that has not taken any figure yet (each can still be taken back)."""

    def submit(self, *args: object) -> Future[Markup]:
        return Future()


def test_helpers_still_starting_leave_to_this_process_what_they_have_not_taken() -> None:
    alone = _page(helper=False)
    page = Drawings(_helpers(_BusyHelper(), ready=False))
    drawn = [page.draw(plot, *args, **kwargs) for plot, args, kwargs in FIGURES]
    assert [d.svg for d in drawn] == alone


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="helpers start on 2 cores or more")
def test_a_run_about_to_report_warms_a_helper_per_core() -> None:
    """It then lands its metrics and waits for its figures: every core can draw. The report's
    own start warms one fewer, as its process reads the store meanwhile."""
    for early, expected in ((True, min(os.cpu_count() or 1, MAX_HELPERS)), (False, 1)):
        helpers = _start_helpers(early=early)
        assert helpers is not None
        try:
            helpers.first.result(timeout=60)
            processes: dict[int, Any] = helpers.pool._processes  # type: ignore[attr-defined]
            assert len(processes) == expected, early
        finally:
            helpers.pool.shutdown(wait=True)
