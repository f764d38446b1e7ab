"""A finished run's last stage: its HTML report, built from what it landed and kept in the store
(`reports/<run_id>.html`). A report that cannot be built is told, never fatal: the run is
finished and landed either way, and `roadeval report RUN` builds it again."""

from __future__ import annotations

from roadeval.flows.orchestration import Orchestrator
from roadeval.flows.run_log import run_logger
from roadeval.flows.run_record import RunStatus
from roadeval.flows.run_summary import RunSummary
from roadeval.flows.stages import BUILD_REPORT
from roadeval.storage.store import Store


def keep_report(summary: RunSummary, store: Store, orchestrator: Orchestrator) -> None:
    """Build the report of a finished run (a stage, a Prefect task under Prefect) and note in
    `summary` where it is, or why it is not."""
    if summary.status != RunStatus.FINISHED:
        return
    try:
        built = orchestrator.call(BUILD_REPORT, store, summary.run_id)
    except Exception as exc:
        summary.report_error = f"{type(exc).__name__}: {exc}"
        run_logger().warning(
            "run %s: its report could not be built: %s", summary.run_id, summary.report_error
        )
        return
    summary.report = built.location
    summary.report_url = built.url
    run_logger().info("run %s: report %s", summary.run_id, built.location)
