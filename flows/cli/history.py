"""`roadeval history --panel P`: a panel's finished runs in order, each suite x model's headline
metrics across them, moves beyond noise between consecutive runs and drift flags
(`tasks.results.history`); it also builds the panel's history page and the store's index."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from roadeval.flows.cli.app import app, consoles, printable, reading_store
from roadeval.flows.cli.store import StoreOption, open_present

if TYPE_CHECKING:
    from roadeval.tasks.results.history import History

# Drift flags listed (the latest) unless --all.
DRIFTS_SHOWN = 25


@app.command()
def history(
    panel: Annotated[str, typer.Option("--panel", help="the panel: its name, or its panel file")],
    store: StoreOption = None,
    runs: Annotated[
        int | None,
        typer.Option("--runs", min=1, max=50, help="latest runs shown as columns (default 2)"),
    ] = None,
    page: Annotated[
        bool, typer.Option(help="also build the panel's history page and the store's index")
    ] = True,
    show_all: Annotated[
        bool, typer.Option("--all", help="list every drift flag, not only the latest ones")
    ] = False,
) -> None:
    """A panel's finished runs in order: per suite x model its headline metrics with their
    intervals, each run against the one before (paired over unchanged items), and drift: a
    model whose headline moved beyond noise while its items and model string did not."""
    from roadeval.tasks.results.history import panel_history

    with reading_store():
        name = _panel_name(panel)
        opened = open_present(store)
        found = panel_history(opened, name)
        if page:
            # Only then: the pages' machinery (matplotlib, the report's readers) is imported.
            from roadeval.tasks.report.history_page import build_history_page
            from roadeval.tasks.report.site_index import build_index

            key = build_history_page(opened, found)
            build_index(opened)
    _print(found, runs, show_all)
    if page:
        consoles.out.print(printable(f"history page: {opened.location(key)}"))


def _panel_name(panel: str) -> str:
    """A panel file's name (`name:` in it), or the name given."""
    if not Path(panel).is_file():
        return panel
    from roadeval.flows.panel.ref import load_panel_ref

    return load_panel_ref(panel).name


def _print(found: History, shown: int | None, show_all: bool) -> None:
    from rich.console import Console

    from roadeval.flows.rerun.diff import more_text
    from roadeval.tasks.results.history_text import (
        SHOWN_RUNS,
        WIDTH,
        drift_lines,
        legend_lines,
        trend_rows,
    )

    # The same few names on every row: each made printable once.
    names: dict[str, str] = {}

    def name(text: str) -> str:
        if text not in names:
            names[text] = printable(text)
        return names[text]

    default = consoles.out
    # The default table fits 120 columns; asked for more runs, it takes the width they need.
    out = default if shown is not None else Console(width=min(default.width, WIDTH))
    out.print(printable(f"panel {found.panel}: {len(found.runs)} finished runs, oldest first"))
    runs = Table("#", "run", "started", "cost (USD)", "models", title="runs", title_justify="left")
    for n, run in enumerate(found.runs, 1):
        runs.add_row(
            str(n),
            printable(run.run_id),
            run.started_at.strftime("%Y-%m-%d %H:%M"),
            f"{run.cost_usd:.4f}",
            printable(", ".join(run.models)),
        )
    out.print(runs)
    columns, rows = trend_rows(found, shown or SHOWN_RUNS)
    table = Table(
        "suite",
        "model",
        "metric",
        "items",
        *(f"run {n}" for n in columns),
        "moves",
        "drift",
        title="headline metrics per run",
        title_justify="left",
    )
    for column in table.columns:
        column.overflow = "fold"  # a number is never cut short
    for row in rows:
        table.add_row(
            *map(name, (row.scope, row.model, row.metric)),
            row.items,
            *row.cells,
            row.moves,
            row.drift,
        )
    out.print(table)
    for line in legend_lines(len(found.runs), columns):
        out.print(printable(line))
    drifts = drift_lines(found)
    listed = drifts if show_all else drifts[-DRIFTS_SHOWN:]
    if not drifts:
        out.print("drift: none")
    else:
        table = Table(
            "runs",
            "suite",
            "model",
            "metric",
            "after - before [95% CI]",
            "items",
            "served before → after",
            title=f"drift: {len(drifts)}" + ("" if listed == drifts else ", the latest listed"),
            title_justify="left",
        )
        for cells in listed:
            table.add_row(*map(name, cells))
        out.print(table)
        if len(listed) < len(drifts):
            out.print(printable(more_text(len(drifts) - len(listed))))
    if found.computed:
        count = len(found.computed)
        what = (
            "pair had no comparison landed and was"
            if count == 1
            else ("pairs had no comparison landed and were")
        )
        out.print(printable(f"{count} consecutive {what} compared now from their items"))
