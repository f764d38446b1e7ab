"""roadeval's deployments on a Prefect server: refused without one (Prefect's temporary API runs
no scheduler and ends with the command), served from this process, registered for a process
work pool, and listed with their schedules and next runs.

Every function here talks to the server in PREFECT_API_URL (the environment or the active
Prefect profile) with Prefect's own client.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from roadeval.flows.prefect.panel_deployments import TAG, PanelDeployment

PROCESS_POOL = "process"
# How often the process serving deployments asks the server for their runs (at most: a faster
# PREFECT_RUNNER_POLL_FREQUENCY wins). Each ask is the deployments' `last_polled` on the
# server, which `--list` reads as that process's heartbeat.
SERVE_POLL_S = 2.0
# A served deployment not polled for this long is served by nobody any more: five polls
# missed, so a busy moment of the serving process is not taken for its end.
SERVED_STALE_S = 10.0


class DeployError(ValueError):
    """What stops a deployment command, said in one line."""


def require_server() -> str:
    """The URL of the Prefect server to register with, which must answer; DeployError when
    none is configured (an ephemeral API) or it does not answer."""
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL

    url = PREFECT_API_URL.value()
    if not url:
        raise DeployError(
            "no Prefect server: PREFECT_API_URL is not set, and Prefect's temporary "
            "(ephemeral) API cannot schedule runs (it runs no scheduler and stops with this "
            "command). Start one with `prefect server start` and set "
            "PREFECT_API_URL=http://127.0.0.1:4200/api"
        )
    with get_client(sync_client=True) as client:
        problem = client.api_healthcheck()
    if problem is not None:
        raise DeployError(
            f"the Prefect API at {url} (PREFECT_API_URL) does not answer: "
            f"{type(problem).__name__}: {problem}"
        )
    return str(url)


def runner_deployments(specs: Sequence[PanelDeployment], work_pool: str | None = None) -> list[Any]:
    """Prefect's deployments of `specs`; a bad name, cron line or time zone is a DeployError."""
    try:
        return [spec.runner_deployment(work_pool) for spec in specs]
    except ValueError as exc:
        raise DeployError(f"cannot make the deployments: {exc}") from None


def serve(specs: Sequence[PanelDeployment]) -> None:
    """Register `specs` and run their flow runs from this process until it is stopped (Ctrl-C
    or SIGTERM); their schedules are paused then, as nobody runs them any more."""
    from prefect import serve as prefect_serve
    from prefect.settings import PREFECT_RUNNER_POLL_FREQUENCY

    poll_s = min(float(PREFECT_RUNNER_POLL_FREQUENCY.value()), SERVE_POLL_S)
    prefect_serve(*runner_deployments(specs), query_seconds=poll_s)


def served_now(last_polled: datetime | None, now: datetime) -> bool:
    """Whether a process still serves a deployment last polled at `last_polled` (None: never):
    it polls every `SERVE_POLL_S`, so a poll older than `SERVED_STALE_S` means it has ended,
    however it ended (Ctrl-C, SIGTERM, killed, its machine gone). The server's own READY
    status says nothing sooner: it turns NOT_READY a minute later, and only where the
    server runs its foreman service."""
    return last_polled is not None and (now - last_polled).total_seconds() <= SERVED_STALE_S


def _process_pool(client: Any, name: str) -> bool:
    """Make sure the work pool `name` exists and is a process pool; True if made now."""
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectNotFound
    from prefect.workers.process import ProcessWorker

    try:
        pool = client.read_work_pool(name)
    except ObjectNotFound:
        client.create_work_pool(
            WorkPoolCreate(
                name=name,
                type=PROCESS_POOL,
                base_job_template=ProcessWorker.get_default_base_job_template(),
            )
        )
        return True
    if pool.type != PROCESS_POOL:
        raise DeployError(
            f"work pool {name!r} is a {pool.type!r} pool: roadeval deploys to process pools "
            "(its workers run the installed roadeval); give another --work-pool"
        )
    return False


def apply_to_pool(specs: Sequence[PanelDeployment], work_pool: str) -> bool:
    """Register `specs` for the process work pool `work_pool` (made if missing: True)."""
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        made = _process_pool(client, work_pool)
    for deployment in runner_deployments(specs, work_pool):
        deployment.apply()
    return made


@dataclass(frozen=True)
class Registered:
    """A roadeval deployment as the server has it."""

    name: str
    schedules: list[str]
    paused: bool
    status: str
    runs_on: str
    parameters: dict[str, Any]
    next_run: datetime | None
    # When a process serving it or a worker of its pool last asked for its runs (None: never).
    last_polled: datetime | None = None
    work_pool: str | None = None


def _schedule_text(schedule: Any) -> str:
    inner = schedule.schedule
    what = getattr(inner, "cron", None) or str(inner)
    zone = getattr(inner, "timezone", None)
    text = f"{what} ({zone})" if zone else what
    if schedule.slug:
        text += f" [{schedule.slug}]"
    return text if schedule.active else f"{text}, inactive"


def _runs_on(pool: str | None, last_polled: datetime | None, now: datetime) -> str:
    """Where a deployment's runs run: its work pool, or the process serving it while one does
    (`served_now`), else when one last did."""
    if pool:
        return f"work pool {pool}"
    if served_now(last_polled, now):
        return "served"
    if last_polled is None:
        return "not served (never polled)"
    return f"not served since {last_polled.astimezone(UTC).isoformat(timespec='seconds')}"


def registered() -> list[Registered]:
    """roadeval's deployments (tagged `roadeval`) with their schedules and the next run the
    server's scheduler has made for each (None: on demand, paused, or not scheduled yet)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        DeploymentFilter,
        DeploymentFilterId,
        DeploymentFilterTags,
        FlowFilter,
        FlowFilterId,
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateType,
    )
    from prefect.client.schemas.objects import StateType
    from prefect.client.schemas.sorting import FlowRunSort

    found: list[Registered] = []
    now = datetime.now(UTC)
    with get_client(sync_client=True) as client:
        deployments = client.read_deployments(
            deployment_filter=DeploymentFilter(tags=DeploymentFilterTags(all_=[TAG]))
        )
        flow_ids = list({d.flow_id for d in deployments})
        flows = {
            f.id: f.name
            for f in client.read_flows(flow_filter=FlowFilter(id=FlowFilterId(any_=flow_ids)))
        }
        scheduled = FlowRunFilter(
            state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.SCHEDULED]))
        )
        for d in deployments:
            runs = client.read_flow_runs(
                deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[d.id])),
                flow_run_filter=scheduled,
                sort=FlowRunSort.EXPECTED_START_TIME_ASC,
                limit=1,
            )
            found.append(
                Registered(
                    name=f"{flows.get(d.flow_id, '?')}/{d.name}",
                    schedules=[_schedule_text(s) for s in d.schedules],
                    paused=bool(d.paused),
                    status=str(getattr(d.status, "value", d.status) or ""),
                    runs_on=_runs_on(d.work_pool_name, d.last_polled, now),
                    parameters=dict(d.parameters),
                    next_run=runs[0].expected_start_time if runs else None,
                    last_polled=d.last_polled,
                    work_pool=d.work_pool_name or None,
                )
            )
    return sorted(found, key=lambda r: r.name)
