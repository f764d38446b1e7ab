"""The plan stage through the real path: before its first call, a run lands the list of every
request it will make (and those it may make), and then makes exactly those."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from support.model_server import ModelServer, Reply
from support.trip_panel import invoke, query_csv

pytestmark = pytest.mark.usefixtures("under_prefect")

# Valid YAML for every suite: RoadBench reads it (no re-ask), TRIP and TB-Bench score it wrong.
REPLY = "```yaml\nnum_lanes: 2\n```"


def test_the_plan_lists_exactly_the_calls_the_demo_run_makes(
    tmp_path: Path, server: ModelServer
) -> None:
    server.rules["planner"] = lambda body, hit: Reply(REPLY)
    panel = tmp_path / "panel.yaml"
    panel.write_text(
        yaml.safe_dump(
            {
                "suites": [{"name": n, "demo": True} for n in ("trip", "roadbench", "tbbench")],
                "models": [{"model": "openai/planner", "api_base": server.api_base}],
                "scoring": {"engine": "local"},
            }
        )
    )
    store = str(tmp_path / "store")
    assert invoke("run", "--panel", str(panel), "--store", store).exit_code == 0
    sent = len(server.hits_for("planner"))
    # One request per distinct key (items that show a model exactly the same thing, as some
    # demo FPV scenes do, share one answer), none of them answered before.
    planned = query_csv(
        store,
        "select count(distinct request_key), sum(answered::int) from plan where not conditional",
    )
    assert planned[1] == f"{sent},0"
    # Every request sent is one the plan named, attempt for attempt.
    unplanned = query_csv(
        store,
        "select count(*) from responses r where r.try_number = 1 and not exists (select 1 "
        "from plan p where p.request_key = r.request_key and not p.conditional)",
    )
    assert unplanned[1] == "0"
    # RoadBench's protocol may re-ask three times: planned, conditional, and not needed here.
    reasks = query_csv(
        store, "select suite, max(attempt), count(*) from plan where conditional group by suite"
    )
    assert reasks[1:] == [f"roadbench,4,{3 * int(_items(store, 'roadbench'))}"]

    assert invoke("run", "--panel", str(panel), "--store", store).exit_code == 0
    assert len(server.hits_for("planner")) == sent, "the second run asked again"
    second = query_csv(
        store,
        "select count(*) = sum(answered::int), count(distinct request_key) from plan "
        "where not conditional and run_id = "
        "(select run_id from runs order by started_at desc limit 1)",
    )
    assert second[1] == f"True,{sent}"


def _items(store: str, suite: str) -> str:
    return query_csv(store, f"select count(*) from items where suite = '{suite}'")[1]
