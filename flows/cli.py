"""The `roadeval` command line: run a panel or the demo, run a campaign (dry run, budget), query
the store (`cli_store`), score predictions, check and render suites (`cli_suite_tools`)."""

from __future__ import annotations

import signal
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.markup import escape

from roadeval.flows.cli_app import app, consoles, fail, interrupted, printable

if TYPE_CHECKING:
    from roadeval.flows.panel_file import Panel
    from roadeval.flows.run_summary import RunStopped, RunSummary


class _Terminated(Exception):
    """SIGTERM before a run had set up its own graceful handling."""


def _raise_terminated(_signum: int, _frame: object) -> None:
    raise _Terminated


@dataclass(frozen=True)
class _Overrides:
    """What the command line sets over the panel file, and how the run goes."""

    store: str | None = None
    on_bad_item: str | None = None
    ray_address: str | None = None
    dask_address: str | None = None
    prefect: bool = False
    budget_usd: float | None = None
    dry_run: bool = False
    processes: int | None = None
    # Exit 1 when items could not be scored because their scorer raised.
    strict: bool = False
    # The baseline run (default: the panel's last finished run), and a rescore (no calls).
    against: str | None = None
    rescore: bool = False
    # Build a finished run's HTML report at its end.
    report: bool = True


def _run_panel(panel_path: Path, overrides: _Overrides) -> None:
    # Until the flow installs its graceful stop, SIGTERM ends the command as Ctrl-C does.
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        _run_panel_once(panel_path, overrides)
    except KeyboardInterrupt:
        interrupted("stopped by SIGINT before the run started; nothing was asked", 130)
    except _Terminated:
        interrupted("stopped by SIGTERM before the run started; nothing was asked", 143)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _checked_panel(panel_path: Path, overrides: _Overrides) -> Panel:
    """The panel, read and checked with what is quick to check (the store can be written,
    every key is set), before anything heavy is imported or started."""
    from roadeval.benchmarks.errors import BadItemPolicy
    from roadeval.flows.panel_file import (
        PanelError,
        load_panel,
        with_bad_item_policy,
        with_budget_usd,
        with_dask_address,
        with_processes,
        with_ray_address,
    )
    from roadeval.flows.preflight import check_before_run
    from roadeval.storage.store import StoreError

    try:
        panel = load_panel(panel_path)
        if overrides.on_bad_item is not None:
            panel = with_bad_item_policy(panel, BadItemPolicy(overrides.on_bad_item))
        if overrides.ray_address is not None:
            panel = with_ray_address(panel, overrides.ray_address)
        if overrides.dask_address is not None:
            panel = with_dask_address(panel, overrides.dask_address)
        if overrides.budget_usd is not None:
            panel = with_budget_usd(panel, overrides.budget_usd)
        if overrides.processes is not None:
            panel = with_processes(panel, overrides.processes)
        check_before_run(panel, overrides.store)
    except (PanelError, StoreError, ValueError) as exc:
        fail(str(exc))
    return panel


def _prepare_prefect(panel: Panel) -> None:
    """Start Prefect's temporary server (when no API is configured) while a thread imports the
    flow, the call path and the panel's suites; both are needed before the flow starts."""
    from roadeval.benchmarks.registry import suite_module
    from roadeval.flows.prefect_api import start_temporary_prefect_api
    from roadeval.flows.warmup import import_in_background

    suites = (suite_module(e.name) for e in panel.suites)
    warming = import_in_background(
        ("roadeval.flows.prefect_run", "roadeval.flows.run", *dict.fromkeys(filter(None, suites)))
    )
    # In this thread: the server is told to exit when the thread that started it ends.
    start_temporary_prefect_api()
    warming.join()
    # The CLI reports a failed run itself (file, line, field); Prefect's copy of the same error
    # as a traceback would bury that message. Kept off the terminal only: the run's log lines
    # still reach the Prefect API.
    from roadeval.flows.run_log import quiet_prefect_run_logs_on_console

    quiet_prefect_run_logs_on_console()


def _warm_answer_workers(overrides: _Overrides) -> bool:
    """In the command's own process (`quick_exit.armed`), for an inline run that may call
    models: start the answer workers' server first of all, before the panel is even read, so
    that LiteLLM imports on a spare core while this process loads, compares and copies (see
    `worker_server.warm_server`). An embedding caller (a test, a notebook) keeps its small
    runs' calls in its own process. Returns whether it was started."""
    from roadeval.flows.orchestration import OrchestratorKind, choose
    from roadeval.flows.quick_exit import armed

    if (
        not armed()
        or overrides.dry_run
        or overrides.rescore
        or (overrides.processes is not None and overrides.processes < 2)
    ):
        return False
    try:
        inline = choose(overrides.prefect) is OrchestratorKind.INLINE
    except ValueError:  # said where the run chooses, once its panel is read
        return False
    if not inline:
        return False
    from roadeval.tasks.shard.worker_server import warm_server

    return warm_server()


