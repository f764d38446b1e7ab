"""Answers are attributed to what answered them: the endpoint is part of the request key, a
renamed model is not paid twice, a broken cache entry is a reported miss, and what a run spent
has one answer (the costs view and the runs row agree)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support.model_server import ModelServer, Reply
from support.trip_panel import gold_rule, invoke, query_csv, seen_by_model, trip_gold, write_panel

pytestmark = pytest.mark.usefixtures("under_prefect")


def _model(server: ModelServer, name: str, prefix: str, **extra: Any) -> dict[str, Any]:
    return {
        "model": "openai/qwen-vl",
        "name": name,
        "api_base": server.api_base_at(prefix),
        "params": {"temperature": 0},
        **extra,
    }


def test_same_model_string_at_another_endpoint_gets_its_own_answers(
    tmp_path: Path, server: ModelServer
) -> None:
    source, gold = trip_gold(tmp_path)
    answer = gold_rule(gold)

    def by_endpoint(body: dict[str, Any], hit: int) -> Reply:
        # The base model always says A; the fine-tuned one knows the answers.
        return answer(body, hit) if body["_path"].startswith("/ft/") else Reply("A")

    server.rules["qwen-vl"] = by_endpoint
    store = str(tmp_path / "store")
    base = write_panel(tmp_path / "base.yaml", source, [_model(server, "base", "base")])
    assert invoke("run", "--panel", str(base), "--store", store, "--no-report").exit_code == 0
    tuned = write_panel(tmp_path / "ft.yaml", source, [_model(server, "tuned", "ft")])
    assert invoke("run", "--panel", str(tuned), "--store", store, "--no-report").exit_code == 0

    n = len(gold)
    assert len(server.hits_for("qwen-vl", "base")) == n
    assert len(server.hits_for("qwen-vl", "ft")) == n, "the tuned endpoint was never asked"
    lines = query_csv(
        store,
        "select model, api_base, avg(value) from scores join responses using "
        "(run_id, item_id, model, request_key) where metric = 'correct' "
        "group by all order by model",
    )
    assert (
        lines[1] == f"base,{server.api_base_at('base')},{sum(g == 'A' for g in gold.values()) / n}"
    )
    assert lines[2] == f"tuned,{server.api_base_at('ft')},1.0"


def test_renaming_a_model_does_not_pay_for_it_again(tmp_path: Path, server: ModelServer) -> None:
    source, gold = trip_gold(tmp_path)
    server.rules["qwen-vl"] = gold_rule(gold)
    store = str(tmp_path / "store")
    for name in ("qwen", "qwen-renamed"):
        panel = write_panel(tmp_path / f"{name}.yaml", source, [_model(server, name, "v")])
        assert invoke("run", "--panel", str(panel), "--store", store, "--no-report").exit_code == 0
    assert len(server.hits_for("qwen-vl")) == len(gold)
    lines = query_csv(store, "select n_calls, n_cached from runs order by started_at")
    assert lines[1:] == [f"{len(gold)},0", f"0,{len(gold)}"]


def test_a_corrupt_or_empty_cache_entry_is_a_reported_miss(
    tmp_path: Path, server: ModelServer
) -> None:
    source, gold = trip_gold(tmp_path)
    server.rules["qwen-vl"] = gold_rule(gold)
    store = tmp_path / "store"
    panel = write_panel(tmp_path / "p.yaml", source, [_model(server, "qwen", "v")])
    assert invoke("run", "--panel", str(panel), "--store", str(store), "--no-report").exit_code == 0

    entries = sorted((store / "cache" / "responses").rglob("*.json"))
    truncated, emptied = entries[0], entries[1]
    truncated.write_bytes(truncated.read_bytes()[:20])
    emptied.write_bytes(b"")
    # A panel of another name has no baseline run to take answers from: the cache answers.
    panel = write_panel(
        tmp_path / "fresh.yaml", source, [_model(server, "qwen", "v")], name="fresh"
    )
    again = invoke("run", "--panel", str(panel), "--store", str(store), "--no-report")
    assert again.exit_code == 0, again.output
    # Only the two broken entries were asked again; the rest came from the store.
    assert len(server.hits_for("qwen-vl")) == len(gold) + 2
    assert "2 stored answers could not be read and were asked again" in " ".join(
        again.output.split()
    )
    [manifest] = [
        json.loads(p.read_text())
        for p in (store / "runs").glob("*/manifest.json")
        if json.loads(p.read_text())["totals"]["corrupt_cache"]
    ]
    listed = manifest["counts"][0]["corrupt_cache_entries"]
    assert len(listed) == 2
    assert any(truncated.stem in entry and "unreadable" in entry for entry in listed)
    assert any(emptied.stem in entry for entry in listed)
    # The broken entries were replaced by the new answers: a third run asks nothing.
    assert invoke("run", "--panel", str(panel), "--store", str(store), "--no-report").exit_code == 0
    assert len(server.hits_for("qwen-vl")) == len(gold) + 2


def test_costs_view_and_runs_row_agree_with_retries_and_reuse(
    tmp_path: Path, server: ModelServer
) -> None:
    source, gold = trip_gold(tmp_path)
    answer = gold_rule(gold)
    tries: dict[str, int] = {}

    def busy_once(body: dict[str, Any], hit: int) -> Reply:
        seen = str(seen_by_model(body["messages"]))
        tries[seen] = tries.get(seen, 0) + 1
        if tries[seen] == 1:
            return Reply(status=429, headers={"retry-after": "0"})
        reply = answer(body, hit)
        return Reply(reply.text, prompt_tokens=1000, completion_tokens=10)

    server.rules["qwen-vl"] = busy_once
    priced = _model(
        server,
        "qwen",
        "v",
        input_cost_per_token=1e-6,
        output_cost_per_token=1e-5,
        retry_backoff_s=0.01,
    )
    store = str(tmp_path / "store")
    panel = write_panel(tmp_path / "p.yaml", source, [priced])
    for _ in range(2):
        assert invoke("run", "--panel", str(panel), "--store", store, "--no-report").exit_code == 0
    lines = query_csv(
        store,
        "select r.run_id, r.cost_usd, sum(c.cost_usd), sum(c.original_cost_usd), count(*), "
        "r.n_requests from runs r join costs c using (run_id) "
        "group by all order by min(r.started_at)",
    )
    first, second = (line.split(",") for line in lines[1:])
    n, per_answer = len(gold), 1000 * 1e-6 + 10 * 1e-5
    # First run: two requests per item (a 429, then the answer), each a row; it paid for n.
    assert float(first[1]) == pytest.approx(n * per_answer)
    assert float(first[2]) == pytest.approx(float(first[1]))
    assert int(first[4]) == 2 * n and int(first[5]) == 2 * n
    # Second run: every answer reused; it spent nothing, the original cost stays visible.
    assert float(second[1]) == 0.0 and float(second[2]) == 0.0
    assert float(second[3]) == pytest.approx(n * per_answer)
    assert int(second[4]) == n and int(second[5]) == 0
