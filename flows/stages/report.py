"""The report stage: a finished run's HTML report built from what it landed and kept in the store
(`reports/<run_id>.html`); the run asks for it at its end (`flows.run.report`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from roadeval.flows.stages.orchestration import Stage
from roadeval.storage.store import Store

if TYPE_CHECKING:
    from roadeval.tasks.report.build import BuiltReport


def build_report(store: Store, run_id: str, helper: bool) -> BuiltReport:
    """Build the run's HTML report and keep it in the store (`reports/<run_id>.html`); `helper`:
    draw its figures in a helper process (only in the command's own process, see `drawings`)."""
    from roadeval.tasks.report.build import build_report as build

    return build(store, run_id, helper=helper)


# Prefect's task name and task-run name (a template over the stage's parameters).
BUILD_REPORT = Stage("build-report", build_report, "report/{run_id}")
