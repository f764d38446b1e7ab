"""Evaluating a panel: every suite x every model, sharded, landed, summarised.

`evaluate_panel` chooses who runs the stages (`flows.stages.orchestration`): the Prefect flow
`evaluate-panel` when a Prefect API is configured or asked for, else this process's threads.
Either way the run is `run.start.run_panel`: one code path.

A run is recorded from its first moment (see `run.record`). Ctrl-C or SIGTERM stops it cleanly:
no new request starts, what was answered lands, the run is recorded `interrupted`, and the same
command resumes it without paying twice. A store that can no longer keep answers stops it the
same way, recorded `failed`; a budget that would be crossed, recorded `out_of_budget`.
"""

from __future__ import annotations

from roadeval.flows.panel.file import Panel
from roadeval.flows.run.start import run_panel
from roadeval.flows.run.summary import RunSummary
from roadeval.flows.stages.orchestration import InlineOrchestrator, OrchestratorKind, choose


def evaluate_panel(
    panel: Panel,
    store_uri: str | None = None,
    *,
    prefect: bool = False,
    dry_run: bool = False,
    against: str | None = None,
    rescore: bool = False,
    report: bool = True,
) -> RunSummary:
    """Run the panel under Prefect (configured, or `prefect=True`) or inline; `dry_run` plans
    and estimates without calling any model; `against` names the baseline run (default: the
    panel's last finished run); `rescore` scores the stored answers again, asking no model;
    `report` builds a finished run's HTML report at its end."""
    if choose(prefect) is OrchestratorKind.PREFECT:
        from roadeval.flows.prefect.flow import evaluate_panel_flow, summary_of

        state = evaluate_panel_flow(
            panel, store_uri, dry_run, against, rescore, report, return_state=True
        )
        return summary_of(state)
    inline = InlineOrchestrator()
    try:
        return run_panel(
            panel,
            store_uri,
            inline,
            dry_run=dry_run,
            against=against,
            rescore=rescore,
            report=report,
        )
    finally:
        inline.close()
