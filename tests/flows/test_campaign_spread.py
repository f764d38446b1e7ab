"""A budget over the whole run: judge calls made from Ray workers and answers made in answer
worker processes are reserved against the same cap, and the ledger stays within it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from roadeval.benchmarks.registry import get_suite

from support.model_server import ModelServer, Reply
from support.trip_panel import invoke, query_csv, trip_gold, write_panel

pytestmark = pytest.mark.usefixtures("inline")

PRICED = {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}


@pytest.mark.usefixtures("ray_session")
def test_judge_calls_on_ray_are_inside_the_budget(tmp_path: Path, server: ModelServer) -> None:
    source = get_suite("stride").generate_demo(tmp_path / "stride-src")
    server.rules["cand"] = lambda body, hit: Reply("B", prompt_tokens=900, completion_tokens=4)
    server.rules["vl-judge"] = lambda body, hit: Reply(
        '{"score": 6, "rationale": "partly"}', prompt_tokens=900, completion_tokens=12
    )
    common: dict[str, Any] = {"api_base": server.api_base, "max_concurrency": 2, **PRICED}
    panel = {
        "suites": [{"name": "stride", "source": str(source)}],
        "models": [
            {"model": "openai/cand", "name": "cand", "params": {"max_tokens": 64}, **common}
        ],
        "judge": {"model": "openai/vl-judge", "name": "vl", **common},
        "scoring": {"engine": "ray", "batch_size": 2},
    }
    path = tmp_path / "panel.yaml"
    path.write_text(yaml.safe_dump(panel))
    store = str(tmp_path / "store")
    full = invoke("campaign", "--panel", str(path), "--store", store, "--dry-run")
    assert full.exit_code == 0, full.output
    [worst] = query_csv(store, "select sum(worst_usd) from estimates")[1:]
    # Half of the worst case: the answers alone fit, the judge calls cannot all follow.
    budget = float(worst) / 2
    result = invoke(
        "campaign", "--panel", str(path), "--store", store, "--budget-usd", f"{budget:.6f}"
    )
    assert result.exit_code == 3, result.output
    spent = query_csv(
        store,
        "select role, count(*), sum(cost_usd) from costs where run_id = (select run_id from "
        "runs where status = 'out_of_budget') group by role order by role",
    )[1:]
    assert [row.split(",")[0] for row in spent] == ["answer", "judge"]  # the judge was paid too
    total = sum(float(row.split(",")[2]) for row in spent)
    assert 0 < total <= budget


def test_a_budget_holds_over_answer_worker_processes(tmp_path: Path, server: ModelServer) -> None:
    source, _ = trip_gold(tmp_path)
    server.rules["spread"] = lambda body, hit: Reply("A", prompt_tokens=50, completion_tokens=1)
    panel = write_panel(
        tmp_path / "panel.yaml",
        source,
        [
            {
                "model": "openai/spread",
                "name": "spread",
                "api_base": server.api_base,
                "params": {"max_tokens": 8},
                "max_concurrency": 2,
                **PRICED,
            }
        ],
        scoring={"engine": "local"},
        render={"engine": "local"},
        chunk_size=5,
    )
    store = str(tmp_path / "store")
    # Any one request fits an empty budget (a point cloud's render, the largest, reserves about
    # $0.0018), so the stop never depends on which shard the workers reach first; the 43 answers
    # cost $0.0022, so the run must stop before them all.
    budget = 0.002
    result = invoke(
        "campaign",
        "--panel",
        str(panel),
        "--store",
        store,
        "--budget-usd",
        str(budget),
        "--processes",
        "2",
    )
    assert result.exit_code == 3, result.output
    answered = len(server.hits_for("spread"))
    assert 0 < answered < 43
    [row] = query_csv(
        store,
        "select status, n_calls, cost_usd, json_extract(manifest_json, '$.answer_processes') "
        "from runs",
    )[1:]
    status, calls, cost, processes = row.split(",")
    assert status == "out_of_budget" and int(calls) == answered and processes == "2"
    [spent] = query_csv(store, "select sum(cost_usd) from costs")[1:]
    assert 0 < float(spent) <= budget and abs(float(spent) - float(cost)) < 1e-12
    resumed = invoke(
        "campaign",
        "--panel",
        str(panel),
        "--store",
        store,
        "--budget-usd",
        "1",
        "--processes",
        "2",
    )
    assert resumed.exit_code == 0, resumed.output
    assert len(server.hits_for("spread")) == 43  # nothing paid twice
