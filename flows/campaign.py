"""What `roadeval campaign` prints beyond a run's report: a dry run's estimate, and the block a
run stopped by its budget ends with (spent against the budget, what was not run, how to resume)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from roadeval.flows.progress import usd
from roadeval.flows.run_summary import RunSummary
from roadeval.tasks.results.manifest import RunManifest


def print_estimate(console: Console, summary: RunSummary) -> None:
    """A dry run's estimate per model and suite (as landed), and that nothing was called."""
    from roadeval.tasks.results.estimate import estimate_table

    console.print(estimate_table(summary.estimates))
    console.print(
        f"dry run [bold]{summary.run_id}[/bold] recorded planned in {escape(summary.store_uri)}: "
        "no model was called"
    )


def not_run_lines(manifest: RunManifest) -> list[str]:
    """Per suite and model, the items a stop left (never asked, or cut short)."""
    lines = []
    for entry in manifest.counts:
        left = entry.not_run + entry.interrupted
        if left:
            lines.append(
                f"{escape(entry.suite)} x {escape(entry.who)}: {left} of "
                f"{entry.items} items not run"
            )
    return lines


def out_of_budget_block(summary: RunSummary, message: str) -> str:
    """The block a budget stop ends with, as rich markup: one clear account and the way on."""
    totals = summary.manifest.totals
    budget = summary.budget
    lines = [f"[bold yellow]out of budget:[/bold yellow] {escape(message)}"]
    if budget is not None:
        lines.append(
            f"  spent {usd(budget.spent_usd)} of the {usd(budget.limit_usd)} budget "
            "(judge calls and retries included); no request was sent past it"
        )
    lines.append(
        f"  {totals.scored} items answered and landed; run {summary.run_id} recorded out_of_budget"
    )
    lines.extend(f"  {line}" for line in not_run_lines(summary.manifest))
    resume = (
        "  to resume: run the same command with a larger --budget-usd; answers already paid "
        "for are reused at no cost"
    )
    if budget is not None and budget.left_worst_usd is not None:
        resume += f", and what is left costs at most {usd(budget.left_worst_usd)}"
    lines.append(resume)
    return "\n".join(lines)
