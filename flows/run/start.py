"""Starting a run: its id and start time, the store checked, the suites loaded (one stage each),
then `flows.run.execute` for the rest. The same code path under Prefect and inline."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from roadeval.environment import tune_collector_for_run
from roadeval.flows.panel.file import Panel, with_reuse_for
from roadeval.flows.rerun.baseline import find_baseline
from roadeval.flows.rerun.continuation import horizon_of
from roadeval.flows.run.preflight import check_before_run
from roadeval.flows.run.report import keep_report
from roadeval.flows.run.summary import RunSummary
from roadeval.flows.stages.load import LOAD_SUITE
from roadeval.flows.stages.orchestration import Orchestrator


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
    loaded = [orchestrator.call(LOAD_SUITE, panel, entry) for entry in panel.suites]
    # The gateway (LiteLLM) only now: the CLI has been importing it in the background meanwhile.
    from roadeval.flows.run.execute import execute_run

    summary = execute_run(
        run_id,
        started,
        panel,
        store,
        loaded,
        orchestrator,
        dry_run,
        baseline,
        rescore,
        report,
        horizon=horizon,
    )
    if report:
        keep_report(summary, store, orchestrator, panel)
    return summary
