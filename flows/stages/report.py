"""The report stage: a finished run's HTML report built from what it landed and kept in the store
(`reports/<run_id>.html`), and the store's site pages (a panel's history, the index); the run
asks for them at its end (`flows.run.report`)."""

from __future__ import annotations

from contextlib import suppress
from typing import TYPE_CHECKING

from roadeval.flows.stages.orchestration import Stage
from roadeval.storage.store import Store

if TYPE_CHECKING:
    from roadeval.tasks.report.build import BuiltReport
    from roadeval.tasks.results.history import History


def build_report(store: Store, run_id: str, helper: bool) -> BuiltReport:
    """Build the run's HTML report and keep it in the store (`reports/<run_id>.html`); `helper`:
    draw its figures in a helper process (only in the command's own process, see `drawings`)."""
    from roadeval.tasks.report.build import build_report as build

    return build(store, run_id, helper=helper)


def build_site(store: Store, panel: str, history: History | None = None) -> str | None:
    """The panel's history page (a finished run is a new point of it) and the store's index
    (every run is listed, a failed one too), both read from corpus rows only; after the run's
    report, which the index links to. `history`: the panel's, when the run has read it already.
    Returns the history page's location (None: no finished run of the panel yet)."""
    from roadeval.tasks.report.history_page import build_history_page
    from roadeval.tasks.report.site_index import build_index
    from roadeval.tasks.results.history import HistoryError, panel_history

    page: str | None = None
    # No finished run of the panel yet (HistoryError): no page of it to build.
    with suppress(HistoryError):
        found = history if history is not None else panel_history(store, panel)
        page = store.location(build_history_page(store, found))
    build_index(store)
    return page


# Prefect's task name and task-run name (a template over the stage's parameters).
BUILD_REPORT = Stage("build-report", build_report, "report/{run_id}")
