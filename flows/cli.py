"""The `roadeval` command line: run a panel or the demo, query the store, score predictions,
check and render suites."""

from __future__ import annotations

import csv
import json
import logging
import signal
import sys
from dataclasses import dataclass
from enum import StrEnum
from importlib.resources import files
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

app = typer.Typer(
    help="Evaluate multimodal models on transportation benchmarks.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def _width(stream: object) -> int | None:
    # Piped output (CI logs, files) gets wide tables instead of rich's 80-column default.
    isatty = getattr(stream, "isatty", None)
    return None if isatty is not None and isatty() else 200


class _Consoles:
    """Consoles made at print time, so they follow whatever stdout/stderr are then."""

    @property
    def out(self) -> Console:
        return Console(width=_width(sys.stdout))

    @property
    def err(self) -> Console:
        return Console(stderr=True, width=_width(sys.stderr))


_consoles = _Consoles()


def _fail(message: str, code: int = 2) -> NoReturn:
    _consoles.err.print(f"[bold red]error:[/bold red] {_printable(message)}")
    raise typer.Exit(code=code)


def _interrupted(message: str, code: int) -> NoReturn:
    _consoles.err.print(f"[bold yellow]interrupted:[/bold yellow] {_printable(message)}")
    raise typer.Exit(code=code)


def _printable(message: str) -> str:
    """A message as the terminal gets it: any secret of the environment redacted, and rich's
    markup characters escaped (a file name or a reply may hold brackets)."""
    from roadeval.tasks.secrets import Redactor

    return escape(Redactor.from_environment().text(message))


class _Terminated(Exception):
    """SIGTERM before a run had set up its own graceful handling."""


def _raise_terminated(_signum: int, _frame: object) -> None:
    raise _Terminated


@dataclass(frozen=True)
class _Overrides:
    """What the command line sets over the panel file."""

    store: str | None = None
    on_bad_item: str | None = None
    ray_address: str | None = None
    dask_address: str | None = None


def _run_panel(panel_path: Path, overrides: _Overrides) -> None:
    # Until the flow installs its graceful stop, SIGTERM ends the command as Ctrl-C does.
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        _run_panel_once(panel_path, overrides)
    except KeyboardInterrupt:
        _interrupted("stopped by SIGINT before the run started; nothing was asked", 130)
    except _Terminated:
        _interrupted("stopped by SIGTERM before the run started; nothing was asked", 143)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _checked_panel(panel_path: Path, overrides: _Overrides) -> Any:
    """The panel, read and checked with what is quick to check (the store can be written,
    every key is set), before anything heavy is imported or started."""
    from roadeval.benchmarks.errors import BadItemPolicy
    from roadeval.flows.panel_file import (
        PanelError,
        load_panel,
        with_bad_item_policy,
        with_dask_address,
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
        check_before_run(panel, overrides.store)
    except (PanelError, StoreError, ValueError) as exc:
        _fail(str(exc))
    return panel


def _run_panel_once(panel_path: Path, overrides: _Overrides) -> None:
    panel = _checked_panel(panel_path, overrides)
    store = overrides.store
    # Heavy imports (Prefect, LiteLLM) only when a run starts, so `--help` stays fast.
    from roadeval.benchmarks.errors import ItemError, SuiteSourceError
    from roadeval.flows.panel import RunStopped, evaluate_panel
    from roadeval.flows.prefect_api import start_temporary_prefect_api
    from roadeval.storage.store import StoreError
    from roadeval.tasks.report import print_report

    # The CLI reports a failed run itself (file, line, field); Prefect's copy of the same error
    # as a traceback would bury that message.
    for name in ("prefect.flow_runs", "prefect.task_runs"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    try:
        start_temporary_prefect_api()
        summary = evaluate_panel(panel, store)
    except RunStopped as stopped:
        end = _interrupted if stopped.reason.status == "interrupted" else _fail
        end(_stopped_message(stopped), stopped.reason.exit_code)
    except StoreError as exc:
        # A store that fails once the run is under way (it was writable at the start) fails
        # the run, as a full disk does: not bad input.
        _fail(str(exc), 1)
    except (ItemError, SuiteSourceError, KeyError, ValueError) as exc:
        _fail(exc.args[0] if exc.args else str(exc))
    print_report(_consoles.out, summary.metrics, summary.manifest)
    for suite in summary.manifest["suites"]:
        if suite["unknown_fields_message"]:
            _consoles.err.print(
                f"[yellow]warning: {escape(suite['unknown_fields_message'])}[/yellow]"
            )
        if suite["skipped_items"]:
            _consoles.err.print(
                f"[yellow]{suite['name']}: {len(suite['skipped_items'])} bad rows skipped "
                f"(listed in the manifest); first: {escape(suite['skipped_items'][0])}[/yellow]"
            )
    _consoles.out.print(f"run [bold]{summary.run_id}[/bold] landed in {summary.store_uri}")
    _consoles.out.print(f"manifest: {summary.store_uri.rstrip('/')}/{summary.manifest_key}")
    if summary.n_errors:
        _consoles.err.print(
            f"[red]{summary.n_errors} items ended in model errors; see above and the manifest[/red]"
        )
        raise typer.Exit(code=1)


def _stopped_message(stopped: Any) -> str:
    """One line: why the run stopped, what it kept, and how to go on."""
    totals = stopped.summary.manifest["totals"]
    left = totals["interrupted"] + totals["not_run"]
    kept = f"{totals['scored']} items answered and landed, {left} left"
    run = f"run {stopped.summary.run_id} recorded {stopped.reason.status}"
    if stopped.reason.status == "interrupted":
        return (
            f"{stopped.reason.message}: {kept}; {run}. Run the same command again to resume "
            "(answers already paid for are reused)."
        )
    return f"{stopped.reason.message}; no further model calls were made. {kept}; {run}."


@app.command()
def run(
    panel: Annotated[Path, typer.Option("--panel", "-p", help="panel YAML file")],
    store: Annotated[
        str | None, typer.Option(help="store root: a folder or s3://bucket/prefix")
    ] = None,
    on_bad_item: Annotated[
        str | None,
        typer.Option(help="error | skip: what to do with malformed rows (overrides the panel)"),
    ] = None,
    ray_address: Annotated[
        str | None,
        typer.Option(help="score heavy items on this existing Ray cluster (overrides the panel)"),
    ] = None,
    dask_address: Annotated[
        str | None,
        typer.Option(help="draw point-cloud views on this Dask scheduler (overrides the panel)"),
    ] = None,
) -> None:
    """Evaluate every suite of a panel with every model of it."""
    if on_bad_item is not None and on_bad_item not in ("error", "skip"):
        _fail(f"--on-bad-item must be 'error' or 'skip', not {on_bad_item!r}")
    _run_panel(panel, _Overrides(store, on_bad_item, ray_address, dask_address))


@app.command()
def demo(
    store: Annotated[
        str | None, typer.Option(help="store root: a folder or s3://bucket/prefix")
    ] = None,
) -> None:
    """Run the bundled demo panel: generated suites against the offline baselines."""
    panel = files("roadeval.flows").joinpath("panels/demo.yaml")
    _run_panel(Path(str(panel)), _Overrides(store))


class OutputFormat(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"


StoreOption = Annotated[
    str | None, typer.Option("--store", help="store root: a folder or s3://bucket/prefix")
]


@app.command()
def query(
    sql: Annotated[
        str,
        typer.Argument(
            help="read-only SQL over the views items, responses, parses, scores, metrics, pareto, "
            "runs, run_events, costs"
        ),
    ],
    store: StoreOption = None,
    format: Annotated[OutputFormat, typer.Option("--format", "-f")] = OutputFormat.table,
    include_unlanded: Annotated[
        bool,
        typer.Option(help="also show parts that no landing published (left by a crashed run)"),
    ] = False,
) -> None:
    """Query the store with DuckDB (read-only)."""
    columns, rows = _query(store, sql, include_unlanded)
    _print_rows(columns, rows, format)


@app.command()
def runs(
    store: StoreOption = None,
    format: Annotated[OutputFormat, typer.Option("--format", "-f")] = OutputFormat.table,
) -> None:
    """List the store's runs: running, finished, failed, interrupted, or died (no heartbeat)."""
    sql = (
        "select run_id, status, started_at, ended_at, panel, n_items, n_scored, n_calls, n_cached, "
        "n_errors, n_interrupted + n_not_run as n_unfinished, cost_usd, message "
        "from runs order by started_at"
    )
    columns, rows = _query(store, sql, False)
    _print_rows(columns, rows, format)


def _query(
    store: str | None, sql: str, include_unlanded: bool
) -> tuple[list[str], list[tuple[Any, ...]]]:
    import duckdb

    from roadeval.storage.catalog import QueryRefused, check_read_only
    from roadeval.storage.catalog import query as run_query
    from roadeval.storage.store import StoreError, open_store

    try:
        check_read_only(sql)
        opened = open_store(store)
        if not opened.is_present():
            _fail(f"no roadeval store at {opened.uri}: nothing has been landed there")
        return run_query(opened, sql, include_unlanded=include_unlanded)
    except QueryRefused as exc:
        _fail(str(exc))
    except duckdb.Error as exc:
        _fail(f"query failed: {exc}")
    except (StoreError, ValueError) as exc:
        _fail(str(exc))


def _print_rows(columns: list[str], rows: list[tuple[Any, ...]], format: OutputFormat) -> None:
    if format is OutputFormat.json:
        records = [dict(zip(columns, row, strict=True)) for row in rows]
        sys.stdout.write(json.dumps(records, default=str, ensure_ascii=False, indent=2) + "\n")
    elif format is OutputFormat.csv:
        writer = csv.writer(sys.stdout)
        writer.writerow(columns)
        writer.writerows(rows)
    else:
        table = Table(*columns)
        for row in rows:
            table.add_row(*("" if v is None else str(v) for v in row))
        _consoles.out.print(table)


@app.command("score-predictions")
def score_predictions(
    suite: Annotated[str, typer.Option(help="suite name, e.g. roadbench or tbbench")],
    labels: Annotated[Path, typer.Option(help="the release's label file")],
    predictions: Annotated[Path, typer.Option(help="a prediction file in the release's format")],
    task: Annotated[
        str | None, typer.Option(help="task number or code, where the suite needs it")
    ] = None,
    images: Annotated[
        Path | None, typer.Option(help="image folder (RoadBench task 3 reads sizes)")
    ] = None,
    reparse: Annotated[
        bool, typer.Option(help="also parse raw answers with roadeval's parser")
    ] = False,
) -> None:
    """Score a released prediction file exactly as the release's scripts do; prints JSON."""
    from roadeval.benchmarks.registry import get_suite

    for path in (labels, predictions):
        if not path.exists():
            _fail(f"{path}: no such file")
    try:
        result = get_suite(suite).score_predictions(
            labels=labels, predictions=predictions, task=task, images=images, reparse=reparse
        )
    except (KeyError, ValueError, NotImplementedError) as exc:
        _fail(exc.args[0] if exc.args else str(exc))
        return
    sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False, default=float) + "\n")


class ReportFormat(StrEnum):
    table = "table"
    json = "json"


@app.command()
def qc(
    suite: Annotated[str, typer.Argument(help="suite name, e.g. trip")],
    source: Annotated[Path, typer.Option("--source", help="the suite's source folder or file")],
    format: Annotated[ReportFormat, typer.Option("--format", "-f")] = ReportFormat.table,
) -> None:
    """Check a suite's items against its quality rules; exit 1 when a rule fails."""
    from roadeval.benchmarks.errors import SuiteSourceError
    from roadeval.benchmarks.registry import get_suite
    from roadeval.tasks.quality_table import quality_table, verdict

    if not source.exists():
        _fail(f"{source}: no such file or folder")
    try:
        report = get_suite(suite).quality_report(source)
    except (KeyError, SuiteSourceError, ValueError) as exc:
        _fail(exc.args[0] if exc.args else str(exc))
    if report is None:
        _consoles.out.print(f"suite {escape(suite)!r} has no quality rules: nothing to check")
        return
    if format is ReportFormat.json:
        sys.stdout.write(json.dumps(report.as_dict(), ensure_ascii=False, indent=2) + "\n")
    else:
        _consoles.out.print(quality_table(report))
        _consoles.out.print(verdict(report))
    if not report.passed:
        raise typer.Exit(code=1)


@app.command()
def render(
    suite: Annotated[str, typer.Argument(help="suite name, e.g. trip")],
    source: Annotated[Path, typer.Option("--source", help="the suite's source folder or file")],
    store: Annotated[
        str | None, typer.Option(help="store root: a folder or s3://bucket/prefix")
    ] = None,
    dask_address: Annotated[
        str | None, typer.Option(help="draw on this Dask scheduler (default: a LocalCluster)")
    ] = None,
    option: Annotated[
        list[str] | None, typer.Option(help="a suite option, KEY=VALUE (YAML), repeatable")
    ] = None,
) -> None:
    """Draw a suite's renders (point-cloud views) ahead of a run, into the store and the media
    cache, so that the run draws nothing; exit 2 naming each input that cannot be drawn."""
    import yaml

    from roadeval.benchmarks.errors import SuiteSourceError
    from roadeval.benchmarks.registry import get_suite
    from roadeval.storage.store import StoreError, open_store
    from roadeval.tasks.render import render_items
    from roadeval.tasks.render_cluster import RenderConfig

    options: dict[str, Any] = {}
    for entry in option or []:
        key, sep, value = entry.partition("=")
        if not sep or not key:
            _fail(f"--option {entry!r}: expected KEY=VALUE")
        options[key] = yaml.safe_load(value)
    if not source.exists():
        _fail(f"{source}: no such file or folder")
    try:
        chosen = get_suite(suite, **options)
        items = chosen.load(source).items
        report = render_items(chosen, items, open_store(store), RenderConfig(address=dask_address))
    except (KeyError, SuiteSourceError, StoreError, ValueError) as exc:
        _fail(exc.args[0] if exc.args else str(exc))
    _consoles.out.print(
        f"{suite}: {len(items)} items; views drawn for {report.drawn} inputs, "
        f"{report.from_cache} found in the media cache, {report.from_store} in the store"
    )
    for problem in report.failed:
        _consoles.err.print(f"[bold red]error:[/bold red] {_printable(str(problem))}")
    if report.failed:
        raise typer.Exit(code=2)


@app.command()
def suites() -> None:
    """List the registered suites and offline baselines."""
    from roadeval.benchmarks.registry import registry_snapshot

    snapshot = registry_snapshot()
    _consoles.out.print("suites: " + ", ".join(snapshot["suites"]))
    _consoles.out.print(
        "baselines (name@suite, use as model 'roadeval/<name>'): "
        + ", ".join(snapshot["baselines"])
    )


if __name__ == "__main__":
    app()
