"""A panel's three deployments on the session's real Prefect server: registered (applied), read
back with their schedules and parameters, for a process work pool too; `roadeval deploy --list`
with the next runs the server's scheduler made; the refusal of an ephemeral API or a server that
does not answer; and prefect.yaml declaring the same deployments as deployments/demo.py."""

from __future__ import annotations

import inspect
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from roadeval.deployments import demo
from roadeval.flows.panel.file import panel_from_dict, with_reuse_for
from roadeval.flows.panel.reading import PanelError
from roadeval.flows.prefect.deployed import evaluate_panel_file
from roadeval.flows.prefect.panel_deployments import (
    Kind,
    PanelDeployment,
    cron_problem,
    panel_deployments,
)

from support import orchestrators
from support.cli_process import run_cli, wait_until
from support.prefect_server import PrefectServer
from support.trip_panel import invoke

REPO = Path(__file__).resolve().parents[2]
DEMO_PANEL = str(REPO / "flows" / "panel" / "bundled" / "demo.yaml")


def _read(full_name: str) -> Any:
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        return client.read_deployment_by_name(full_name)


def _ensure_pool(name: str) -> None:
    """A process work pool `name`, as `prefect work-pool create NAME --type process` makes it."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.workers.process import ProcessWorker

    template = ProcessWorker.get_default_base_job_template()
    with get_client(sync_client=True) as client:
        pool = WorkPoolCreate(name=name, type="process", base_job_template=template)
        client.create_work_pool(pool, overwrite=True)


def _specs(name: str, tmp_path: Path) -> list[PanelDeployment]:
    return panel_deployments(
        DEMO_PANEL,
        name,
        store=str(tmp_path / "store"),
        budget_usd=2.5,
        cron="15 4 * * 2",
        timezone="Europe/Paris",
    )


@pytest.mark.usefixtures("under_prefect")
def test_the_three_deployments_register_and_read_back(tmp_path: Path) -> None:
    name = f"reg-{uuid.uuid4().hex[:6]}"
    specs = _specs(name, tmp_path)
    assert [s.full_name for s in specs] == [
        f"evaluate-panel/{name}",
        f"evaluate-panel/{name}-rerun",
        f"campaign/{name}-campaign",
    ]
    for spec in specs:
        spec.runner_deployment().apply()
    scheduled, rerun, campaign = (_read(s.full_name) for s in specs)
    expected = {"panel": DEMO_PANEL, "store": str(tmp_path / "store"), "budget_usd": 2.5}
    # The scheduled run asks models called over the network again; the others reuse.
    assert scheduled.parameters == {**expected, "reuse_for": "never"}
    assert rerun.parameters == campaign.parameters == expected
    assert "reuse_for" in rerun.parameter_openapi_schema["properties"]
    for deployment, spec in zip((scheduled, rerun, campaign), specs, strict=True):
        assert deployment.parameters == spec.parameters
        assert deployment.entrypoint == spec.entrypoint
        assert "roadeval" in deployment.tags and deployment.description == spec.description
        # A module path: an installed roadeval needs no image and no remote storage.
        assert ":" not in deployment.entrypoint and deployment.pull_steps in (None, [])
    [schedule] = scheduled.schedules
    assert schedule.slug == f"{name}-cron" and schedule.active
    assert schedule.schedule.cron == "15 4 * * 2" and schedule.schedule.timezone == "Europe/Paris"
    assert rerun.schedules == [] and campaign.schedules == []
    assert scheduled.entrypoint == "roadeval.flows.prefect.deployed.evaluate_panel_file"
    assert campaign.entrypoint == "roadeval.flows.prefect.deployed.run_campaign"
    # The campaign's budget is a parameter it cannot run without; the rerun's baseline one it may.
    assert set(campaign.parameter_openapi_schema["required"]) == {"panel", "budget_usd"}
    assert "against" in rerun.parameter_openapi_schema["properties"]
    # Registered again with another cron: the slug updates the schedule in place.
    moved = panel_deployments(DEMO_PANEL, name, cron="0 5 * * *")[0]
    moved.runner_deployment().apply()
    [again] = _read(moved.full_name).schedules
    assert again.slug == schedule.slug and again.schedule.cron == "0 5 * * *"


@pytest.mark.usefixtures("under_prefect")
def test_deployments_for_a_process_work_pool(tmp_path: Path) -> None:
    from prefect.client.orchestration import get_client

    from roadeval.flows.prefect.deployments import apply_to_pool

    name, pool = f"pool-{uuid.uuid4().hex[:6]}", f"roadeval-{uuid.uuid4().hex[:6]}"
    specs = _specs(name, tmp_path)
    assert apply_to_pool(specs, pool) is True
    assert apply_to_pool(specs, pool) is False  # the pool is there now
    with get_client(sync_client=True) as client:
        assert client.read_work_pool(pool).type == "process"
    for spec in specs:
        deployment = _read(spec.full_name)
        assert deployment.work_pool_name == pool and deployment.entrypoint == spec.entrypoint


@pytest.mark.usefixtures("under_prefect")
def test_deploy_list_shows_schedules_and_next_runs(tmp_path: Path) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId

    name = f"list-{uuid.uuid4().hex[:6]}"
    specs = panel_deployments(DEMO_PANEL, name, store=str(tmp_path / "s"), cron="30 2 * * 3")
    for spec in specs:
        spec.runner_deployment().apply()
    deployment_id = _read(specs[0].full_name).id

    def scheduled() -> list[Any]:
        with get_client(sync_client=True) as client:
            return client.read_flow_runs(
                deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[deployment_id]))
            )

    # The server's scheduler makes the scheduled deployment's next runs within seconds.
    wait_until(lambda: bool(scheduled()), timeout=30, what="the scheduler's runs")
    first = min(run.expected_start_time for run in scheduled())
    result = invoke("deploy", "--list")
    assert result.exit_code == 0, result.output
    lines = {line.split("│")[1].strip(): line for line in result.output.splitlines() if "│" in line}
    row = lines[f"evaluate-panel/{name}"]
    assert "30 2 * * 3 (UTC)" in row and f"[{name}-cron]" in row
    assert first.isoformat(timespec="minutes") in row
    assert first.weekday() == 2 and (first.hour, first.minute) == (2, 30)
    assert "on demand" in lines[f"evaluate-panel/{name}-rerun"]
    assert "on demand" in lines[f"campaign/{name}-campaign"]


def test_deploy_refuses_an_ephemeral_api(tmp_path: Path) -> None:
    # As a user starts it: no PREFECT_API_URL in the environment nor in a Prefect profile.
    env = {"PREFECT_API_URL": "", "PREFECT_PROFILES_PATH": str(tmp_path / "no-profiles.toml")}
    cli = run_cli(["deploy", "--panel", DEMO_PANEL], tmp_path, env)
    assert cli.process.returncode == 2, cli.stderr
    message = " ".join(cli.stderr.split())
    assert "no Prefect server: PREFECT_API_URL is not set" in message
    assert "ephemeral" in message and "prefect server start" in message
    assert "Traceback" not in cli.stderr and len(cli.stderr.strip().splitlines()) <= 3


def test_deploy_refuses_a_server_that_does_not_answer() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/api"
    with orchestrators.prefect_api(url):
        result = invoke("deploy", "--list")
    assert result.exit_code == 2, result.output
    message = " ".join(result.output.split())
    assert f"the Prefect API at {url} (PREFECT_API_URL) does not answer" in message
    assert "Traceback" not in result.output


class _RecordingApi:
    """A stand-in Prefect API that records every request it gets and answers each 404: where
    `deploy` would register, it shows whether anything was asked at all."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                recorder.requests.append(f"{self.command} {self.path}")
                self.send_response(404)
                self.send_header("content-length", "0")
                self.end_headers()

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/api"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize(
    ("cron", "expected"),
    [
        (
            "0 0 3 * * 1",
            "--cron '0 0 3 * * 1' has 6 fields, not the 5 of a cron line (minute hour "
            "day-of-month month day-of-week, e.g. '0 3 * * 1'); Prefect would take the last as "
            "seconds and the first five as minute to day-of-week ('0 0 3 * * 1' runs at 00:00:01 "
            "on the 3rd of each month)",
        ),
        ("61 3 * * 1", "--cron '61 3 * * 1': bad minute (minute hour day-of-month"),
        ("0 24 * * 1", "--cron '0 24 * * 1': bad hour"),
        ("0 3 30 2 *", "--cron '0 3 30 2 *': bad day-of-month"),
        ("0 3 * * funday", "--cron '0 3 * * funday': bad day-of-week"),
        ("*/0 3 * * *", "--cron '*/0 3 * * *': bad minute"),
        ("@weekly", "--cron '@weekly' has 1 fields, not the 5 of a cron line"),
        ("garbage in", "--cron 'garbage in' has 2 fields"),
    ],
)
def test_a_cron_line_that_is_not_five_valid_fields_registers_nothing(
    tmp_path: Path, cron: str, expected: str
) -> None:
    """Refused before the Prefect server is asked anything: not even its health."""
    api = _RecordingApi()
    try:
        with orchestrators.prefect_api(api.url):
            result = invoke("deploy", "--panel", DEMO_PANEL, "--cron", cron)
    finally:
        api.close()
    assert result.exit_code == 2, result.output
    assert " ".join(result.output.split()).startswith(f"error: {expected}"), result.output
    assert "Traceback" not in result.output
    assert api.requests == []


