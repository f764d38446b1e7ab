"""What a run's command prints at its end: a finished run's leaderboards, costs and warnings and
what it took from its baseline run; a dry run's estimate; a stopped run's one line, or the block
a run stopped by its budget ends with (spent against the budget, what was not run, how to
resume); and the exit code each ends with."""

from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from roadeval.flows.cli.app import consoles, fail, interrupted, printable
from roadeval.flows.run.progress import usd
from roadeval.flows.run.summary import RunSummary
from roadeval.tasks.results.manifest import RunManifest

if TYPE_CHECKING:
    from roadeval.flows.run.summary import RunStopped


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


def print_finished(summary: RunSummary, strict: bool = False) -> None:
    """A finished run's end: its leaderboards, costs and warnings, what it took from its
    baseline run, where it landed; exit 1 when items ended in model errors (or, `strict`, were
    not scored)."""
    from roadeval.tasks.results.report import print_report

    print_report(consoles.out, summary.metrics, summary.manifest, pairs=summary.pairs)
    _print_costs(summary)
    for suite in summary.manifest.suites:
        if suite.unknown_fields_message:
            consoles.err.print(f"[yellow]warning: {escape(suite.unknown_fields_message)}[/yellow]")
        if suite.skipped_items:
            consoles.err.print(
                f"[yellow]{suite.name}: {len(suite.skipped_items)} bad rows skipped "
                f"(listed in the manifest); first: {escape(suite.skipped_items[0])}[/yellow]"
            )
    for line in _rerun_lines(summary):
        consoles.out.print(line)
    consoles.out.print(
        f"run [bold]{summary.run_id}[/bold] landed in {summary.store_uri}", soft_wrap=True
    )
    consoles.out.print(
        f"manifest: {summary.store_uri.rstrip('/')}/{summary.manifest_key}", soft_wrap=True
    )
    if summary.report is not None:
        consoles.out.print(f"report: {printable(summary.report)}", soft_wrap=True)
    elif summary.report_error is not None:
        consoles.err.print(
            "[yellow]warning: the run's report could not be built (the run is landed; "
            f"`roadeval report {summary.run_id}` tries again): "
            f"{printable(summary.report_error)}[/yellow]"
        )
    for line in _scorer_error_lines(summary):
        consoles.err.print(f"[yellow]warning: {line}[/yellow]")
    print_alarms(summary)
    compaction = summary.manifest.compaction
    if compaction is not None and compaction.error is not None:
        consoles.err.print(
            f"[yellow]warning: the run's parts were not compacted (everything is landed; "
            f"readers of this run read its many small parts): {escape(compaction.error)}[/yellow]"
        )
    if summary.n_errors:
        consoles.err.print(
            f"[red]{summary.n_errors} items ended in model errors; see above and the manifest[/red]"
        )
        raise typer.Exit(code=1)
    if strict and summary.n_scorer_errors:
        consoles.err.print(
            f"[red]--strict: {summary.n_scorer_errors} items could not be scored (their scorer "
            "raised)[/red]"
        )
        raise typer.Exit(code=1)


def _rerun_lines(summary: RunSummary) -> list[str]:
    """What the run took from its baseline run and what changed since (a first run: none)."""
    manifest = summary.manifest
    baseline = manifest.baseline
    if baseline is None:
        return []
    totals = manifest.totals
    kinds: dict[str, int] = {}
    for counts in baseline.changes.values():
        for kind, n in counts.items():
            kinds[kind] = kinds.get(kind, 0) + n
    moved = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()) if kind != "unchanged")
    lines = [
        f"compared with run {printable(baseline.run_id)} ({printable(baseline.chosen_by)}): "
        f"items {moved or 'all unchanged'}; {totals.scores_reused} items' scores copied, "
        f"{totals.calls_made}"
    ]
    if baseline.rescored_suites:
        lines.append(
            "scored again from the stored answers (scoring changed"
            f"{' or a rescore' if manifest.rescore else ''}): "
            + ", ".join(printable(s) for s in baseline.rescored_suites)
        )
    lines.append(f"what moved: roadeval changes {printable(summary.run_id)}")
    return lines


