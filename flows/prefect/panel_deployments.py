"""How a panel is deployed: its full run on a cron schedule, an on-demand rerun (run it after
fixing a suite's items: only what changed is asked), and a campaign whose budget is a parameter.
`roadeval deploy` makes them for any panel; `roadeval.deployments` declares the demo panel's,
which `prefect.yaml` at the repository root declares again for `prefect deploy --all`.

Each runs a flow of `roadeval.flows.prefect.deployed` through a module-path entrypoint, so that a
worker with roadeval installed needs no image and no remote storage. Parameters are the panel
(a path, made absolute, or a URI), the store and the budget in USD.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prefect.deployments.runner import RunnerDeployment

# Mondays at 03:00: the weekly full-panel evaluation when no --cron is given.
DEFAULT_CRON = "0 3 * * 1"
DEFAULT_TIMEZONE = "UTC"
TAG = "roadeval"
# The scheduled full panel's default `reuse_for` for models called over the network.
SCHEDULED_REUSE_FOR = "never"
CRON_FIELDS = "minute hour day-of-month month day-of-week"


def cron_problem(line: str) -> str | None:
    """Why `line` is not a schedule's cron line, or None. A line has exactly the five fields of
    crontab(5): Prefect's parser takes a sixth field as seconds, so '0 0 3 * * 1' (meant as
    seconds, minute, hour...: Mondays at 03:00) runs at 00:00:01 on the 3rd of each month. The
    fields are read by cronsim (a real cron parser, which also refuses a day no month has, e.g.
    '0 3 30 2 *'), then by Prefect's own schedule, which must take the line too."""
    from cronsim import CronSim, CronSimError

    fields = line.split()
    example = f"{CRON_FIELDS}, e.g. {DEFAULT_CRON!r}"
    if len(fields) != 5:
        seconds = (
            "; Prefect would take the last as seconds and the first five as minute to "
            "day-of-week ('0 0 3 * * 1' runs at 00:00:01 on the 3rd of each month)"
            if len(fields) == 6
            else ""
        )
        return f"{line!r} has {len(fields)} fields, not the 5 of a cron line ({example}){seconds}"
    try:
        CronSim(line, datetime(2000, 1, 1))
    except CronSimError as exc:
        return f"{line!r}: {str(exc).lower()} ({example})"
    from prefect.schedules import Cron

    try:
        Cron(line, timezone=DEFAULT_TIMEZONE)
    except ValueError as exc:
        return f"{line!r}: Prefect refuses it: {exc}"
    return None


class Kind(StrEnum):
    """Which of a panel's deployments: what its flow is and how its runs start."""

    SCHEDULED = "scheduled"
    RERUN = "rerun"
    CAMPAIGN = "campaign"


# Kind -> (flow name, module-path entrypoint of the flow function).
FLOWS: dict[Kind, tuple[str, str]] = {
    Kind.SCHEDULED: ("evaluate-panel", "roadeval.flows.prefect.deployed.evaluate_panel_file"),
    Kind.RERUN: ("evaluate-panel", "roadeval.flows.prefect.deployed.evaluate_panel_file"),
    Kind.CAMPAIGN: ("campaign", "roadeval.flows.prefect.deployed.run_campaign"),
}

_DESCRIPTIONS = {
    Kind.SCHEDULED: "The full panel on its schedule, every suite x every model; a rerun of the "
    "panel's last finished run that asks every model called over the network again (its "
    "`reuse_for`: never, unless the panel sets one), built-in baselines reused.",
    Kind.RERUN: "On demand, after fixing a suite's items: unchanged answers and scores are "
    "copied from the panel's last finished run (or the run `against` names), only changed "
    "and added items are asked.",
    Kind.CAMPAIGN: "A cost-controlled run: it stops before a request could cross `budget_usd` "
    "(judge and retries included); run it with `dry_run: true` for the estimate first.",
}


def deployment_names(name: str) -> dict[Kind, str]:
    """The deployment names of a panel deployed as `name` (flow/deployment in Prefect)."""
    return {Kind.SCHEDULED: name, Kind.RERUN: f"{name}-rerun", Kind.CAMPAIGN: f"{name}-campaign"}


def schedule_slug(name: str) -> str:
    """The schedule's slug: stable across redeploys, so a changed cron updates it in place."""
    return re.sub(r"[^a-z0-9]+", "-", f"{name}-cron".lower()).strip("-")


@dataclass(frozen=True)
class PanelDeployment:
    """One deployment of a panel: its flow, name, parameters and schedule (None: on demand)."""

    kind: Kind
    name: str
    parameters: dict[str, Any]
    cron: str | None = None
    timezone: str = DEFAULT_TIMEZONE
    tags: tuple[str, ...] = field(default=(TAG,))

    def __post_init__(self) -> None:
        # Any code that makes a deployment (the demo's, `roadeval deploy`) gets the same check.
        if self.cron is not None and (problem := cron_problem(self.cron)) is not None:
            raise ValueError(f"cron {problem}")

    @property
    def flow_name(self) -> str:
        return FLOWS[self.kind][0]

    @property
    def entrypoint(self) -> str:
        return FLOWS[self.kind][1]

    @property
    def full_name(self) -> str:
        return f"{self.flow_name}/{self.name}"

    @property
    def description(self) -> str:
        return _DESCRIPTIONS[self.kind]

    @property
    def slug(self) -> str | None:
        return schedule_slug(self.name) if self.cron is not None else None

    def runner_deployment(self, work_pool: str | None = None) -> RunnerDeployment:
        """The deployment as Prefect makes it (to serve, or to apply for `work_pool`)."""
        from importlib import import_module

        from prefect.deployments.runner import EntrypointType
        from prefect.schedules import Cron

        module, _, function = self.entrypoint.rpartition(".")
        flow = getattr(import_module(module), function)
        schedules = (
            [Cron(self.cron, timezone=self.timezone, slug=self.slug)]
            if self.cron is not None
            else None
        )
        deployment: RunnerDeployment = flow.to_deployment(
            name=self.name,
            schedules=schedules,
            parameters=self.parameters,
            description=self.description,
            tags=list(self.tags),
            work_pool_name=work_pool,
            entrypoint_type=EntrypointType.MODULE_PATH,
        )
        return deployment


def panel_deployments(
    panel: str,
    name: str,
    *,
    store: str | None = None,
    budget_usd: float | None = None,
    cron: str = DEFAULT_CRON,
    timezone: str = DEFAULT_TIMEZONE,
) -> list[PanelDeployment]:
    """The three deployments of the panel `panel` (a reference as `flows.panel.ref` reads it),
    named after `name`. Without `budget_usd`, the scheduled run and the rerun are capped only
    by the panel's own `budget_usd`, and the campaign asks for a budget when it is started.
    The scheduled run's `reuse_for` is `never`; the rerun and the campaign reuse forever."""
    names = deployment_names(name)
    common: dict[str, Any] = {"panel": panel, "store": store}
    capped = {**common, "budget_usd": budget_usd} if budget_usd is not None else dict(common)
    # A scheduled run watches its models: it asks every model called over the network again
    # (a provider may have changed one behind its name), unless the panel sets `reuse_for`.
    fresh = {**capped, "reuse_for": SCHEDULED_REUSE_FOR}
    return [
        PanelDeployment(Kind.SCHEDULED, names[Kind.SCHEDULED], fresh, cron, timezone),
        PanelDeployment(Kind.RERUN, names[Kind.RERUN], capped),
        PanelDeployment(Kind.CAMPAIGN, names[Kind.CAMPAIGN], capped),
    ]
