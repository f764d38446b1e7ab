"""A run's life, top-down: its id and start time, the checks before it (`preflight`), its
baseline, its suites loaded (one stage each) and the pairs of the panel that apply, then set up
(`setup`), executed (`execute`) and, finished, reported (`report`). The same code path under
Prefect and inline."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from roadeval.environment import tune_collector_for_run
from roadeval.flows.panel.file import Panel, with_reuse_for
from roadeval.flows.process.quick_exit import keep_until_exit
from roadeval.flows.record.log import run_logger
from roadeval.flows.record.parts import RunContext
from roadeval.flows.record.summary import RunStopped, RunSummary
from roadeval.flows.rerun.baseline import find_baseline
from roadeval.flows.rerun.continuation import horizon_of
from roadeval.flows.run.alarms import (
    announce_died,
    announce_drift,
    announce_errors,
    announce_stop,
)
from roadeval.flows.run.execute import execute_run
from roadeval.flows.run.preflight import check_before_run
from roadeval.flows.run.report import keep_report
from roadeval.flows.run.setup import Started, set_up
from roadeval.flows.stages.load import LOAD_SUITE, applicable
from roadeval.flows.stages.orchestration import Orchestrator
from roadeval.storage.records import RunStatus
from roadeval.storage.store import Store

if TYPE_CHECKING:
    from roadeval.tasks.results.history import History

FINISHED = RunStatus.FINISHED


def run_panel(
    panel: Panel,
    store_uri: str | None,
    orchestrator: Orchestrator,
    *,
    dry_run: bool = False,
    against: str | None = None,
    rescore: bool = False,
    report: bool = True,
) -> RunSummary:
    """Load suites, answer every item with every model (cached by request key), score, land.
    A run is compared with its baseline (the panel's last finished run, or `against`): it
    asks and scores only what changed. A `rescore` asks no model at all. A finished run ends
    by building its HTML report, unless `report` is False."""
    tune_collector_for_run()
    # Each model's `reuse_for` in force, on its spec (a deployment may have set the default).
    panel = with_reuse_for(panel, rescore=rescore)
    started = datetime.now(UTC)
    run_id = started.strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:8]
    orchestrator.name_run(panel.name, run_id)
    store = check_before_run(panel, store_uri)
    # Before anything is loaded or asked: a baseline that cannot be one is bad input.
    baseline = find_baseline(store, panel, against)
    # A resume (the same command after a run that did not finish) keeps that run's horizon.
    horizon = horizon_of(store, panel.name, run_id, started)
    # The run it continues died: this run found it so, and says so once (`run.alarms`).
    found_dead = announce_died(horizon, run_id, store, panel, orchestrator)
    # The run's own log lines are chosen here, in the flow's thread (Prefect's run logger).
    logger = orchestrator.run_logger()
    loaded = [orchestrator.call(LOAD_SUITE, panel, entry) for entry in panel.suites]
    # The panel is checked (a model for every suite, a judge where one scores) before anything
    # is drawn.
    pairs, not_covered = applicable(panel, loaded)
    context = RunContext(
        run_id, started, panel, store, orchestrator, dry_run, rescore, report, horizon
    )
    start = Started(context, baseline, loaded, pairs, not_covered, logger)
    run = set_up(start)
    # The run's items, plans and baseline answers: not freed one by one when the command ends.
    keep_until_exit(run)
    try:
        summary = execute_run(run)
    except RunStopped as stopped:
        reason = stopped.reason
        stopped.summary.alarms = found_dead + announce_stop(
            stopped.summary, reason.status, reason.message, store, panel, orchestrator
        )
        raise
    summary.alarms = found_dead
    # The drift check: this run against the panel's finished runs before it (corpus rows and
    # the comparisons the runs landed; about 0.1 s of CPU for a small panel).
    history = _history(store, panel.name, orchestrator) if summary.status == FINISHED else None
    page = keep_report(summary, store, orchestrator, panel, history) if report else None
    # A rescore asked no model: a score it moved is the scorer's change, not the model's.
    if history is not None and not rescore:
        summary.alarms += announce_drift(summary, history.steps, store, panel, orchestrator, page)
    if summary.status == FINISHED and not rescore and not dry_run:
        summary.alarms += announce_errors(summary, store, panel, orchestrator)
    return summary


def _history(store: Store, panel: str, orchestrator: Orchestrator) -> History | None:
    """The panel's history with this run in it; None (a warning) when it cannot be read."""
    from roadeval.tasks.results.history import panel_history

    try:
        return panel_history(store, panel)
    except Exception as exc:
        run_logger(orchestrator).warning(
            "the panel's history could not be read for the drift check: %s: %s",
            type(exc).__name__,
            exc,
        )
        return None