def _scorer_error_lines(summary: RunSummary) -> list[str]:
    """Per suite x model whose scorer raised: how many items it left unscored, and the first
    error (the run finished; `--strict` makes that exit 1)."""
    from roadeval.storage.records import EVERY_METRIC

    lines = []
    for pair in summary.manifest.counts:
        if pair.scorer_errors:
            first = pair.unscored_metrics.get(EVERY_METRIC)
            reason = first.first_reason if first is not None else "scorer_error"
            lines.append(
                f"{printable(pair.suite)} x {printable(pair.who)}: {pair.scorer_errors} items "
                f"not scored, their scorer raised; first: {printable(reason)}"
            )
    return lines


def _print_costs(summary: RunSummary) -> None:
    """The final cost table, read back from what the run landed."""
    from roadeval.flows.cli.costs import cost_lines, cost_table
    from roadeval.storage.store import StoreError, open_store

    try:
        lines = cost_lines(open_store(summary.store_uri), summary.run_id)
    except (StoreError, OSError) as exc:
        consoles.err.print(f"[red]the cost table could not be read back: {printable(str(exc))}")
        return
    consoles.out.print(cost_table(lines, consoles.out.width))


def print_alarms(summary: RunSummary) -> None:
    """What the run's alarms did (`run.alarms`): sent, or a warning for each not taken."""
    for line in summary.alarms:
        if line.startswith("warning: "):
            consoles.err.print(f"[yellow]{printable(line)}[/yellow]", soft_wrap=True)
        else:
            consoles.out.print(printable(line), soft_wrap=True)


def end_stopped(stopped: RunStopped) -> NoReturn:
    """Report a run that stopped before its end, and exit with the stop's code."""
    from roadeval.tasks.calls.budget import OUT_OF_BUDGET

    print_alarms(stopped.summary)
    status = stopped.reason.status
    if status == OUT_OF_BUDGET:
        _print_costs(stopped.summary)
        consoles.err.print(out_of_budget_block(stopped.summary, printable(stopped.reason.message)))
        raise typer.Exit(code=stopped.reason.exit_code)
    end = interrupted if status == "interrupted" else fail
    end(_stopped_message(stopped), stopped.reason.exit_code)


def _stopped_message(stopped: RunStopped) -> str:
    """One line: why the run stopped, what it kept, and how to go on. Its counts are the run's
    last record's (what landed, and what is left), or it says that record could not be
    written."""
    summary = stopped.summary
    totals = summary.manifest.totals
    kept = f"{totals.answered} items answered and landed"
    if totals.errors:
        kept += f", {totals.errors} ended in model errors"
    kept += f", {totals.left} left"
    if totals.not_landed:
        kept += f" ({totals.not_landed} of them in shards that did not land)"
    run = f"run {summary.run_id} recorded {stopped.reason.status}"
    if summary.record_error is not None:
        run = (
            f"run {summary.run_id} could not record its end ({summary.record_error}): `runs` "
            "will read it died"
        )
    if stopped.reason.status == "interrupted":
        return (
            f"{stopped.reason.message}: {kept}; {run}. Run the same command again to resume "
            "(answers already paid for are reused)."
        )
    return f"{stopped.reason.message}; {_after_stop(summary.in_flight_at_stop)}. {kept}; {run}."


def _after_stop(in_flight: int | None) -> str:
    """What the model calls did once the run stopped: none started; those in flight (counted
    over every process of the run) had the stop's grace to end."""
    from roadeval.tasks.calls.stopping import grace_s

    if not in_flight:
        return "no model request started after that, and none was in flight"
    requests = "request" if in_flight == 1 else "requests"
    return (
        f"no model request started after that ({in_flight} {requests} in flight had up to "
        f"{grace_s():g} s to finish)"
    )
