"""Drawing a report's figures: in this process, or, on a machine with a core to spare, shared
with a helper process started as the report begins (matplotlib imports there while the report
reads the store). Figures are most of a report's cost, and the end of a rerun waits for its
report. A figure is numbered when it is asked for, so its SVG (its element ids) is the same
whichever process draws it; one the helper cannot draw (it died) is drawn here.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from markupsafe import Markup

log = logging.getLogger(__name__)

Plot = Callable[..., Markup]


class Drawn:
    """A figure of a page: drawn when the page is first shown (`Drawings.settle`)."""

    def __init__(
        self,
        page: Drawings,
        number: int,
        plot: Plot,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> None:
        self._page, self.number = page, number
        self.job = (plot, args, kwargs)
        self._svg: Markup | None = None

    @property
    def svg(self) -> Markup:
        if self._svg is None:
            self._page.settle()
        assert self._svg is not None
        return self._svg

    @property
    def drawn(self) -> bool:
        return self._svg is not None

    def draw_here(self) -> None:
        plot, args, kwargs = self.job
        self._svg = draw_numbered(self.number, plot, args, kwargs)

    def take(self, svg: Markup) -> None:
        """The figure as the helper drew it."""
        self._svg = svg


def draw_numbered(number: int, plot: Plot, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Markup:
    """`plot(*args, **kwargs)` as figure `number` of its page (in whichever process)."""
    from roadeval.tasks.report.plots import numbered

    with numbered(number):
        return plot(*args, **kwargs)


def _warm() -> None:
    from roadeval.tasks.report.plots import warm

    warm()


class Drawings:
    """The figures of one page, numbered from 1 in the order they are asked for, drawn when the
    first is shown: with a helper, this process draws from the first on and the helper from
    the last back, until they meet (figures differ tenfold in cost, so no fixed share)."""

    def __init__(self, helper: ProcessPoolExecutor | None = None) -> None:
        self._helper = helper
        self._count = 0
        self._waiting: list[Drawn] = []

    def draw(self, plot: Plot, *args: Any, **kwargs: Any) -> Drawn:
        self._count += 1
        drawn = Drawn(self, self._count, plot, args, kwargs)
        self._waiting.append(drawn)
        return drawn

    def settle(self) -> None:
        """Draw every figure asked for and not drawn yet."""
        waiting, self._waiting = self._waiting, []
        sent: dict[int, Future[Markup]] = {}
        if self._helper is not None and len(waiting) > 1:
            for drawn in reversed(waiting):
                plot, args, kwargs = drawn.job
                try:
                    sent[drawn.number] = self._helper.submit(
                        draw_numbered, drawn.number, plot, args, kwargs
                    )
                except Exception as exc:  # a broken helper: the rest are drawn here
                    log.debug("report figures drawn in this process: %s", exc)
                    self._helper = None
                    break
        for drawn in waiting:
            pending = sent.get(drawn.number)
            # Not taken by the helper yet: drawn here. Once it has taken one, it has taken
            # every one after it (sent last first).
            if pending is not None and not pending.cancel():
                break
            drawn.draw_here()
        for drawn in waiting:
            if not drawn.drawn:
                try:
                    drawn.take(sent[drawn.number].result())
                except Exception as exc:  # the helper died, or could not draw: drawn here
                    log.debug("report figure %d drawn in this process: %s", drawn.number, exc)
                    drawn.draw_here()


_PAGE: ContextVar[Drawings | None] = ContextVar("report_drawings", default=None)


def draw(plot: Plot, *args: Any, **kwargs: Any) -> Drawn:
    """Draw a figure of the page being built (see `drawings`), or of a page of its own."""
    page = _PAGE.get()
    return (page or Drawings()).draw(plot, *args, **kwargs)


def _start_helper() -> ProcessPoolExecutor | None:
    if (os.cpu_count() or 1) < 2:
        return None
    import multiprocessing

    try:
        helper = ProcessPoolExecutor(
            max_workers=1, mp_context=multiprocessing.get_context("forkserver"), initializer=_warm
        )
        # The process starts at its first task: start it now, to import while the store is read.
        helper.submit(int)
    except Exception as exc:  # no process to be had here: every figure is drawn in this one
        log.debug("no helper process for the report's figures: %s", exc)
        return None
    return helper


@contextmanager
def drawings(helper: bool = False) -> Iterator[Drawings]:
    """The figures drawn inside are one page's; with `helper`, every other one is drawn in a
    helper process (where there is a core to spare), stopped on leaving. Only the `roadeval`
    command asks for one: a process started here imports the caller's main module again, as
    multiprocessing does, which an unguarded script or notebook would not expect."""
    pool = _start_helper() if helper else None
    page = Drawings(pool)
    token = _PAGE.set(page)
    try:
        yield page
    finally:
        _PAGE.reset(token)
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
