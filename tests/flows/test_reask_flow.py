"""RoadBench's re-ask protocol through the real path: bad YAML twice, good YAML the third time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from roadeval.flows.cli.main import app
from roadeval.storage.catalog import query
from roadeval.storage.store import open_store

from support.model_server import ModelServer, Reply

pytestmark = pytest.mark.usefixtures("under_prefect")


def test_bad_yaml_twice_then_good_is_three_stored_attempts_third_scored(
    tmp_path: Path, server: ModelServer
) -> None:
    seen: dict[str, int] = {}

    def third_time_lucky(body: dict[str, Any], hit: int) -> Reply:
        key = json.dumps(body["messages"], sort_keys=True)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] < 3:
            return Reply("```yaml\nnum_lanes: [2\n```")  # unclosed flow sequence: a YAML error
        return Reply("```yaml\n# Explanation: three lanes\nnum_lanes: 3\n```")

    server.rules["stubborn"] = third_time_lucky
    panel = tmp_path / "panel.yaml"
    panel.write_text(
        yaml.safe_dump(
            {
                "suites": [{"name": "roadbench", "demo": True, "tasks": ["1"]}],
                "models": [
                    {"model": "openai/stubborn", "name": "stubborn", "api_base": server.api_base}
                ],
            }
        )
    )
    store_dir = tmp_path / "store"
    result = CliRunner().invoke(app, ["run", "--panel", str(panel), "--store", str(store_dir)])
    assert result.exit_code == 0, result.output
    store = open_store(str(store_dir))
    _, items = query(store, "select count(*) from items where task = '1'")
    n = items[0][0]
    assert n > 0
    assert len(server.hits_for("stubborn")) == 3 * n

    _, attempts = query(
        store,
        "select attempt, count(*), count(distinct request_key) from responses "
        "group by attempt order by attempt",
    )
    assert attempts == [(1, n, n), (2, n, n), (3, n, n)]
    _, statuses = query(
        store, "select attempt, status, count(*) from parses group by all order by attempt"
    )
    assert statuses == [(1, "unparsed", n), (2, "unparsed", n), (3, "ok", n)]
    # The score is the third answer's: every item was answered 3 lanes.
    _, scored = query(
        store,
        "select count(*) from scores s join items i using (item_id) "
        "where s.metric = 'abs_error' "
        "and s.value = abs(3 - cast(json_extract(i.reference_json, '$') as double))",
    )
    assert scored[0][0] == n
    # A rerun reuses all three attempts from the store.
    again = CliRunner().invoke(app, ["run", "--panel", str(panel), "--store", str(store_dir)])
    assert again.exit_code == 0, again.output
    assert len(server.hits_for("stubborn")) == 3 * n
