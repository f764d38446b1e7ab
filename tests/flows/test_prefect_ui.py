"""What a run shows in the Prefect UI, read back through the API of the session's Prefect server:
its flow run named after the panel and the run, its task runs by stage, suite, model and chunk,
a report artifact that opens (a presigned link on S3, a link under the panel's `report_url`, or
the leaderboards as markdown with the report's path as text), a cancelled run's cut-off shards
ended Cancelled with one INFO line and no traceback, and `deploy --list` no longer saying
`served` once the serving process is gone."""

from __future__ import annotations

import json
import re
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any
from uuid import UUID

import boto3
import pytest
import yaml

from roadeval.flows.cli.main import app

from support.cli_process import CliProcess, start_cli, wait_until
from support.model_server import ModelServer, Reply
from support.prefect_server import PrefectServer
from support.trip_panel import gold_rule, invoke, runner, trip_gold, write_panel

pytestmark = pytest.mark.usefixtures("under_prefect")

BASELINES = [
    {"name": "random", "model": "roadeval/random", "params": {"seed": 0}},
    {"name": "always-a", "model": "roadeval/always-a"},
]


def _panel(path: Path, **extra: Any) -> tuple[Path, str]:
    name = f"ui-{uuid.uuid4().hex[:6]}"
    panel = {
        "name": name,
        "chunk_size": 50,
        "scoring": {"engine": "local"},
        "render": {"engine": "local"},
        "suites": [{"name": "trip", "demo": True}],
        "models": BASELINES,
        **extra,
    }
    path.write_text(yaml.safe_dump(panel))
    return path, name


def _runs(store: str) -> list[dict[str, Any]]:
    result = invoke(
        "query",
        "--store",
        store,
        "--format",
        "json",
        "select run_id, status, flow_run_id from runs order by started_at",
    )
    assert result.exit_code == 0, result.output
    rows: list[dict[str, Any]] = json.loads(result.output)
    return rows


