"""Heavy scoring on Ray through the real path: the same numbers as scoring in process, judge
calls from every worker through one actor (one authority for the judge's limits), and the
judge's calls landed, cached and counted as if made in the run's own process."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from support import probe_suite  # noqa: F401  (registers the suite)
from support.model_server import ModelServer, Reply, prompt_text
from support.trip_panel import invoke, query_csv

pytestmark = pytest.mark.usefixtures("under_prefect", "ray_session")


def _roadbench_panel(tmp_path: Path, engine: str) -> Path:
    path = tmp_path / f"{engine}.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "suites": [{"name": "roadbench", "demo": True, "tasks": ["3"]}],
                "models": [{"model": "roadeval/do-nothing"}],
                "scoring": {"engine": engine, "batch_size": 3},
            }
        )
    )
    return path


def test_task_3_scored_on_ray_gives_the_numbers_scored_in_process(tmp_path: Path) -> None:
    query = "select metric, value from metrics order by metric"
    lines = {}
    for engine in ("local", "ray"):
        store = str(tmp_path / engine)
        result = invoke("run", "--panel", str(_roadbench_panel(tmp_path, engine)), "--store", store)
        assert result.exit_code == 0, result.output
        lines[engine] = query_csv(store, query)
    assert len(lines["ray"]) > 10 and lines["ray"] == lines["local"]


def _probe_panel(tmp_path: Path, server: ModelServer, items: int) -> Path:
    source = tmp_path / "probe.jsonl"
    rows = [
        {"id": f"q{n}", "question": f"Which, case {n}?", "answer": "B"}
        | {"options": {"A": "one", "B": "two", "C": "three", "D": "four"}}
        for n in range(items)
    ]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    panel = {
        "suites": [{"name": "contract-probe", "source": str(source)}],
        "models": [{"model": "openai/probe", "name": "probe", "api_base": server.api_base}],
        "judge": {
            "model": "openai/probe-judge",
            "name": "judge",
            "api_base": server.api_base,
            "max_concurrency": 2,
        },
        "scoring": {"engine": "ray", "batch_size": 4},
    }
    path = tmp_path / "panel.yaml"
    path.write_text(yaml.safe_dump(panel))
    return path


def test_judge_calls_from_ray_workers_share_one_limit_and_land_like_any(
    tmp_path: Path, server: ModelServer
) -> None:
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}
    server.rules["probe"] = lambda body, hit: Reply("B")

    def judge(body: dict[str, Any], hit: int) -> Reply:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.1)
        with lock:
            state["now"] -= 1
        if "case 3" in prompt_text(body):
            return Reply("no idea")
        return Reply('{"score": 7}')

    server.rules["probe-judge"] = judge
    n = 16
    store = str(tmp_path / "store")
    panel = _probe_panel(tmp_path, server, n)
    result = invoke("run", "--panel", str(panel), "--store", store)
    assert result.exit_code == 0, result.output
    # Four batches on two workers judged at once, yet never more than the judge's limit.
    assert len(server.hits_for("probe-judge")) == n
    assert state["peak"] == 2
    scores = query_csv(
        store,
        "select status, count(*) from scores where metric = 'judge_score' group by all "
        "order by status",
    )
    assert scores[1:] == [f"scored,{n - 1}", "unscored,1"]
    costs = query_csv(store, "select role, count(*) from costs group by role order by role")
    assert costs[1:] == [f"answer,{n}", f"judge,{n}"]
    assert "judge calls" in result.output
    # The judge's verdicts were kept in the store by the actor: a second run asks nothing.
    again = invoke("run", "--panel", str(panel), "--store", store)
    assert again.exit_code == 0, again.output
    assert len(server.hits_for("probe-judge")) == n
    cached = query_csv(
        store,
        "select count(*) from responses where role = 'judge' and cached and run_id = "
        "(select run_id from runs order by started_at desc limit 1)",
    )
    assert cached[1] == str(n)
