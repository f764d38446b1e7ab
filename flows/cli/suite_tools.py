"""`roadeval` commands over a suite's own files, without a run: score released prediction
files, check items against the suite's quality rules, draw renders ahead of a run."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from roadeval.flows.cli.app import app, consoles, fail, printable


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
    accept_errors: Annotated[
        bool,
        typer.Option(
            "--accept-errors",
            help="exit 0 even when more than half of the rows were counted as errors",
        ),
    ] = False,
) -> None:
    """Score a released prediction file exactly as the release's scripts do; prints JSON, and
    on stderr how many rows were counted as errors and why. Exit 1 when more than half were
    (their metrics measure the errors), unless `--accept-errors`.

    `--images` and `--reparse` are RoadBench's options; another suite refuses them."""
    from roadeval.benchmarks.error_rows import ErrorRows
    from roadeval.benchmarks.registry import get_suite

    for path in (labels, predictions):
        if not path.exists():
            fail(f"{path}: no such file")
    # The suite's own options, as given: each a field of the suite's request, of the same name.
    given: dict[str, Any] = {"images": images, "reparse": reparse or None}
    options = {name: value for name, value in given.items() if value is not None}
    try:
        chosen = get_suite(suite)
        accepted = chosen.predictions_request.option_names()
        refused = [f"--{name}" for name in options if name not in accepted]
        if refused:
            raise ValueError(
                f"suite {suite!r} takes no {', '.join(refused)} for its prediction files"
                + (f" (its options: {', '.join(f'--{n}' for n in accepted)})" if accepted else "")
            )
        request = chosen.predictions_request(
            labels=labels, predictions=predictions, task=task, **options
        )
        result = chosen.score_predictions(request)
    except (KeyError, ValueError, NotImplementedError) as exc:
        fail(exc.args[0] if exc.args else str(exc))
        return
    sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False, default=float) + "\n")
    errors = ErrorRows.of(result)
    if errors is None:
        consoles.err.print(f"suite {escape(suite)!r} does not say which rows it counted as errors")
        return
    if not errors.mostly_errors:
        consoles.err.print(escape(errors.line), soft_wrap=True)
        return
    consoles.err.print(f"[yellow]{escape(errors.line)}[/yellow]", soft_wrap=True)
    if not accept_errors:
        fail(
            "more than half of the rows were counted as errors: the metrics above measure "
            "them, not the model (check the files; --accept-errors accepts them)",
            1,
        )


class ReportFormat(StrEnum):
    table = "table"
    json = "json"


@app.command()
def qc(
    suite: Annotated[str, typer.Argument(help="suite name, e.g. trip")],
    source: Annotated[Path, typer.Option("--source", help="the suite's source folder or file")],
    format: Annotated[ReportFormat, typer.Option("--format", "-f")] = ReportFormat.table,
    option: Annotated[
        list[str] | None,
        typer.Option(help="a suite option, KEY=VALUE (YAML), repeatable: e.g. image roots"),
    ] = None,
) -> None:
    """Check a suite's items against its quality rules; exit 1 when a rule fails, 2 when the
    source is not the suite's layout."""
    from roadeval.benchmarks.errors import SuiteSourceError
    from roadeval.benchmarks.registry import get_suite
    from roadeval.tasks.results.quality_table import quality_table, verdict

    options = _suite_options(option)
    if not source.exists():
        fail(f"{source}: no such file or folder")
    try:
        report = get_suite(suite, **options).quality_report(source)
    except (KeyError, SuiteSourceError, ValueError) as exc:
        fail(exc.args[0] if exc.args else str(exc))
    if report is None:
        consoles.out.print(f"suite {escape(suite)!r} has no quality rules: nothing to check")
        return
    if format is ReportFormat.json:
        sys.stdout.write(json.dumps(report.as_dict(), ensure_ascii=False, indent=2) + "\n")
    else:
        consoles.out.print(quality_table(report))
        consoles.out.print(verdict(report))
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
    """Draw a suite's renders (point-cloud views) ahead of a run, so the run draws nothing.

    Views go to the store and the media cache; exit 2 naming each input that cannot be drawn.
    """
    from roadeval.benchmarks.errors import SuiteSourceError
    from roadeval.benchmarks.registry import get_suite
    from roadeval.storage.store import StoreError, open_store
    from roadeval.tasks.render.cluster import RenderConfig
    from roadeval.tasks.render.stage import render_items

    options = _suite_options(option)
    if not source.exists():
        fail(f"{source}: no such file or folder")
    if dask_address is not None:
        _check_dask_address(dask_address)
    try:
        # The store first: a store that cannot be one is said before the suite is read.
        opened = open_store(store)
        chosen = get_suite(suite, **options)
        items = chosen.load(source).items
        report = render_items(chosen, items, opened, RenderConfig(address=dask_address))
    except (KeyError, SuiteSourceError, StoreError, ValueError) as exc:
        fail(exc.args[0] if exc.args else str(exc))
    consoles.out.print(
        f"{suite}: {len(items)} items; views drawn for {report.drawn} inputs, "
        f"{report.from_cache} found in the media cache, {report.from_store} in the store"
    )
    for problem in report.failed:
        consoles.err.print(f"[bold red]error:[/bold red] {printable(str(problem))}")
    if report.failed:
        raise typer.Exit(code=2)


def _suite_options(entries: list[str] | None) -> dict[str, Any]:
    """`--option KEY=VALUE` entries as a suite's options (each value read as YAML)."""
    import yaml

    options: dict[str, Any] = {}
    for entry in entries or []:
        key, sep, value = entry.partition("=")
        if not sep or not key:
            fail(f"--option {entry!r}: expected KEY=VALUE")
        try:
            options[key] = yaml.safe_load(value)
        except yaml.YAMLError as exc:
            fail(f"--option {entry!r}: the value is not YAML: {' '.join(str(exc).split())}")
    return options


def _check_dask_address(address: str) -> None:
    """Exit 2 with one line unless `address` is a Dask scheduler's and something listens there."""
    from roadeval.flows.run.engine_checks import EngineUnreachable, check_dask_scheduler
    from roadeval.tasks.render.cluster import dask_address_problem

    if (problem := dask_address_problem(address)) is not None:
        fail(f"--dask-address: {problem}")
    try:
        check_dask_scheduler(address, "--dask-address")
    except EngineUnreachable as exc:
        fail(str(exc))