def _run_panel_once(panel_path: Path, overrides: _Overrides) -> None:
    from roadeval.flows.orchestration import OrchestratorKind, choose
    from roadeval.flows.warmup import import_in_background
    from roadeval.tasks.shard.worker_server import cool_server

    warmed = _warm_answer_workers(overrides)
    try:
        panel = _checked_panel(panel_path, overrides)
    except BaseException:
        # A bad panel ends the command now: not seconds later, when the server (which holds
        # its output open) would have imported LiteLLM.
        cool_server()
        raise
    one_process = panel.processes is not None and panel.processes < 2
    if warmed and (one_process or all(spec.is_baseline for spec in panel.models)):
        # The panel answers in this process alone (the offline baselines always are): the
        # server would import LiteLLM, and hold it in memory, for nothing.
        cool_server()
    try:
        kind = choose(overrides.prefect)
    except ValueError as exc:
        cool_server()
        fail(str(exc))
    store = overrides.store
    # The call path's modules, under way now, while suites load.
    import_in_background()
    from roadeval.benchmarks.errors import ItemError, SuiteSourceError
    from roadeval.flows.panel import RunStopped, evaluate_panel
    from roadeval.flows.quick_exit import keep_until_exit
    from roadeval.storage.store import StoreError

    try:
        if kind is OrchestratorKind.PREFECT:
            _prepare_prefect(panel)
        summary = evaluate_panel(
            panel,
            store,
            prefect=kind is OrchestratorKind.PREFECT,
            dry_run=overrides.dry_run,
            against=overrides.against,
            rescore=overrides.rescore,
            report=overrides.report,
        )
        keep_until_exit(summary)
    except RunStopped as stopped:
        _end_stopped(stopped)
    except StoreError as exc:
        # A store that fails once the run is under way (it was writable at the start) fails
        # the run, as a full disk does: not bad input.
        fail(str(exc), 1)
    except (ItemError, SuiteSourceError, KeyError, ValueError) as exc:
        fail(exc.args[0] if exc.args else str(exc))
    if overrides.dry_run:
        from roadeval.flows.campaign import print_estimate

        print_estimate(consoles.out, summary)
        return
    _report(summary, overrides.strict)


def _report(summary: RunSummary, strict: bool = False) -> None:
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
    consoles.out.print(f"run [bold]{summary.run_id}[/bold] landed in {summary.store_uri}")
    consoles.out.print(f"manifest: {summary.store_uri.rstrip('/')}/{summary.manifest_key}")
    if summary.report is not None:
        consoles.out.print(f"report: {printable(summary.report)}")
    elif summary.report_error is not None:
        consoles.err.print(
            "[yellow]warning: the run's report could not be built (the run is landed; "
            f"`roadeval report {summary.run_id}` tries again): "
            f"{printable(summary.report_error)}[/yellow]"
        )
    for line in _scorer_error_lines(summary):
        consoles.err.print(f"[yellow]warning: {line}[/yellow]")
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
    from roadeval.flows.cost_report import cost_lines, cost_table
    from roadeval.storage.store import StoreError, open_store

    try:
        lines = cost_lines(open_store(summary.store_uri), summary.run_id)
    except (StoreError, OSError) as exc:
        consoles.err.print(f"[red]the cost table could not be read back: {printable(str(exc))}")
        return
    consoles.out.print(cost_table(lines, consoles.out.width))


def _end_stopped(stopped: RunStopped) -> NoReturn:
    """Report a run that stopped before its end, and exit with the stop's code."""
    from roadeval.flows.campaign import out_of_budget_block
    from roadeval.tasks.calls.budget import OUT_OF_BUDGET

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


PanelOption = Annotated[Path, typer.Option("--panel", "-p", help="panel YAML file")]
RunStoreOption = Annotated[
    str | None, typer.Option(help="store root: a folder or s3://bucket/prefix")
]
OnBadItemOption = Annotated[
    str | None,
    typer.Option(help="error | skip: what to do with malformed rows (overrides the panel)"),
]
RayAddressOption = Annotated[
    str | None,
    typer.Option(help="score heavy items on this existing Ray cluster (overrides the panel)"),
]
DaskAddressOption = Annotated[
    str | None,
    typer.Option(help="draw point-cloud views on this Dask scheduler (overrides the panel)"),
]
PrefectOption = Annotated[
    bool,
    typer.Option(
        "--prefect",
        help="run as the Prefect flow evaluate-panel even with no PREFECT_API_URL (starts "
        "Prefect's temporary server); with PREFECT_API_URL set, Prefect is used anyway",
    ),
]

ProcessesOption = Annotated[
    int | None,
    typer.Option(
        "--processes",
        help="answer in this many worker processes (0: in this one; at most 256); by default "
        "one per core when the run has 5,000 or more requests to send. Limits and budget hold "
        "over all",
    ),
]


StrictOption = Annotated[
    bool,
    typer.Option(
        "--strict",
        help="exit 1 when an item could not be scored because its suite's scorer raised (the "
        "run still finishes and lands everything else; without it: exit 0 and a warning)",
    ),
]