def _seen(flow_run_id: str) -> tuple[Any, list[Any], dict[str, Any], list[Any]]:
    """The flow run, its task runs, its artifacts by key, and its log lines, as the UI reads
    them from the API."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        ArtifactFilter,
        ArtifactFilterFlowRunId,
        FlowRunFilter,
        FlowRunFilterId,
        LogFilter,
        LogFilterFlowRunId,
    )

    run_id = UUID(flow_run_id)
    with get_client(sync_client=True) as client:
        flow_run = client.read_flow_run(run_id)
        tasks = client.read_task_runs(
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[run_id]))
        )
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[run_id]))
        )
        logs = client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[run_id])))
    return flow_run, tasks, {a.key: a for a in artifacts}, logs


def _link(markdown: str) -> str:
    """The address of a link artifact (Prefect keeps it as `[text](link)` markdown)."""
    found = re.fullmatch(r"\[(?P<text>[^\]]*)\]\((?P<link>[^)]+)\)", markdown.strip())
    assert found is not None, markdown
    return found["link"]


def test_a_run_on_s3_is_named_and_links_its_report_presigned(
    tmp_path: Path, s3_endpoint: str
) -> None:
    bucket = f"ui-{uuid.uuid4().hex[:8]}"
    boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket=bucket)
    store = f"s3://{bucket}/runs"
    panel, name = _panel(tmp_path / "panel.yaml")
    result = invoke("run", "--panel", str(panel), "--store", store)
    assert result.exit_code == 0, result.output
    [row] = _runs(store)
    flow_run, tasks, artifacts, _ = _seen(row["flow_run_id"])

    assert flow_run.name == f"{name} · {row['run_id']}"
    names = {t.name for t in tasks}
    expected = {
        "load/trip",
        "render/trip",
        "plan/trip/random/chunk 0",
        "answer/trip/random/chunk 0",
        "answer/trip/always-a/chunk 1",
        f"report/{row['run_id']}",
    }
    assert expected <= names, sorted(names)

    link = _link(artifacts[f"report-{name}"].data)
    assert link.startswith(f"{s3_endpoint}/{bucket}/runs/reports/{row['run_id']}.html?")
    assert "X-Amz-Expires=604800" in link
    # It opens: the page itself, shown as a page rather than downloaded.
    with urllib.request.urlopen(link, timeout=10) as reply:
        assert reply.status == 200
        assert reply.headers["Content-Type"].startswith("text/html")
        assert f"{row['run_id']}".encode() in reply.read()


def test_report_url_links_the_report_under_it(tmp_path: Path) -> None:
    base = "https://reports.example.test/nightly/"
    panel, name = _panel(tmp_path / "panel.yaml", report_url=base)
    store = str(tmp_path / "store")
    result = invoke("run", "--panel", str(panel), "--store", store)
    assert result.exit_code == 0, result.output
    [row] = _runs(store)
    _, _, artifacts, _ = _seen(row["flow_run_id"])
    assert _link(artifacts[f"report-{name}"].data) == f"{base}{row['run_id']}.html"


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("file:///srv/reports", "is not an http:// or https:// URL (its scheme is 'file')"),
        ("s3://bucket/reports", "is not an http:// or https:// URL (its scheme is 's3')"),
        ("https://user:secret@host/reports", "holds a user or password"),
    ],
)
def test_a_report_url_that_is_no_web_address_is_refused(
    tmp_path: Path, given: str, said: str
) -> None:
    panel, _ = _panel(tmp_path / "panel.yaml", report_url=given)
    result = invoke("run", "--panel", str(panel), "--store", str(tmp_path / "store"))
    assert result.exit_code == 2, result.output
    assert f"{panel}: report_url: " in result.output and said in result.output
    assert "secret" not in result.output and "Traceback" not in result.output
    assert not (tmp_path / "store").exists()


def _list_row(name: str) -> str:
    """The `deploy --list` line of deployment `name` (wide enough for a row a line)."""
    result = runner.invoke(app, ["deploy", "--list"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    [line] = [line for line in result.output.splitlines() if f"/{name} " in line]
    return line


def test_a_deployed_run_is_named_and_its_artifact_holds_the_leaderboards(
    tmp_path: Path, prefect_server: PrefectServer
) -> None:
    from prefect.client.orchestration import get_client
    from prefect.deployments import run_deployment

    panel, name = _panel(tmp_path / "panel.yaml")
    store = tmp_path / "store"
    serving = start_cli(
        ["deploy", "--panel", str(panel), "--store", str(store), "--name", name],
        tmp_path / "serve",
        {"PREFECT_API_URL": prefect_server.api_url},
    )
    try:

        def polled() -> bool:
            from prefect.exceptions import ObjectNotFound

            with get_client(sync_client=True) as client:
                try:
                    found = client.read_deployment_by_name(f"evaluate-panel/{name}-rerun")
                except ObjectNotFound:
                    return False
            return found.last_polled is not None

        wait_until(polled, timeout=60, what="the served deployments")
        assert "│ served " in _list_row(f"{name}-rerun")
        flow_run = run_deployment(f"evaluate-panel/{name}-rerun", timeout=180, poll_interval=1)
    finally:
        serving.signal_group(15)
        serving.wait(timeout=30)
    ended = time.monotonic()
    assert flow_run.state is not None and flow_run.state.is_completed(), flow_run.state

    # Once the serving process is gone, the list says so within seconds, not a minute on.
    def not_served() -> bool:
        return "not served since" in _list_row(f"{name}-rerun")

    wait_until(not_served, timeout=20, what="`deploy --list` to stop saying served")
    assert time.monotonic() - ended < 15

    [row] = _runs(str(store))
    flow_run, tasks, artifacts, _ = _seen(row["flow_run_id"])
    assert flow_run.name == f"{name} · {row['run_id']}"
    names = {t.name for t in tasks}
    assert {"load/trip", "answer/trip/random/chunk 0", "answer/trip/always-a/chunk 1"} <= names

    report = artifacts[f"report-{name}"]
    assert report.type == "markdown"
    page = report.data
    # The report's path as text (a file:// link would open nothing from the UI).
    assert f"`{store}/reports/{row['run_id']}.html`" in page and "file://" not in page
    # The leaderboard as the terminal shows it: headings with arrows, ranks, a row per model.
    assert "## trip: leaderboard" in page
    [heading] = [line for line in page.splitlines() if line.startswith("| model |")]
    assert "accuracy ↑" in heading
    rows = [line for line in page.splitlines() if line.startswith("| random") or "always" in line]
    assert any("\\#1" in line for line in rows), page
    assert "higher is better" in page


def _slow_panel(tmp_path: Path, server: ModelServer) -> tuple[Path, int]:
    source, gold = trip_gold(tmp_path)
    answer = gold_rule(gold)
    server.rules["slow"] = lambda body, hit: Reply(answer(body, hit).text, delay_s=0.3)
    model = {"model": "openai/slow", "api_base": server.api_base, "max_concurrency": 1}
    path = write_panel(
        tmp_path / "panel.yaml",
        source,
        [model],
        name=f"cancel-{uuid.uuid4().hex[:6]}",
        chunk_size=2,
        scoring={"engine": "local"},
        render={"engine": "local"},
    )
    return path, len(gold)


def test_a_cancelled_run_ends_its_cut_off_shards_cancelled_with_one_info_line(
    tmp_path: Path, server: ModelServer, prefect_server: PrefectServer
) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.objects import StateType
    from prefect.deployments import run_deployment
    from prefect.states import Cancelling

    panel, items = _slow_panel(tmp_path, server)
    name = yaml.safe_load(panel.read_text())["name"]
    store = tmp_path / "store"
    serving: CliProcess = start_cli(
        ["deploy", "--panel", str(panel), "--store", str(store), "--name", name],
        tmp_path / "serve",
        {"PREFECT_API_URL": prefect_server.api_url, "ROADEVAL_STOP_GRACE_S": "1"},
    )
    try:

        def polled() -> bool:
            from prefect.exceptions import ObjectNotFound

            with get_client(sync_client=True) as client:
                try:
                    found = client.read_deployment_by_name(f"evaluate-panel/{name}-rerun")
                except ObjectNotFound:
                    return False
            return found.last_polled is not None

        wait_until(polled, timeout=60, what="the served deployments")
        started = run_deployment(f"evaluate-panel/{name}-rerun", timeout=0)
        # Cancelled as the UI cancels: once a few of its items are answered.
        wait_until(lambda: len(server.hits_for("slow")) >= 3, timeout=120, what="answers")
        with get_client(sync_client=True) as client:
            client.set_flow_run_state(started.id, Cancelling(message="from the test"), force=True)

            def over() -> bool:
                state = client.read_flow_run(started.id).state
                return state is not None and state.is_final()

            wait_until(over, timeout=90, what="the cancelled flow run to end")
    finally:
        serving.signal_group(15)
        serving.wait(timeout=30)
    assert len(server.hits_for("slow")) < items, "the run was not cut off"

    flow_run, tasks, _, logs = _seen(str(started.id))
    assert flow_run.state.type is StateType.CANCELLED, flow_run.state
    answers = {t.name: t.state.type for t in tasks if t.name.startswith("answer/")}
    cut = [n for n, state in answers.items() if state is StateType.CANCELLED]
    assert cut, answers
    assert set(answers.values()) <= {StateType.COMPLETED, StateType.CANCELLED}, answers
    [row] = _runs(str(store))
    assert row["status"] == "interrupted"
    # One line of the run's about the stop, at INFO; nothing at ERROR, no traceback.
    stop_lines = [log for log in logs if log.message.startswith(f"run {row['run_id']} stopped")]
    assert [log.level for log in stop_lines] == [20], [(x.level, x.message) for x in stop_lines]
    errors = [log.message for log in logs if log.level >= 40]
    assert not errors, errors
    assert not [log.message for log in logs if "Traceback" in log.message]
