"""`roadeval run` / `demo` / `query` end to end: Prefect flow, LiteLLM to a real server, store."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from roadeval.flows.cli.main import app

from support.html_tables import read_page
from support.model_server import ModelServer, Reply
from support.trip_panel import (
    gold_rule,
    invoke,
    query_csv,
    runner,
    seen_by_model,
    trip_gold,
    write_panel,
)

pytestmark = pytest.mark.usefixtures("under_prefect")


def test_demo_runs_offline_and_query_answers(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    first = result = invoke("demo", "--store", store)
    assert result.exit_code == 0, result.output
    assert "trip: leaderboard" in result.output
    assert "report: " in result.output
    assert "landed in" in result.output
    result = invoke(
        "query",
        "--store",
        store,
        "--format",
        "json",
        "select model, avg(value) as acc from scores where metric = 'correct' and suite = 'trip' "
        "group by model order by model",
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert {r["model"] for r in rows} == {"always-a", "random"}
    for row in rows:
        assert 0.0 <= row["acc"] <= 1.0
    suites = query_csv(store, "select distinct suite from metrics order by suite")
    assert suites[1:] == ["roadbench", "stride", "tbbench", "trip", "v2xqa"]
    # The baselines report the distributions they draw from: calibration is computed.
    ece = query_csv(
        store,
        "select model, round(value, 4) from metrics where suite = 'v2xqa' and task = '*' "
        "and slice = '' and metric = 'confidence_items' order by model",
    )
    assert ece[1:] == ["always-a,48.0", "random,48.0"]
    judged = query_csv(
        store,
        "select judge_model, count(*) from scores where suite = 'stride' "
        "and metric = 'judge_score' and status = 'scored' group by all",
    )
    assert judged[1:] == ["baseline-judge,6"]
    # The demo run again prints the same metrics, table for table: every answer it scores is
    # the one stored under the request key it names.
    again = invoke("demo", "--store", store)
    assert again.exit_code == 0, again.output

    def metrics_part(output: str) -> str:
        return output[: output.index("run health")]

    assert metrics_part(again.output) == metrics_part(first.output)
    per_run = query_csv(
        store,
        "select r.baseline_run_id is not null, count(*) from scores s join runs r using (run_id) "
        "group by all order by all",
    )
    assert per_run[1].split(",")[1] == per_run[2].split(",")[1]
    # A run the store does not hold is bad input, not a query of no rows.
    unknown = invoke("query", "--store", store, "--run", "20200101T000000Z-nosuch", "from scores")
    assert unknown.exit_code == 2
    said = " ".join(unknown.output.split())
    assert "--run 20200101T000000Z-nosuch: no such run in the store" in said
    assert "Traceback" not in unknown.output


def test_run_against_server_then_second_run_makes_no_calls(
    tmp_path: Path, server: ModelServer
) -> None:
    source, gold = trip_gold(tmp_path)
    server.rules["gold"] = gold_rule(gold)
    server.rules["wrong"] = lambda body, hit: Reply("Z")
    panel = write_panel(
        tmp_path / "panel.yaml",
        source,
        [
            {
                "model": "openai/gold",
                "name": "gold",
                "api_base": server.api_base,
                "params": {"temperature": 0},
            },
            {"model": "openai/wrong", "name": "wrong", "api_base": server.api_base},
        ],
    )
    store = tmp_path / "store"
    first = invoke("run", "--panel", str(panel), "--store", str(store), "--no-report")
    assert first.exit_code == 0, first.output
    n = len(gold)
    assert len(server.hits_for("gold")) == n and len(server.hits_for("wrong")) == n

    csv_lines = query_csv(
        str(store),
        "select model, avg(value) from scores where metric = 'correct' "
        "group by model order by model",
    )
    assert csv_lines[1:] == ["gold,1.0", "wrong,0.0"]
    # 'Z' is not A-D: every answer of that model is counted abnormal, none silently replaced.
    csv_lines = query_csv(
        str(store), "select status, count(*) from parses where model = 'wrong' group by status"
    )
    statuses = dict(line.split(",") for line in csv_lines[1:])
    assert sum(int(v) for v in statuses.values()) == n and "ok" not in statuses

    second = invoke("run", "--panel", str(panel), "--store", str(store), "--no-report")
    assert second.exit_code == 0, second.output
    assert len(server.hits_for("gold")) == n, "second run must be answered from the store"
    csv_lines = query_csv(
        str(store), "select r.n_calls, r.n_cached from runs r order by started_at"
    )
    assert csv_lines[1:] == [f"{2 * n},0", f"0,{2 * n}"]


def test_retries_honour_429_and_5xx_then_succeed(tmp_path: Path, server: ModelServer) -> None:
    source, gold = trip_gold(tmp_path)
    answer = gold_rule(gold)
    calls: dict[str, int] = {}

    def flaky(body: dict[str, Any], hit: int) -> Reply:
        seen = str(seen_by_model(body["messages"]))
        calls[seen] = calls.get(seen, 0) + 1
        if calls[seen] == 1:
            return Reply(status=429, headers={"retry-after": "0"}, text="slow down")
        if calls[seen] == 2:
            return Reply(status=503, text="busy")
        return answer(body, hit)

    server.rules["flaky"] = flaky
    panel = write_panel(
        tmp_path / "panel.yaml",
        source,
        [
            {
                "model": "openai/flaky",
                "api_base": server.api_base,
                "num_retries": 3,
                "retry_backoff_s": 0.01,
            }
        ],
    )
    result = invoke("run", "--panel", str(panel), "--store", str(tmp_path / "store"), "--no-report")
    assert result.exit_code == 0, result.output
    assert len(server.hits_for("flaky")) == 3 * len(gold)
    assert re.search(r"openai/flaky\s*│\s*\d+\s*│\s*\d+\s*│\s*0\s*│\s*0\s*│", result.output)


def test_persistent_server_errors_are_errors_not_wrong_answers(
    tmp_path: Path, server: ModelServer
) -> None:
    source, gold = trip_gold(tmp_path)
    server.rules["down"] = lambda body, hit: Reply(status=500, text="internal")
    panel = write_panel(
        tmp_path / "panel.yaml",
        source,
        [
            {
                "model": "openai/down",
                "api_base": server.api_base,
                "num_retries": 1,
                "retry_backoff_s": 0.01,
            }
        ],
    )
    store = tmp_path / "store"
    result = invoke("run", "--panel", str(panel), "--store", str(store), "--no-report")
    assert result.exit_code == 1
    assert "openai/down on trip" in result.output and "server_error" in result.output
    assert len(server.hits_for("down")) == 2 * len(gold)
    # No score was written for a failed call, and every HTTP try is in the responses table.
    csv_lines = query_csv(str(store), "select count(*) from scores")
    assert csv_lines[1] == "0"
    csv_lines = query_csv(
        str(store), "select error_kind, count(*) from responses group by error_kind"
    )
    assert csv_lines[1] == f"server_error,{2 * len(gold)}"


def test_unreachable_api_base_names_the_model_and_stops_calling(tmp_path: Path) -> None:
    source, _gold = trip_gold(tmp_path)
    panel = write_panel(
        tmp_path / "panel.yaml",
        source,
        [
            {
                "model": "openai/nowhere",
                "name": "nowhere",
                "api_base": "http://127.0.0.1:9/v1",
                "num_retries": 1,
                "retry_backoff_s": 0.01,
                "max_concurrency": 1,
            }
        ],
    )
    result = invoke("run", "--panel", str(panel), "--store", str(tmp_path / "store"))
    assert result.exit_code == 1
    assert "nowhere on trip" in result.output
    assert "unreachable at http://127.0.0.1:9/v1" in result.output or "connection" in result.output
    # No item was scored, and the report says why: every item's error, and what was sent.
    report = re.search(r"report: (\S+\.html)", result.output)
    assert report is not None, result.output
    page = read_page(Path(report.group(1)).read_text(encoding="utf-8"))
    health = page.table("health per suite and model (the run's counts)")
    row = dict(zip(health.headers, health.row("nowhere", at=1), strict=True))
    assert (row["items planned"], row["items scored"], row["items in error"]) == (
        str(len(_gold)),
        "0",
        str(len(_gold)),
    )
    costs = page.table("cost per model and role")
    sent = dict(zip(costs.headers, [cell.text for cell in costs.rows[0]], strict=True))
    assert sent["failed requests"] == sent["requests sent"] != "0"  # items skipped unsent: errors


@pytest.mark.parametrize(
    ("panel", "expected"),
    [
        (
            {
                "suites": [{"name": "trip", "demo": True}],
                "models": [{"model": "roadeval/random", "tempreature": 0}],
            },
            r"models\[0\] \(roadeval/random\)\.tempreature: unknown key",
        ),
        (
            {
                "suites": [{"name": "trip", "demo": True}],
                "models": [{"model": "roadeval/random", "params": {"seed": "zero"}}],
            },
            r"models\[0\] \(roadeval/random\): params\.seed: a baseline's seed is a whole "
            r"number, not 'zero'",
        ),
        (
            {
                "suites": [{"name": "trip", "demo": True}],
                "models": [{"name": "mine", "api_base": "http://x"}],
            },
            r"models\[0\] \(mine\)\.model: Field required",
        ),
        (
            {"suites": [{"name": "trip", "demo": True}], "models": [{"model": "gpt-4o"}]},
            r"models\[0\] \(gpt-4o\)\.model: .*no provider prefix",
        ),
        (
            {"suites": [{"name": "trip"}], "models": [{"model": "roadeval/random"}]},
            r"suites\[0\] \(trip\): .*exactly one of 'source'",
        ),
    ],
)
def test_bad_panel_names_file_and_field_and_writes_nothing(
    tmp_path: Path, panel: dict[str, Any], expected: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(panel))
    store = tmp_path / "store"
    result = runner.invoke(app, ["run", "--panel", str(path), "--store", str(store)])
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert str(path) in message
    assert re.search(expected, message), message
    assert not store.exists()


def test_bad_suite_row_names_file_line_field_and_publishes_nothing(tmp_path: Path) -> None:
    source, _ = trip_gold(tmp_path)
    items = source / "items.jsonl"
    lines = items.read_text().splitlines()
    row = json.loads(lines[2])
    del row["question"]
    lines[2] = json.dumps(row)
    items.write_text("\n".join(lines) + "\n")
    panel = write_panel(tmp_path / "panel.yaml", source, [{"model": "roadeval/always-a"}])
    store = tmp_path / "store"
    result = runner.invoke(app, ["run", "--panel", str(panel), "--store", str(store)])
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert "items.jsonl" in message and "line 3" in message and "question" in message
    assert not (store / "tables").exists()


@pytest.mark.s3
def test_demo_lands_in_s3_and_is_queryable(s3_endpoint: str) -> None:
    import boto3

    boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket="demo-runs")
    result = invoke("demo", "--store", "s3://demo-runs/nightly", "--no-report")
    assert result.exit_code == 0, result.output
    csv_lines = query_csv("s3://demo-runs/nightly", "select count(distinct suite) from metrics")
    assert int(csv_lines[1]) >= 1


def test_skip_bad_rows_runs_the_rest_and_reports_them_in_the_manifest(tmp_path: Path) -> None:
    source, gold = trip_gold(tmp_path)
    items = source / "items.jsonl"
    lines = items.read_text().splitlines()
    row = json.loads(lines[4])
    row["answer"] = "E"
    lines[4] = json.dumps(row)
    items.write_text("\n".join(lines) + "\n")
    panel = write_panel(tmp_path / "panel.yaml", source, [{"model": "roadeval/always-a"}])
    store = tmp_path / "store"
    result = runner.invoke(
        app,
        [
            "run",
            "--panel",
            str(panel),
            "--store",
            str(store),
            "--on-bad-item",
            "skip",
            "--no-report",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "1 bad rows skipped" in result.output
    [manifest_path] = list((store / "runs").glob("*/manifest.json"))
    manifest = json.loads(manifest_path.read_text())
    [suite] = manifest["suites"]
    assert suite["items"] == len(gold) - 1
    assert len(suite["skipped_items"]) == 1
    assert "line 5" in suite["skipped_items"][0] and "answer" in suite["skipped_items"][0]
    assert manifest["totals"]["calls"] == len(gold) - 1
    assert suite["prompt_version"] and suite["hash"] and manifest["code_version"]
    assert manifest["models"][0]["model"] == "roadeval/always-a"


def test_calls_run_concurrently_within_the_models_limit(
    tmp_path: Path, server: ModelServer
) -> None:
    import threading
    import time

    source, gold = trip_gold(tmp_path)
    answer = gold_rule(gold)
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def slow(body: dict[str, Any], hit: int) -> Reply:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        return answer(body, hit)

    server.rules["slow"] = slow
    panel = write_panel(
        tmp_path / "panel.yaml",
        source,
        [{"model": "openai/slow", "api_base": server.api_base, "max_concurrency": 3}],
        chunk_size=10,  # several shards of one model run at once; the limit holds across them
    )
    result = invoke("run", "--panel", str(panel), "--store", str(tmp_path / "store"), "--no-report")
    assert result.exit_code == 0, result.output
    assert state["peak"] == 3
