"""Drawing a report's figures: in this process, or, on a machine with a core to spare, shared
with helper processes started as the report begins (matplotlib imports there while the report
reads the store), or earlier (`start_helpers`: a run starts them as it lands its metrics).
Figures are most of a report's cost, and the end of a rerun waits for its report. A figure is
numbered when it is asked for, so its SVG (its element ids) is the same whichever process draws
it; one the helpers cannot draw (one died) is drawn here.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, ClassVar

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


@dataclass(frozen=True)
class Helpers:
    """Helper processes for figures, and whether the first is ready (matplotlib imported)."""

    pool: ProcessPoolExecutor
    first: Future[int]

    @property
    def ready(self) -> bool:
        return self.first.done() and self.first.exception() is None


class Drawings:
    """The figures of one page, numbered from 1 in the order they are asked for, drawn when the
    first is shown. With helpers ready, they draw them all (this process would first have to
    import matplotlib); with helpers still starting, this process draws from the first on and
    the helpers from the last back, until they meet (figures differ tenfold in cost, so no
    fixed share)."""

    def __init__(self, helpers: Helpers | None = None) -> None:
        self._helpers = helpers
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
        if self._helpers is not None and len(waiting) > 1:
            for drawn in reversed(waiting):
                plot, args, kwargs = drawn.job
                try:
                    sent[drawn.number] = self._helpers.pool.submit(
                        draw_numbered, drawn.number, plot, args, kwargs
                    )
                except Exception as exc:  # a broken helper: the rest are drawn here
                    log.debug("report figures drawn in this process: %s", exc)
                    self._helpers = None
                    break
        ready = self._helpers is not None and self._helpers.ready and len(sent) == len(waiting)
        for drawn in waiting if not ready else ():
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


# A page has a few dozen figures: more helpers would each import matplotlib for a handful.
MAX_HELPERS = 4


def _start_helpers(early: bool = False) -> Helpers | None:
    """Helpers, importing matplotlib from now on. A process starts at a task, so one starts
    now per warm-up sent: one while this process reads the store (a second would slow it),
    the others as figures are sent. `early` (a run about to report): one per core, as the
    run then lands its metrics and waits for its figures (its rerun ended 0.2 s sooner,
    6.27 vs 6.47 s median of 7 in bench/rerun.py's setting)."""
    cores = os.cpu_count() or 1
    if cores < 2:
        return None
    import multiprocessing

    from roadeval.tasks.shard.worker_server import start_server

    try:
        start_server()
        pool = ProcessPoolExecutor(
            max_workers=min(cores if early else cores - 1, MAX_HELPERS),
            mp_context=multiprocessing.get_context("forkserver"),
            initializer=_warm,
        )
        first = pool.submit(int)
        for _ in range(min(cores, MAX_HELPERS) - 1 if early else 0):
            pool.submit(int)
    except Exception as exc:  # no process to be had here: every figure is drawn in this one
        log.debug("no helper process for the report's figures: %s", exc)
        return None
    return Helpers(pool, first)


class _Early:
    """Helpers started ahead of the next page (`start_helpers`), taken by its `drawings`."""

    helpers: ClassVar[Helpers | None] = None


def start_helpers() -> None:
    """Start the next page's helpers now: a run that is about to report starts them as it lands
    its metrics, so that they are ready (matplotlib imported) when its report begins."""
    if _Early.helpers is None:
        _Early.helpers = _start_helpers(early=True)


@contextmanager
def drawings(helper: bool = False) -> Iterator[Drawings]:
    """The figures drawn inside are one page's; with `helper`, they are drawn in helper
    processes as well (where there is a core to spare), stopped on leaving. Only the `roadeval`
    command asks for them: a process started here imports the caller's main module again, as
    multiprocessing does, which an unguarded script or notebook would not expect."""
    helpers: Helpers | None = None
    if helper:
        helpers, _Early.helpers = _Early.helpers or _start_helpers(), None
    page = Drawings(helpers)
    token = _PAGE.set(page)
    try:
        yield page
    finally:
        _PAGE.reset(token)
        if helpers is not None:
            helpers.pool.shutdown(wait=True, cancel_futures=True)