NoReportOption = Annotated[
    bool,
    typer.Option(
        "--no-report",
        help="do not build the run's HTML report at its end (`roadeval report` builds it later)",
    ),
]


AgainstOption = Annotated[
    str | None,
    typer.Option(
        "--against",
        help="the baseline run to compare with and reuse (a finished run of the same panel); "
        "default: the panel's last finished run in the store",
    ),
]


def _check_on_bad_item(on_bad_item: str | None) -> None:
    if on_bad_item is not None and on_bad_item not in ("error", "skip"):
        fail(f"--on-bad-item must be 'error' or 'skip', not {on_bad_item!r}")


@app.command()
def run(
    panel: PanelOption,
    store: RunStoreOption = None,
    on_bad_item: OnBadItemOption = None,
    ray_address: RayAddressOption = None,
    dask_address: DaskAddressOption = None,
    prefect: PrefectOption = False,
    processes: ProcessesOption = None,
    strict: StrictOption = False,
    against: AgainstOption = None,
    no_report: NoReportOption = False,
) -> None:
    """Evaluate every suite of a panel with every model of it: a rerun of the panel's last
    finished run asks and scores only what changed since (see `roadeval changes`)."""
    _check_on_bad_item(on_bad_item)
    _run_panel(
        panel,
        _Overrides(
            store,
            on_bad_item,
            ray_address,
            dask_address,
            prefect,
            processes=processes,
            strict=strict,
            against=against,
            report=not no_report,
        ),
    )


@app.command()
def rescore(
    panel: PanelOption,
    store: RunStoreOption = None,
    on_bad_item: OnBadItemOption = None,
    ray_address: RayAddressOption = None,
    dask_address: DaskAddressOption = None,
    prefect: PrefectOption = False,
    strict: StrictOption = False,
    against: AgainstOption = None,
    no_report: NoReportOption = False,
) -> None:
    """Score every stored answer of the panel again (after a scorer fix), calling no model,
    the judge included: exit 2 if the store lacks an answer the panel needs."""
    _check_on_bad_item(on_bad_item)
    _run_panel(
        panel,
        _Overrides(
            store,
            on_bad_item,
            ray_address,
            dask_address,
            prefect,
            strict=strict,
            against=against,
            rescore=True,
            report=not no_report,
        ),
    )


@app.command()
def campaign(
    panel: PanelOption,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="plan and estimate the cost (landed, printed per model and suite); call no model",
        ),
    ] = False,
    budget_usd: Annotated[
        float | None,
        typer.Option(
            "--budget-usd",
            help="a hard cap in USD, judge and retries included (overrides the panel's "
            "budget_usd); the run stops before a request could cross it, exit code 3",
        ),
    ] = None,
    store: RunStoreOption = None,
    on_bad_item: OnBadItemOption = None,
    ray_address: RayAddressOption = None,
    dask_address: DaskAddressOption = None,
    prefect: PrefectOption = False,
    processes: ProcessesOption = None,
    strict: StrictOption = False,
    against: AgainstOption = None,
    no_report: NoReportOption = False,
) -> None:
    """A run with cost controls: a dry-run estimate, or a hard dollar budget."""
    _check_on_bad_item(on_bad_item)
    _run_panel(
        panel,
        _Overrides(
            store,
            on_bad_item,
            ray_address,
            dask_address,
            prefect,
            budget_usd,
            dry_run=dry_run,
            processes=processes,
            strict=strict,
            against=against,
            report=not no_report,
        ),
    )


@app.command()
def demo(
    store: Annotated[
        str | None, typer.Option(help="store root: a folder or s3://bucket/prefix")
    ] = None,
    strict: StrictOption = False,
    no_report: NoReportOption = False,
) -> None:
    """Run the bundled demo panel: generated suites against the offline baselines."""
    panel = files("roadeval.flows").joinpath("panels/demo.yaml")
    _run_panel(Path(str(panel)), _Overrides(store, strict=strict, report=not no_report))


def main() -> None:
    """The console script: the app, its output guarded (`flows.cli_output`: output that cannot
    be written ends any command non-zero, without a traceback), then the quick exit
    (`flows.quick_exit`), which skips freeing a finished run's objects; an embedding caller of
    `app` exits as usual."""
    from roadeval.flows.cli_output import OutputLost, guard_stdout
    from roadeval.flows.quick_exit import arm, disarm, leave

    arm()
    output = guard_stdout()
    try:
        app()
    except SystemExit as exc:
        leave(output.exit_code(exc.code))
    except OutputLost:
        leave(output.exit_code(None))
    disarm()


# The commands over the store and over a suite's own files register themselves on the same app.
from roadeval.flows import (  # noqa: E402, F401
    cli_changes,
    cli_deploy,
    cli_report,
    cli_store,
    cli_suite_tools,
)

if __name__ == "__main__":
    main()
