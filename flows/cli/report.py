"""The commands that present a stored run: `report` (its HTML report, one self-contained file
kept in the store at reports/<run_id>.html) and `show` (its leaderboard and summary tables in the
terminal, every metric with `--detail`). Both read the store through DuckDB alone, for any run
in it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from roadeval.flows.cli.app import (
    app,
    consoles,
    fail,
    outside_store,
    printable,
    reading_store,
)
from roadeval.flows.cli.store import StoreOption, open_present

RunArgument = Annotated[
    str | None, typer.Argument(help="the run (default: the latest run in the store)")
]


@app.command()
def report(
    run: RunArgument = None,
    store: StoreOption = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="also write the page here (a file path)"),
    ] = None,
) -> None:
    """Build a run's HTML report: one self-contained file (no network needed to open it),
    kept in the store at reports/<run_id>.html; prints where it is."""
    from roadeval.flows.process.quick_exit import armed
    from roadeval.tasks.report.build import build_report
    from roadeval.tasks.report.reading import resolve_run

    with reading_store():
        opened = open_present(store)
        if out is not None:
            outside_store("--out", out, opened)
        built = build_report(opened, resolve_run(opened, run), out=out, helper=armed())
    consoles.out.print(
        f"report of run {printable(built.run_id)}: {printable(built.location)}", soft_wrap=True
    )
    if out is not None:
        consoles.out.print(f"written to {printable(str(out))}")


@app.command()
def show(
    run: RunArgument = None,
    store: StoreOption = None,
    detail: Annotated[
        bool,
        typer.Option("--detail", help="also every metric per task and per slice"),
    ] = False,
) -> None:
    """Print a stored run's leaderboard per suite, its health and its cost, as the run printed
    them at its end (`--detail`: every metric per task and per slice too)."""
    from roadeval.flows.cli.costs import cost_lines, cost_table
    from roadeval.tasks.report.build import report_key
    from roadeval.tasks.report.reading import read_summary, resolve_run
    from roadeval.tasks.results.report import print_report

    with reading_store():
        opened = open_present(store)
        found = read_summary(opened, resolve_run(opened, run))
        lines = cost_lines(opened, found.run.run_id)
    manifest = found.run.manifest
    if manifest is None:
        fail(f"run {found.run.run_id} has no readable manifest: nothing to show")
    out = consoles.out
    status = found.run.status + (f" ({found.run.message})" if found.run.message else "")
    out.print(
        f"run [bold]{printable(found.run.run_id)}[/bold] of panel {printable(found.run.panel)}: "
        f"{printable(status)}"
    )
    print_report(
        out, found.metrics, manifest, health=found.health, pairs=found.pairs, detail=detail
    )
    out.print(cost_table(lines, out.width))
    key = report_key(found.run.run_id)
    if opened.exists(key):
        out.print(f"report: {printable(opened.location(key))}", soft_wrap=True)
    else:
        out.print(f"no report yet: roadeval report {printable(found.run.run_id)}")
