"""A run's life, top-down: its id and start time, the checks before it (`preflight`), its
baseline, its suites loaded (one stage each) and the pairs of the panel that apply, then set up
(`setup`), executed (`execute`) and, finished, reported (`report`). The same code path under
Prefect and inline."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from roadeval.environment import tune_collector_for_run
from roadeval.flows.panel.file import Panel, with_reuse_for
from roadeval.flows.process.quick_exit import keep_until_exit
from roadeval.flows.record.parts import RunContext
from roadeval.flows.record.summary import RunSummary
from roadeval.flows.rerun.baseline import find_baseline
from roadeval.flows.rerun.continuation import horizon_of
from roadeval.flows.run.execute import execute_run
from roadeval.flows.run.preflight import check_before_run
from roadeval.flows.run.report import keep_report
from roadeval.flows.run.setup import Started, set_up
from roadeval.flows.stages.load import LOAD_SUITE, applicable
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
    store = check_before_run(panel, store_uri)
    # Before anything is loaded or asked: a baseline that cannot be one is bad input.
    baseline = find_baseline(store, panel, against)
    # A resume (the same command after a run that did not finish) keeps that run's horizon.
    horizon = horizon_of(store, panel.name, run_id, started)
    # The run's own log lines are chosen here, in the flow's thread (Prefect's run logger).
    logger = orchestrator.run_logger()
    loaded = [orchestrator.call(LOAD_SUITE, panel, i) for i in range(len(panel.suites))]
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
    summary = execute_run(run)
    if report:
        keep_report(summary, store, orchestrator, panel.name)
    return summary