def test_every_declared_schedule_is_a_five_field_cron_line() -> None:
    """The same check holds for deployments made in code (the demo's) and for prefect.yaml."""
    with pytest.raises(ValueError, match=r"cron '0 0 3 \* \* 1' has 6 fields"):
        panel_deployments(DEMO_PANEL, "six", cron="0 0 3 * * 1")
    declared = yaml.safe_load((REPO / "prefect.yaml").read_text())
    crons = [s["cron"] for d in declared["deployments"] for s in d.get("schedules") or []]
    assert crons and all(cron_problem(cron) is None for cron in crons), crons
    assert all(cron_problem(s.cron) is None for s in demo.deployments() if s.cron is not None)


def test_the_scheduled_run_asks_models_over_the_network_again_unless_the_panel_says(
    tmp_path: Path,
) -> None:
    """The scheduled deployment's `reuse_for` is the default of the models called over the
    network whose entry and panel set none; built-in baselines keep reusing."""
    scheduled, rerun, campaign = panel_deployments(DEMO_PANEL, "fresh")
    assert scheduled.parameters["reuse_for"] == "never"
    assert "reuse_for" not in rerun.parameters and "reuse_for" not in campaign.parameters
    assert "reuse_for" in inspect.signature(evaluate_panel_file.fn).parameters
    models = [
        {"model": "openai/api", "name": "api"},
        {"model": "openai/api", "name": "weekly", "reuse_for": "7d"},
        {"model": "roadeval/random", "name": "random"},
        {"model": "roadeval/always-a", "name": "always-a", "reuse_for": "never"},
    ]
    body = {"suites": [{"name": "trip", "demo": True}], "models": models}
    judge = {"model": "openai/j", "api_base": "http://127.0.0.1:9/v1"}

    def resolved(**extra: Any) -> dict[str, str | None]:
        panel = panel_from_dict({**body, **extra}, source="p.yaml", base_dir=tmp_path)
        done = with_reuse_for(panel, scheduled.parameters["reuse_for"])
        return {m.label: m.reuse_for for m in [*done.models, *([done.judge] if done.judge else [])]}

    assert resolved(judge=judge) == {
        "api": "never",
        "weekly": "7d",
        "random": "forever",
        "always-a": "never",
        "openai/j": "never",
    }
    # The panel's own reuse_for wins over the deployment's, for every model but the baselines.
    assert resolved(reuse_for="30d")["api"] == "30d"
    assert resolved(reuse_for="30d")["random"] == "forever"
    with pytest.raises(PanelError, match=r"reuse_for \(the run's default\): '7 days' is not"):
        with_reuse_for(panel_from_dict(body, source="p.yaml", base_dir=tmp_path), "7 days")


