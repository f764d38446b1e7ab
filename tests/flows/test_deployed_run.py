"""A deployed run is an ordinary run, and shows itself in the Prefect UI: `roadeval run` under the
session's Prefect server, then `roadeval deploy` serving the panel from a process of its own and
a `run_deployment` of its rerun: Completed, a rerun of the first run in the same store, its `runs`
row naming the flow run and the deployment, its log lines, task runs and artifacts readable
through the Prefect API."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
import yaml

from support.cli_process import start_cli, wait_until
from support.model_server import ModelServer, Reply
from support.orchestrators import prefect_settings
from support.prefect_server import PrefectServer
from support.trip_panel import invoke, trip_gold, write_panel

pytestmark = pytest.mark.usefixtures("under_prefect")


def _panel(path: Path) -> Path:
    panel = {
        "name": f"deployed-{uuid.uuid4().hex[:6]}",
        "scoring": {"engine": "local"},
        "suites": [{"name": "trip", "demo": True}],
        "models": [
            {"name": "random", "model": "roadeval/random", "params": {"seed": 0}},
            {"name": "always-a", "model": "roadeval/always-a"},
        ],
    }
    path.write_text(yaml.safe_dump(panel))
    return path


def _runs(store: Path) -> list[dict[str, Any]]:
    result = invoke(
        "query",
        "--store",
        str(store),
        "--format",
        "json",
        "select run_id, status, orchestrator, flow_run_id, deployment, baseline_run_id, n_items, "
        "n_scored from runs order by started_at",
    )
    assert result.exit_code == 0, result.output
    rows: list[dict[str, Any]] = json.loads(result.output)
    return rows


def _logs(flow_run_id: str) -> list[str]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId

    with get_client(sync_client=True) as client:
        logs = client.read_logs(
            log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[UUID(flow_run_id)]))
        )
    return [log.message for log in logs]


# Prefect would ship log lines a minute apart: the run's lines are in the API as its flow run
# ends only because the run sends them (the flow run's process may be stopped right after).
_RARE_LOG_BATCHES = {"PREFECT_LOGGING_TO_API_BATCH_INTERVAL": "60"}


def _run_lines(flow_run_id: str, run_id: str, shards: int) -> list[str]:
    """The run's own lines in the flow run's logs: all of them already sent when the flow run
    is over (Prefect would ship the last batch only as its process ends)."""
    lines = [m for m in _logs(flow_run_id) if run_id in m or m.startswith("shard ")]
    assert any(m.startswith(f"run {run_id} finished") for m in lines), lines
    assert sum(m.startswith(f"shard {run_id}-") for m in lines) == shards
    return lines


def test_a_served_deployment_runs_a_rerun_that_shows_in_prefect(
    tmp_path: Path, prefect_server: PrefectServer
) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        ArtifactFilter,
        ArtifactFilterFlowRunId,
        FlowRunFilter,
        FlowRunFilterId,
    )
    from prefect.deployments import run_deployment

    panel, store = _panel(tmp_path / "panel.yaml"), tmp_path / "store"
    name = f"served-{uuid.uuid4().hex[:6]}"
    # Serving starts (seconds) while the panel is run by hand.
    serving = start_cli(
        ["deploy", "--panel", str(panel), "--store", str(store), "--name", name],
        tmp_path / "serve",
        {
            "PREFECT_API_URL": prefect_server.api_url,
            "PREFECT_RUNNER_POLL_FREQUENCY": "1",
            **_RARE_LOG_BATCHES,
        },
    )
    try:
        # A first run by hand, under Prefect: its lines reach the API past the CLI's quiet
        # console.
        with prefect_settings(_RARE_LOG_BATCHES):
            first = invoke("run", "--panel", str(panel), "--store", str(store))
        assert first.exit_code == 0, first.output
        [by_hand] = _runs(store)
        assert by_hand["orchestrator"] == "prefect" and by_hand["deployment"] is None
        lines = _run_lines(by_hand["flow_run_id"], by_hand["run_id"], 2)
        assert lines[0].startswith(f"run {by_hand['run_id']} of panel ") and str(store) in lines[0]

        def ready() -> bool:
            from prefect.exceptions import ObjectNotFound

            with get_client(sync_client=True) as client:
                try:
                    found = client.read_deployment_by_name(f"evaluate-panel/{name}-rerun")
                except ObjectNotFound:
                    return False
            return str(getattr(found.status, "value", found.status)) == "READY"

        wait_until(ready, timeout=60, what="the served deployments")
        flow_run = run_deployment(f"evaluate-panel/{name}-rerun", timeout=180, poll_interval=1)
    finally:
        serving.signal_group(15)
        serving.wait(timeout=30)
    assert flow_run.state is not None and flow_run.state.is_completed(), flow_run.state
    assert "serving evaluate-panel/" in serving.stdout, serving.stdout + serving.stderr
    with get_client(sync_client=True) as client:
        # Stopped serving, the schedule is paused: nobody would run what it starts.
        assert client.read_deployment_by_name(f"evaluate-panel/{name}").paused

    # The same store, an ordinary `runs` row: a rerun of the run by hand, named by its flow run.
    by_hand_again, deployed = _runs(store)
    assert by_hand_again == by_hand
    assert deployed["status"] == "finished" and deployed["orchestrator"] == "prefect"
    assert deployed["flow_run_id"] == str(flow_run.id)
    assert deployed["deployment"] == f"{name}-rerun"
    assert deployed["baseline_run_id"] == by_hand["run_id"]
    assert deployed["n_items"] == deployed["n_scored"] == by_hand["n_items"] > 0
    result = invoke("changes", deployed["run_id"], "--store", str(store))
    assert result.exit_code == 0, result.output

    run_id = deployed["run_id"]
    lines = _run_lines(str(flow_run.id), run_id, 2)
    assert any(m.startswith(f"run {run_id} finished: ") and "manifest" in m for m in lines)
    assert f"compared with run {by_hand['run_id']}" in lines[0]
    with get_client(sync_client=True) as client:
        this_run = FlowRunFilter(id=FlowRunFilterId(any_=[flow_run.id]))
        tasks = {t.name for t in client.read_task_runs(flow_run_filter=this_run)}
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run.id]))
        )
    # Task runs by suite, model and chunk.
    assert {"answer/trip/random/chunk 0", "answer/trip/always-a/chunk 1", "render/trip"} <= tasks
    kinds = {a.key: a for a in artifacts}
    panel_key = yaml.safe_load(panel.read_text())["name"]
    table = kinds[f"leaderboard-{panel_key}-trip"]
    assert table.type == "table"
    rows = json.loads(table.data) if isinstance(table.data, str) else table.data
    assert sorted(r["model"] for r in rows) == ["always-a", "random"]
    assert all(0.0 <= r["accuracy ↑"] <= 1.0 for r in rows)
    health = kinds[f"run-health-{panel_key}"]
    assert health.type == "markdown" and f"Run `{run_id}`: finished" in health.data
    assert f"Compared with run `{by_hand['run_id']}`" in health.data
    assert "| trip | random |" in health.data and "| **total** |" in health.data


def test_the_deployed_flow_fails_a_run_whose_answers_are_errors(
    tmp_path: Path, server: ModelServer
) -> None:
    from roadeval.flows.prefect.deployed import evaluate_panel_file

    source, _ = trip_gold(tmp_path)
    server.rules["down"] = lambda body, hit: Reply(status=500, text="internal")
    model = {"model": "openai/down", "api_base": server.api_base, "num_retries": 0}
    panel = write_panel(
        tmp_path / "panel.yaml",
        source,
        [model],
        scoring={"engine": "local"},
        render={"engine": "local"},
    )
    store = tmp_path / "store"
    # As `roadeval run` exits 1: the run finished and landed, its answers are errors.
    state = evaluate_panel_file(panel=str(panel), store=str(store), return_state=True)
    assert state.is_failed() and "items ended in model errors" in (state.message or "")
    [row] = _runs(store)
    assert row["status"] == "finished" and row["orchestrator"] == "prefect"
    assert row["flow_run_id"] is not None and row["deployment"] is None
    # A budget that is no amount is refused before anything is asked.
    hits = len(server.hits_for("down"))
    state = evaluate_panel_file(panel=str(panel), budget_usd=-1.0, return_state=True)
    assert state.is_failed() and "budget_usd: -1 is not more than 0" in (state.message or "")
    assert len(server.hits_for("down")) == hits
