"""The call path through the CLI: a flaky endpoint loses no healthy item, every HTTP request is a
row, and a timed-out retry is visible as possibly billed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support.model_server import Fault, ModelServer, Reply
from support.trip_panel import gold_rule, invoke, query_csv, seen_by_model, trip_gold, write_panel

pytestmark = pytest.mark.usefixtures("under_prefect")


def test_drops_and_truncations_under_load_are_retried_and_every_request_is_a_row(
    tmp_path: Path, server: ModelServer
) -> None:
    source, gold = trip_gold(tmp_path)
    answer = gold_rule(gold)
    tries: dict[str, int] = {}

    def flaky(body: dict[str, Any], hit: int) -> Reply:
        seen = str(seen_by_model(body["messages"]))
        tries[seen] = tries.get(seen, 0) + 1
        # Every item's first request is dropped, its second truncated, its third answered:
        # dozens of transport failures in a row across concurrent calls.
        fault = {1: Fault.DROP, 2: Fault.TRUNCATE}.get(tries[seen])
        return Reply(answer(body, hit).text, fault=fault)

    server.rules["flaky"] = flaky
    model = {
        "model": "openai/flaky",
        "api_base": server.api_base,
        "num_retries": 3,
        "retry_backoff_s": 0.01,
        "max_concurrency": 8,
    }
    store = tmp_path / "store"
    panel = write_panel(tmp_path / "p.yaml", source, [model])
    result = invoke("run", "--panel", str(panel), "--store", str(store))
    assert result.exit_code == 0, result.output
    n = len(gold)
    assert query_csv(str(store), "select avg(value) from scores where metric = 'correct'")[1:] == [
        "1.0"
    ]
    lines = query_csv(
        str(store),
        "select try_number, coalesce(error_kind, 'ok'), may_be_billed, count(*) from responses "
        "group by all order by try_number",
    )
    assert lines[1:] == [
        f"1,connection_dropped,True,{n}",
        f"2,truncated_reply,True,{n}",
        f"3,ok,False,{n}",
    ]
    [manifest] = [json.loads(p.read_text()) for p in (store / "runs").glob("*/manifest.json")]
    totals = manifest["totals"]
    assert (totals["calls"], totals["requests"], totals["retries"]) == (n, 3 * n, 2 * n)
    assert totals["errors"] == 0 and totals["may_be_billed"] == 2 * n
    assert "the provider may still bill them" in " ".join(result.output.split())


def test_a_timed_out_request_that_is_retried_is_visible_as_such(
    tmp_path: Path, server: ModelServer
) -> None:
    source, gold = trip_gold(tmp_path)
    answer = gold_rule(gold)
    tries: dict[str, int] = {}

    def slow_once(body: dict[str, Any], hit: int) -> Reply:
        seen = str(seen_by_model(body["messages"]))
        tries[seen] = tries.get(seen, 0) + 1
        reply = answer(body, hit)
        return Reply(reply.text, fault=Fault.TRICKLE, trickle_s=0.2) if tries[seen] == 1 else reply

    server.rules["slow"] = slow_once
    model = {
        "model": "openai/slow",
        "api_base": server.api_base,
        "timeout_s": 2.0,
        "num_retries": 1,
        "retry_backoff_s": 0.0,
        "max_concurrency": 16,
    }
    store = tmp_path / "store"
    panel = write_panel(tmp_path / "p.yaml", source, [model])
    result = invoke("run", "--panel", str(panel), "--store", str(store))
    assert result.exit_code == 0, result.output
    lines = query_csv(
        str(store),
        "select try_number, coalesce(error_kind, 'ok'), may_be_billed, count(*) from costs "
        "group by all order by try_number",
    )
    assert lines[1:] == [f"1,timeout,True,{len(gold)}", f"2,ok,False,{len(gold)}"]
