"""roadeval's deployments on a Prefect server: refused without one (Prefect's temporary API runs
no scheduler and ends with the command), served from this process, registered for a process
work pool, and listed with their schedules and next runs.

Every function here talks to the server in PREFECT_API_URL (the environment or the active
Prefect profile) with Prefect's own client.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from roadeval.flows.prefect.panel_deployments import TAG, PanelDeployment

PROCESS_POOL = "process"


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

    prefect_serve(*runner_deployments(specs))


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


def _schedule_text(schedule: Any) -> str:
    inner = schedule.schedule
    what = getattr(inner, "cron", None) or str(inner)
    zone = getattr(inner, "timezone", None)
    text = f"{what} ({zone})" if zone else what
    if schedule.slug:
        text += f" [{schedule.slug}]"
    return text if schedule.active else f"{text}, inactive"


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
                    runs_on=f"work pool {d.work_pool_name}" if d.work_pool_name else "served",
                    parameters=dict(d.parameters),
                    next_run=runs[0].expected_start_time if runs else None,
                )
            )
    return sorted(found, key=lambda r: r.name)
