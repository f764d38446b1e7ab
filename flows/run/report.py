"""A run's end: a finished run's HTML report, built from what it landed (the report stage,
`stages.report`) and kept in the store (`reports/<run_id>.html`); then, whatever its status, the
store's site pages (the panel's history and the index). A page that cannot be built is told,
never fatal: the run is finished and landed either way, and `roadeval report RUN` (`roadeval
history`) builds it again."""

from __future__ import annotations

from contextlib import suppress
from typing import TYPE_CHECKING

from roadeval.flows.panel.file import Panel
from roadeval.flows.run.log import run_logger
from roadeval.flows.run.quick_exit import armed
from roadeval.flows.run.summary import RunSummary
from roadeval.flows.stages.orchestration import Orchestrator
from roadeval.flows.stages.report import BUILD_REPORT
from roadeval.storage.records import RunStatus
from roadeval.storage.store import Store

if TYPE_CHECKING:
    from roadeval.tasks.results.history import History

# How long a presigned link to a report opens it: 7 days, the longest S3's signatures allow,
# so a weekly run's link works until the next run's.
LINK_EXPIRES_S = 7 * 24 * 3600


def prepare_report() -> None:
    """A run about to finish: its report's figure helpers start now, in the command's own
    process (see `build_report`), to import while the run lands its metrics."""
    if armed():
        from roadeval.tasks.report.drawing import start_helpers

        start_helpers()


def keep_report(
    summary: RunSummary,
    store: Store,
    orchestrator: Orchestrator,
    panel: Panel,
    history: History | None = None,
) -> str | None:
    """Build the report of a finished run (a stage, a Prefect task under Prefect) and note in
    `summary` where it is and the link that opens it, or why it is not; then the store's site
    pages (`keep_site`), whose history page's location it returns."""
    if summary.status == RunStatus.FINISHED:
        _keep_run_report(summary, store, orchestrator, panel.report_url)
    return keep_site(summary, store, orchestrator, panel.name, history)


def report_link(store: Store, key: str, report_url: str | None) -> str | None:
    """The http(s) address that opens the report kept at `key`: under the panel's
    `report_url` (where the store's reports/ folder is served), else a link the store signs
    (S3: presigned for `LINK_EXPIRES_S`); None for a folder store without one (no link a
    browser would follow: a file:// link in the Prefect UI opens nothing)."""
    from roadeval.tasks.report.build import REPORTS

    if report_url is not None:
        return f"{report_url.rstrip('/')}/{key.removeprefix(REPORTS)}"
    return store.link(key, LINK_EXPIRES_S, "text/html; charset=utf-8")


def keep_site(
    summary: RunSummary,
    store: Store,
    orchestrator: Orchestrator,
    panel: str,
    history: History | None = None,
) -> str | None:
    """At the end of every run, whatever its status and however it was started: the panel's
    history page (a finished run is a new point of it) and the store's index (every run is
    listed, a failed one too); the history page's location (None: not built). Both read
    corpus rows only, and a hand-started run changes a panel's history as much as a scheduled
    one. `history`: the panel's, when the run has read it already. Never fatal: `roadeval
    history` builds them again."""
    from roadeval.tasks.report.history_page import build_history_page
    from roadeval.tasks.report.site_index import build_index
    from roadeval.tasks.results.history import HistoryError, panel_history

    page: str | None = None
    try:
        # No finished run of the panel yet (HistoryError): no page of it to build.
        with suppress(HistoryError):
            found = history if history is not None else panel_history(store, panel)
            page = store.location(build_history_page(store, found))
        build_index(store)
    except Exception as exc:
        run_logger(orchestrator).warning(
            "run %s: the store's history and index pages could not be built: %s: %s",
            summary.run_id,
            type(exc).__name__,
            exc,
        )
    return page


def _keep_run_report(
    summary: RunSummary, store: Store, orchestrator: Orchestrator, report_url: str | None
) -> None:
    try:
        # A helper process for the figures only in the command's own process (see `drawings`).
        built = orchestrator.call(BUILD_REPORT, store, summary.run_id, armed())
    except Exception as exc:
        summary.report_error = f"{type(exc).__name__}: {exc}"
        run_logger(orchestrator).warning(
            "run %s: its report could not be built: %s", summary.run_id, summary.report_error
        )
        return
    summary.report = built.location
    try:
        summary.report_url = report_link(store, built.key, report_url)
    except Exception as exc:
        # The report is kept; only the link to it is missing (the store's path stands in).
        run_logger(orchestrator).warning(
            "run %s: no link to its report could be made: %s: %s",
            summary.run_id,
            type(exc).__name__,
            exc,
        )
    run_logger(orchestrator).info("run %s: report %s", summary.run_id, built.location)
