"""`roadeval deploy`: register a panel's deployments (its full run on a cron schedule, an
on-demand rerun, a campaign whose budget is a parameter) with the Prefect server in
PREFECT_API_URL and serve them from this process, or register them for a process work pool;
`--list` shows what is registered with the next runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from roadeval.flows.cli.app import app, consoles, fail, printable

if TYPE_CHECKING:
    from roadeval.flows.prefect.panel_deployments import PanelDeployment


def _specs(
    panel_ref: str,
    name: str | None,
    store: str | None,
    budget_usd: float | None,
    cron: str,
    timezone: str,
    serving: bool,
) -> list[PanelDeployment]:
    """The panel's deployments, after checking what a run would check first: the panel reads,
    the store is a store; when served here, also that the store can be written and every key
    is set (its runs start in this process's environment)."""
    from roadeval.flows.panel.file import PanelError, with_budget_usd
    from roadeval.flows.panel.ref import absolute_panel_ref, load_panel_ref
    from roadeval.flows.prefect.panel_deployments import panel_deployments
    from roadeval.flows.run.preflight import check_before_run
    from roadeval.storage.store import StoreError, open_store
    from roadeval.tasks.requests.model_spec import MissingKeyError

    try:
        ref = absolute_panel_ref(panel_ref)
        panel = load_panel_ref(ref)
        if budget_usd is not None:
            panel = with_budget_usd(panel, budget_usd)
        # Made absolute here: a run's working directory is the worker's, not this one.
        uri = open_store(store if store is not None else panel.store).uri
        if serving:
            check_before_run(panel, uri)
    except (PanelError, StoreError, MissingKeyError, ValueError) as exc:
        fail(str(exc))
    return panel_deployments(
        ref, name or panel.name, store=uri, budget_usd=budget_usd, cron=cron, timezone=timezone
    )


def _check_options(cron: str, timezone: str, budget_usd: float | None, store: str | None) -> None:
    """What the options say, checked before the Prefect server is asked anything: a bad one is
    one line and exit 2, with nothing registered."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    from roadeval.flows.panel.file import BUDGET_USD
    from roadeval.flows.prefect.panel_deployments import cron_problem
    from roadeval.storage.store import store_uri_problem

    if (problem := cron_problem(cron)) is not None:
        fail(f"--cron {problem}")
    try:
        ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        fail(f"--timezone {timezone!r}: not a time zone (e.g. UTC, Europe/Paris)")
    if budget_usd is not None and (problem := BUDGET_USD.problem(budget_usd)) is not None:
        fail(f"--budget-usd: {problem}")
    if store is not None and (problem := store_uri_problem(store)) is not None:
        fail(f"--store: {problem}")


def _print_list() -> None:
    from roadeval.flows.prefect.deployments import registered

    rows = registered()
    if not rows:
        consoles.out.print("no roadeval deployments on this server (see `roadeval deploy --help`)")
        return
    table = Table("deployment", "schedule", "next run", "runs on", "parameters")
    for row in rows:
        if row.paused:
            next_run = "paused"
        elif row.next_run is not None:
            next_run = row.next_run.isoformat(timespec="minutes")
        else:
            next_run = "not scheduled yet" if row.schedules else "on demand"
        params = ", ".join(f"{k}={v}" for k, v in sorted(row.parameters.items()) if v is not None)
        # The server's READY lags a served deployment's end by a minute: said for pools only.
        pooled = row.status and row.work_pool
        runs_on = f"{row.runs_on} ({row.status.lower()})" if pooled else row.runs_on
        cells = (row.name, "\n".join(row.schedules) or "on demand", next_run, runs_on, params)
        table.add_row(*map(printable, cells))
    consoles.out.print(table)


@app.command()
def deploy(
    panel: Annotated[
        str | None,
        typer.Option(
            "--panel",
            "-p",
            help="panel YAML: a path, a file:// or s3:// URI, or bundled:demo",
        ),
    ] = None,
    cron: Annotated[
        str,
        typer.Option(
            help="when the full panel runs: a 5-field cron line, minute hour day-of-month month "
            "day-of-week (default Mondays 03:00)"
        ),
    ] = "0 3 * * 1",
    timezone: Annotated[str, typer.Option(help="the cron line's time zone")] = "UTC",
    name: Annotated[
        str | None,
        typer.Option(
            help="deployment name (default: the panel's); then NAME-rerun and NAME-campaign"
        ),
    ] = None,
    store: Annotated[
        str | None,
        typer.Option(
            help="store root for the runs: a folder (made absolute) or s3://bucket/prefix"
        ),
    ] = None,
    budget_usd: Annotated[
        float | None,
        typer.Option(
            "--budget-usd",
            help="cap every run of the deployments in USD (the campaign's default budget)",
        ),
    ] = None,
    work_pool: Annotated[
        str | None,
        typer.Option(
            "--work-pool",
            help="register for this process work pool (made if missing) instead of serving "
            "here; start a worker with `prefect worker start --pool POOL`",
        ),
    ] = None,
    list_: Annotated[
        bool, typer.Option("--list", help="list roadeval's deployments and their next runs")
    ] = False,
) -> None:
    """Register a panel's deployments with the Prefect server in PREFECT_API_URL and serve
    them here until stopped: `evaluate-panel/NAME` on the cron schedule, `evaluate-panel/
    NAME-rerun` and `campaign/NAME-campaign` on demand. A deployed run is an ordinary run."""
    from roadeval.flows.prefect.deployments import DeployError, require_server

    if list_ and panel is not None:
        fail("--list takes no --panel: it lists every roadeval deployment on the server")
    if not list_ and panel is None:
        fail("give --panel (the panel to deploy) or --list")
    if not list_:
        _check_options(cron, timezone, budget_usd, store)
    try:
        url = require_server()
        if list_:
            _print_list()
            return
        assert panel is not None
        specs = _specs(panel, name, store, budget_usd, cron, timezone, work_pool is None)
        _register(specs, url, work_pool)
    except DeployError as exc:
        fail(str(exc))


def _register(specs: list[PanelDeployment], url: str, work_pool: str | None) -> None:
    from roadeval.flows.prefect.deployments import apply_to_pool, serve

    names = ", ".join(spec.full_name for spec in specs)
    store = specs[0].parameters.get("store")
    if work_pool is not None:
        made = apply_to_pool(specs, work_pool)
        pool = f"process work pool {work_pool}" + (" (made now)" if made else "")
        consoles.out.print(f"registered with {url} for the {pool}: {printable(names)}")
        consoles.out.print(f"runs land in {printable(str(store))}; start a worker to run them:")
        consoles.out.print(f"  prefect worker start --pool {printable(work_pool)}")
        return
    consoles.out.print(
        f"serving {printable(names)} from this process (runs land in {printable(str(store))}); "
        "Ctrl-C stops serving and pauses their schedules"
    )
    serve(specs)
