"""Two runs (two processes) sharing a store and a model pay once for each request: they split
the requests between them, each waiting for the other's answers through claims in the store."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Any

import boto3
import pytest

from support.cli_process import start_cli
from support.model_server import ModelServer, Reply
from support.trip_panel import gold_rule, query_csv, trip_gold, write_panel

pytestmark = pytest.mark.usefixtures("under_prefect")


@pytest.fixture(params=["folder", pytest.param("s3", marks=pytest.mark.s3)])
def shared_store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store both runs use: a local folder, or a bucket on the S3 test server."""
    if request.param == "folder":
        return str(tmp_path / "store")
    endpoint = request.getfixturevalue("s3_endpoint")
    bucket = f"shared-{uuid.uuid4().hex[:8]}"
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=bucket)
    return f"s3://{bucket}/runs"


def test_two_processes_on_one_store_pay_once_and_both_score_everything(
    tmp_path: Path, server: ModelServer, shared_store: str
) -> None:
    source, gold = trip_gold(tmp_path)
    answer = gold_rule(gold)
    both_asking = threading.Event()

    def shared(body: dict[str, Any], hit: int) -> Reply:
        # No reply until both runs have requests in flight (two each at most), however far
        # apart the two processes start: so they surely overlap.
        if hit >= 4:
            both_asking.set()
        both_asking.wait(timeout=120)
        return Reply(answer(body, hit).text, delay_s=0.2)

    server.rules["shared"] = shared
    model = {"model": "openai/shared", "api_base": server.api_base, "max_concurrency": 2}
    panel = write_panel(tmp_path / "panel.yaml", source, [model], chunk_size=10)
    store = shared_store
    args = ["run", "--panel", str(panel), "--store", store, "--no-report"]
    runs = [start_cli(args, tmp_path / name) for name in ("one", "two")]
    for cli in runs:
        assert cli.wait(timeout=180) == 0, cli.stderr
        # The store's connection pool is sized to its concurrency: none is ever discarded.
        assert "Connection pool is full" not in cli.stdout + cli.stderr
    n = len(gold)
    assert len(server.hits_for("shared")) == n, "a request was paid for by both runs"
    lines = query_csv(store, "select n_calls, n_cached, n_scored, status from runs order by run_id")
    rows = [line.split(",") for line in lines[1:]]
    assert [row[2:] for row in rows] == [[str(n), "finished"], [str(n), "finished"]]
    calls = [int(row[0]) for row in rows]
    # Both runs bought answers (they ran at once) and together bought each exactly once.
    assert sum(calls) == n and min(calls) > 0
    assert [int(row[1]) for row in rows] == [n - c for c in calls]
