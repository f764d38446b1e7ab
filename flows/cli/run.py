"""The commands that start a run: `run`, `rescore`, `campaign` (a dry run, a budget) and `demo`;
what the command line sets over the panel file, the checks made before anything heavy is
imported, and the hand-over to `evaluate_panel` (what a run prints at its end: `run_end`)."""

from __future__ import annotations

import signal
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from roadeval.flows.cli.app import app, consoles, fail, interrupted

if TYPE_CHECKING:
    from roadeval.flows.panel.file import Panel


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
    # Answer shards on the nodes of this Ray cluster.
    answer_ray_address: str | None = None


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
    from roadeval.flows.panel.file import (
        PanelError,
        load_panel,
        with_answer_ray_address,
        with_bad_item_policy,
        with_budget_usd,
        with_dask_address,
        with_processes,
        with_ray_address,
    )
    from roadeval.flows.run.preflight import check_before_run
    from roadeval.storage.store import StoreError

    try:
        panel = load_panel(panel_path)
        if overrides.on_bad_item is not None:
            panel = with_bad_item_policy(panel, BadItemPolicy(overrides.on_bad_item))
        if overrides.ray_address is not None:
            panel = with_ray_address(panel, overrides.ray_address)
        if overrides.dask_address is not None:
            panel = with_dask_address(panel, overrides.dask_address)
        if overrides.answer_ray_address is not None:
            panel = with_answer_ray_address(panel, overrides.answer_ray_address)
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
    from roadeval.flows.prefect.api import start_temporary_prefect_api
    from roadeval.flows.run.warmup import import_in_background

    suites = (suite_module(e.name) for e in panel.suites)
    warming = import_in_background(
        (
            "roadeval.flows.prefect.flow",
            "roadeval.flows.run.execute",
            *dict.fromkeys(filter(None, suites)),
        )
    )
    # In this thread: the server is told to exit when the thread that started it ends.
    start_temporary_prefect_api()
    warming.join()
    # The CLI reports a failed run itself (file, line, field); Prefect's copy of the same error
    # as a traceback would bury that message. Kept off the terminal only: the run's log lines
    # still reach the Prefect API.
    from roadeval.flows.prefect.flow import quiet_prefect_run_logs_on_console

    quiet_prefect_run_logs_on_console()


def _warm_answer_workers(overrides: _Overrides) -> bool:
    """In the command's own process (`quick_exit.armed`), for an inline run that may call
    models: start the answer workers' server first of all, before the panel is even read, so
    that LiteLLM imports on a spare core while this process loads, compares and copies (see
    `worker_server.warm_server`). An embedding caller (a test, a notebook) keeps its small
    runs' calls in its own process. Returns whether it was started."""
    from roadeval.flows.run.quick_exit import armed
    from roadeval.flows.stages.orchestration import OrchestratorKind, choose

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
    from roadeval.flows.run.warmup import import_in_background
    from roadeval.flows.stages.orchestration import OrchestratorKind, choose
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
    on_ray = panel.answering.engine == "ray"
    if warmed and (one_process or on_ray or all(spec.is_baseline for spec in panel.models)):
        # The panel answers in this process alone (the offline baselines always are), or on
        # a Ray cluster's nodes: the server would import LiteLLM, and hold it, for nothing.
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
    from roadeval.flows.cli.run_end import end_stopped, print_estimate, print_finished
    from roadeval.flows.evaluate import evaluate_panel
    from roadeval.flows.run.quick_exit import keep_until_exit
    from roadeval.flows.run.summary import RunStopped
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
        end_stopped(stopped)
    except StoreError as exc:
        # A store that fails once the run is under way (it was writable at the start) fails
        # the run, as a full disk does: not bad input.
        fail(str(exc), 1)
    except (ItemError, SuiteSourceError, KeyError, ValueError) as exc:
        fail(exc.args[0] if exc.args else str(exc))
    if overrides.dry_run:
        print_estimate(consoles.out, summary)
        return
    print_finished(summary, overrides.strict)


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
AnswerRayAddressOption = Annotated[
    str | None,
    typer.Option(
        help="answer shards on the nodes of this existing Ray cluster (overrides the panel's "
        "answering); needs an s3:// store the nodes reach. Limits and budget hold over all"
    ),
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
    answer_ray_address: AnswerRayAddressOption = None,
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
            answer_ray_address=answer_ray_address,
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
    answer_ray_address: AnswerRayAddressOption = None,
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
            answer_ray_address=answer_ray_address,
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
    from roadeval.flows.panel.ref import bundled_path

    _run_panel(bundled_path("demo"), _Overrides(store, strict=strict, report=not no_report))
