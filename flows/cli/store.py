"""The commands that read the store: `query` (read-only SQL over the views), `runs`, and the
registry listing `suites`. The views are the catalogue's (`storage.catalog.view_names`), with
every installed suite loaded first so that its own tables are among them, in the help too."""

from __future__ import annotations

import csv
import json
import sys
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table
from typer.core import TyperArgument, TyperCommand

from roadeval.flows.cli.app import app, consoles, fail, printable, reading_store

if TYPE_CHECKING:
    from roadeval.storage.store import Store


class OutputFormat(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"


StoreOption = Annotated[
    str | None, typer.Option("--store", help="store root: a folder or s3://bucket/prefix")
]


def open_present(store: str | None) -> Store:
    """The store at `store` (default: ROADEVAL_STORE, else ./roadeval-data); one line and exit
    2 when nothing has been landed there (a query on nothing is a mistake)."""
    from roadeval.storage.store import open_store

    opened = open_store(store)
    if not opened.is_present():
        fail(f"no roadeval store at {opened.uri}: nothing has been landed there")
    return opened


def _load_suites() -> None:
    """Import every installed suite (by its `roadeval.suites` entry point, as the registry
    loads one), so that the catalogue has each one's own tables. A suite that fails to load is
    a warning, not an error: the store stays readable, without that suite's tables."""
    from roadeval.benchmarks.registry import load_suite, suite_names

    for name in suite_names():
        try:
            load_suite(name)
        except Exception as exc:
            message = (
                f"suite {name!r} could not be loaded, so its own tables are missing "
                f"({type(exc).__name__}: {exc})"
            )
            consoles.err.print(f"[bold yellow]warning:[/bold yellow] {printable(message)}")


def views_help() -> str:
    """The `sql` argument's help: the views there are, every installed suite's among them."""
    from roadeval.storage.catalog import view_names

    _load_suites()
    return "read-only SQL (SELECT, EXPLAIN, DESCRIBE, SHOW) over the views " + ", ".join(
        view_names()
    )


class _QueryCommand(TyperCommand):
    """`query`, its help listing the views as they are when it is shown (not at import)."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        for param in self.params:
            if param.name == "sql" and isinstance(param, TyperArgument):
                param.help = views_help()
        super().format_help(ctx, formatter)


@app.command(cls=_QueryCommand)
def query(
    sql: Annotated[
        str,
        typer.Argument(help="read-only SQL over the views (listed when the help is shown)"),
    ],
    store: StoreOption = None,
    format: Annotated[OutputFormat, typer.Option("--format", "-f")] = OutputFormat.table,
    include_unlanded: Annotated[
        bool,
        typer.Option(help="also show parts that no landing published (left by a crashed run)"),
    ] = False,
    run: Annotated[
        list[str] | None,
        typer.Option(
            "--run",
            help="read only these runs' parts (repeat it; the suites' items are always read): "
            "a query on a large store then opens only what it needs",
        ),
    ] = None,
) -> None:
    """Query the store with DuckDB (read-only)."""
    columns, rows = _query(store, sql, include_unlanded, runs=run or None)
    _print_rows(columns, rows, format)


# The suites and the models (by the label their rows carry) a run's manifest names.
_MANIFEST_SUITES = (
    "case when json_valid(manifest_json) then array_to_string("
    "json_extract_string(manifest_json, '$.suites[*].name'), ', ') end"
)
_MANIFEST_MODELS = (
    "case when json_valid(manifest_json) then array_to_string(list_transform("
    "json_extract(manifest_json, '$.models[*]'), "
    "lambda m: coalesce(m->>'name', m->>'model')), ', ') end"
)
# Requests whose cost is not known (None in manifests from before they were counted).
_MANIFEST_UNKNOWN_COST = (
    "case when json_valid(manifest_json) then "
    "try_cast(manifest_json->>'$.totals.unknown_cost' as bigint) end"
)
# Items a scorer raised on, for a run landed before its event kept them (its manifest did).
_MANIFEST_SCORER_ERRORS = (
    "case when json_valid(manifest_json) then "
    "try_cast(manifest_json->>'$.totals.scorer_errors' as bigint) end"
)


@app.command()
def runs(
    store: StoreOption = None,
    format: Annotated[OutputFormat, typer.Option("--format", "-f")] = OutputFormat.table,
) -> None:
    """List the store's runs: running, finished, failed, interrupted, or died (no heartbeat),
    with their panel, suites, models, counts, cost (a died run's: of what it landed) and what
    they left out (rows skipped at load, items a baseline has no rule for). The table shows
    whole run ids and the columns that fit the terminal; csv and json every column, exactly."""
    from roadeval.tasks.results.fitting import dropped_note
    from roadeval.tasks.results.run_list import EVERY_COLUMN, run_list, runs_table

    sql = (
        "select run_id, status, started_at, ended_at, panel, "
        f"{_MANIFEST_SUITES} as suites, {_MANIFEST_MODELS} as models, "
        "baseline_run_id as baseline, n_items, n_scored, "
        f"coalesce(n_scorer_errors, {_MANIFEST_SCORER_ERRORS}) as n_scorer_errors, n_calls, "
        "n_cached, n_errors, n_interrupted + n_not_run as n_unfinished, cost_usd, "
        f"{_MANIFEST_UNKNOWN_COST} as n_unknown_cost, message, manifest_json "
        "from runs order by started_at"
    )
    # `runs` reads no suite's own table: no suite needs loading.
    columns, rows = _query(store, sql, False, every_suite=False)
    died = [str(row[0]) for row in rows if row[1] == "died"]
    if died:
        rows = _counted_as_landed(store, columns, rows, died)
    listing = run_list(columns, rows)
    if format is not OutputFormat.table:
        _print_rows(listing.columns, listing.rows, format)
        return
    out = consoles.out
    fitted = runs_table(listing, out.width)
    out.print(fitted.table)
    if note := dropped_note(fitted, out.width, EVERY_COLUMN):
        out.print(escape(note))


def _counted_as_landed(
    store: str | None, columns: list[str], rows: list[tuple[Any, ...]], died: list[str]
) -> list[tuple[Any, ...]]:
    """The rows of runs that died with their counts of what they landed (`landed`): their
    one event counted nothing. Every item not landed is unfinished (a resume asks it)."""
    from roadeval.flows.cli.landed import LANDED_COLUMNS, landed_counts

    with reading_store():
        landed = landed_counts(open_present(store), died)
    at = {name: columns.index(name) for name in (*LANDED_COLUMNS, "n_items", "n_unfinished")}
    ended = ("n_scored", "n_scorer_errors", "n_errors")
    counted: list[tuple[Any, ...]] = []
    for row in rows:
        if row[0] not in died:
            counted.append(row)
            continue
        cells = list(row)
        found = landed.get(row[0], {})
        for name in LANDED_COLUMNS:
            cells[at[name]] = found.get(name, 0)
        cells[at["n_unfinished"]] = row[at["n_items"]] - sum(cells[at[n]] for n in ended)
        counted.append(tuple(cells))
    return counted


def _query(
    store: str | None,
    sql: str,
    include_unlanded: bool,
    *,
    every_suite: bool = True,
    runs: list[str] | None = None,
) -> tuple[list[str], list[tuple[Any, ...]]]:
    import duckdb

    from roadeval.storage.catalog import QueryRefused, check_read_only, tables_named
    from roadeval.storage.catalog import query as run_query
    from roadeval.storage.store import StoreError

    try:
        check_read_only(sql)
        opened = open_present(store)
        _check_runs_exist(opened, runs or [])
        # Suites are imported (scipy among them: seconds) only for a statement that may read
        # their own tables: one naming no shared view (`show tables`, `from pareto`), or one
        # whose tables were not all found without them.
        if every_suite and tables_named(sql) is None:
            _load_suites()
            every_suite = False
        try:
            return run_query(opened, sql, include_unlanded=include_unlanded, runs=runs)
        except duckdb.CatalogException:
            if not every_suite:
                raise
            _load_suites()
            return run_query(opened, sql, include_unlanded=include_unlanded, runs=runs)
    except QueryRefused as exc:
        fail(str(exc))
    except duckdb.Error as exc:
        fail(f"query failed: {exc}")
    except (StoreError, ValueError) as exc:
        fail(str(exc))


def _check_runs_exist(store: Store, runs: list[str]) -> None:
    """A `--run` that names no run of the store is a mistake, not a query of no rows: every run
    that started has its folder under `runs/` (its heartbeat, its manifest)."""
    for run_id in runs:
        if not store.list_entries(f"runs/{run_id}/", limit=1).entries:
            fail(
                f"--run {run_id}: no such run in the store {store.uri} (`roadeval runs` lists them)"
            )


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
        consoles.out.print(table)


@app.command()
def suites() -> None:
    """List the registered suites and offline baselines."""
    from roadeval.benchmarks.registry import registry_snapshot

    snapshot = registry_snapshot()
    consoles.out.print("suites: " + ", ".join(snapshot["suites"]))
    consoles.out.print(
        "baselines (name@suite, use as model 'roadeval/<name>'): "
        + ", ".join(snapshot["baselines"])
    )
