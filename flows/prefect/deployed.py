"""The flows that deployments run: a panel named by a path or URI (`flows.panel.ref`), evaluated
as `roadeval run` evaluates it, as the flow run Prefect started: the same store layout, `runs`
row (orchestrator prefect, with the flow run id and the deployment's name) and summary, and a
rerun of the panel's last finished run (only what changed is asked).

`evaluate-panel` serves the scheduled full panel and the on-demand rerun; `campaign` takes its
budget as a required parameter. Their parameters are plain values, as a deployment stores them.
"""

from __future__ import annotations

from typing import Any

from prefect import flow
from prefect.states import Failed, State

from roadeval.flows.panel.file import with_budget_usd, with_reuse_for
from roadeval.flows.panel.ref import load_panel_ref
from roadeval.flows.prefect.flow import run_in_flow
from roadeval.flows.run.summary import RunSummary


def outcome(summary: RunSummary) -> dict[str, Any]:
    """What the flow run returns: which run it was, where it landed, what it did."""
    totals = summary.manifest.totals
    return {
        "run_id": summary.run_id,
        "status": summary.status,
        "store": summary.store_uri,
        "manifest": summary.manifest_key,
        "items": totals.items,
        "scored": totals.scored,
        "calls": totals.calls,
        "errors": totals.errors,
        "cost_usd": totals.cost_usd,
        "report": summary.report,
    }


def _evaluate(
    panel: str,
    store: str | None,
    budget_usd: float | None,
    *,
    against: str | None = None,
    dry_run: bool = False,
    report: bool = True,
    reuse_for: str | None = None,
) -> dict[str, Any] | State:
    from roadeval.flows.run.warmup import import_in_background

    # LiteLLM takes seconds to import: under way while the panel and its suites load.
    import_in_background()
    loaded = with_reuse_for(load_panel_ref(panel), reuse_for)
    if budget_usd is not None:
        loaded = with_budget_usd(loaded, budget_usd, "budget_usd")
    summary = run_in_flow(loaded, store, dry_run=dry_run, against=against, report=report)
    if not isinstance(summary, RunSummary):
        return summary  # cancelled: the flow run ends Cancelled
    result = outcome(summary)
    if summary.n_errors:
        # As `roadeval run` exits 1: the run finished and landed, but some answers are errors.
        return Failed(
            message=f"run {summary.run_id} finished with {summary.n_errors} items ended in "
            "model errors; see its run-health artifact and its manifest",
            data=result,
        )
    return result


@flow(name="evaluate-panel", log_prints=False)
def evaluate_panel_file(
    panel: str,
    store: str | None = None,
    budget_usd: float | None = None,
    against: str | None = None,
    report: bool = True,
    reuse_for: str | None = None,
) -> dict[str, Any] | State:
    """Evaluate the panel at `panel` (a path, file:// or s3:// URI, or bundled:NAME) in `store`
    (default: the panel's, else ROADEVAL_STORE, else ./roadeval-data), compared with the
    panel's last finished run (or the run `against` names); `budget_usd` caps its spending;
    `report` builds the finished run's HTML report in the store; `reuse_for` is how long a
    stored answer of a model called over the network may be reused where neither its entry
    nor the panel says (the scheduled deployment's `never`; unset: forever)."""
    return _evaluate(panel, store, budget_usd, against=against, report=report, reuse_for=reuse_for)


@flow(name="campaign", log_prints=False)
def run_campaign(
    panel: str,
    budget_usd: float,
    store: str | None = None,
    dry_run: bool = False,
    report: bool = True,
) -> dict[str, Any] | State:
    """A cost-controlled run of the panel at `panel`: it stops before a request could cross
    `budget_usd` (judge and retries included); `dry_run` plans and estimates, calling no model;
    `report` builds the finished run's HTML report in the store."""
    return _evaluate(panel, store, budget_usd, dry_run=dry_run, report=report)