@pytest.mark.usefixtures("under_prefect")
def test_bad_deploy_options_are_one_line_errors(tmp_path: Path) -> None:
    cases = [
        (["--panel", str(tmp_path / "missing.yaml")], "missing.yaml: no such panel file"),
        (["--panel", DEMO_PANEL, "--cron", "every monday"], "--cron 'every monday' has 2 fields"),
        (["--panel", DEMO_PANEL, "--timezone", "Mars/Olympus"], "not a time zone"),
        (["--panel", "bundled:nope"], "bundled:nope: no such bundled panel"),
        (["--panel", DEMO_PANEL, "--budget-usd", "0"], "--budget-usd: 0 is not more than 0"),
        (["--panel", DEMO_PANEL, "--list"], "--list takes no --panel"),
        (["--panel", "ftp://host/p.yaml"], "not this scheme"),
    ]
    for args, expected in cases:
        result = invoke("deploy", *args)
        assert result.exit_code == 2, (args, result.output)
        assert expected in " ".join(result.output.split()), (args, result.output)
        assert "Traceback" not in result.output


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def test_prefect_deploy_all_registers_the_demo_deployments(
    tmp_path: Path, prefect_server: PrefectServer
) -> None:
    """prefect.yaml, deployed by Prefect's own CLI, gives the deployments deployments/demo.py
    declares."""
    declared = yaml.safe_load((REPO / "prefect.yaml").read_text())
    # No build or push: the workers run the installed roadeval.
    assert declared["build"] is None and declared["push"] is None
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(REPO / "prefect.yaml", project / "prefect.yaml")
    env = {**os.environ, "PREFECT_API_URL": prefect_server.api_url, "PWD": str(project)}
    prefect = [str(Path(sys.executable).parent / "prefect"), "--no-prompt"]
    with orchestrators.prefect_api(prefect_server.api_url):
        _ensure_pool(demo.WORK_POOL)
    done = subprocess.run([*prefect, "deploy", "--all"], cwd=project, env=env, capture_output=True)
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    specs = demo.deployments()
    assert sorted(d["name"] for d in declared["deployments"]) == sorted(s.name for s in specs)
    assert {spec.kind for spec in specs} == set(Kind)
    with orchestrators.prefect_api(prefect_server.api_url):
        for spec in specs:
            d = _read(spec.full_name)
            assert d.entrypoint == spec.entrypoint and d.parameters == spec.parameters
            assert d.tags == list(spec.tags) and d.work_pool_name == demo.WORK_POOL
            assert _normal(d.description or "") == _normal(spec.description)
            schedules = [(s.schedule.cron, s.schedule.timezone, s.slug) for s in d.schedules]
            assert schedules == ([(spec.cron, spec.timezone, spec.slug)] if spec.cron else [])
            # Runs start in the folder `prefect deploy` ran in (the store's default is there).
            [step] = d.pull_steps
            assert step["prefect.deployments.steps.set_working_directory"] == {
                "directory": str(project)
            }
