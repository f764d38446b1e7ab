"""A run's end: a finished run's HTML report, built from what it landed (the report stage,
`stages.report`) and kept in the store (`reports/<run_id>.html`); then, whatever its status, the
store's site pages (the panel's history and the index). A page that cannot be built is told,
never fatal: the run is finished and landed either way, and `roadeval report RUN` (`roadeval
history`) builds it again."""

from __future__ import annotations

from roadeval.flows.process.quick_exit import armed
from roadeval.flows.record.log import run_logger
from roadeval.flows.record.summary import RunSummary
from roadeval.flows.stages.orchestration import Orchestrator
from roadeval.flows.stages.report import BUILD_REPORT, build_site
from roadeval.storage.records import RunStatus
from roadeval.storage.store import Store


def keep_report(summary: RunSummary, store: Store, orchestrator: Orchestrator, panel: str) -> None:
    """Build the report of a finished run (a stage, a Prefect task under Prefect) and note in
    `summary` where it is, or why it is not; then, at the end of every run whatever its status
    and however it was started, the store's site pages (`stages.report.build_site`: a hand-started
    run changes a panel's history as much as a scheduled one). Never fatal: `roadeval history`
    builds them again."""
    if summary.status == RunStatus.FINISHED:
        _keep_run_report(summary, store, orchestrator)
    try:
        build_site(store, panel)
    except Exception as exc:
        run_logger(orchestrator).warning(
            "run %s: the store's history and index pages could not be built: %s: %s",
            summary.run_id,
            type(exc).__name__,
            exc,
        )


def _keep_run_report(summary: RunSummary, store: Store, orchestrator: Orchestrator) -> None:
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
    summary.report_url = built.url
    run_logger(orchestrator).info("run %s: report %s", summary.run_id, built.location)
