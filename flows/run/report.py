"""A finished run's end: its HTML report, built from what it landed (the report stage,
`stages.report`) and kept in the store (`reports/<run_id>.html`). A report that cannot be built
is told, never fatal: the run is finished and landed either way, and `roadeval report RUN`
builds it again."""

from __future__ import annotations

from roadeval.flows.run.log import run_logger
from roadeval.flows.run.quick_exit import armed
from roadeval.flows.run.summary import RunSummary
from roadeval.flows.stages.orchestration import Orchestrator
from roadeval.flows.stages.report import BUILD_REPORT
from roadeval.storage.records import RunStatus
from roadeval.storage.store import Store


def prepare_report() -> None:
    """A run about to finish: its report's figure helpers start now, in the command's own
    process (see `build_report`), to import while the run lands its metrics."""
    if armed():
        from roadeval.tasks.report.drawing import start_helpers

        start_helpers()


def keep_report(summary: RunSummary, store: Store, orchestrator: Orchestrator) -> None:
    """Build the report of a finished run (a stage, a Prefect task under Prefect) and note in
    `summary` where it is, or why it is not."""
    if summary.status != RunStatus.FINISHED:
        return
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
