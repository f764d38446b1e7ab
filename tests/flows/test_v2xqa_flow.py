"""V2X-QA through the real path: the protocol's settings on the wire, the views' images in order,
log-probabilities from the HTTP reply to ECE and Brier in the store, and a model that gives none
reported as having no confidence."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from roadeval.benchmarks.registry import get_suite

from support.model_server import ModelServer, Reply
from support.trip_panel import invoke, query_csv, seen_by_model

pytestmark = pytest.mark.usefixtures("under_prefect")

LETTERS = "ABCD"


def _gold(tmp_path: Path) -> tuple[Path, dict[Any, str], dict[str, int]]:
    suite = get_suite("v2xqa")
    source = suite.generate_demo(tmp_path / "v2x-src")
    items = suite.load(source).items
    gold = {seen_by_model(suite.messages(item)): str(item.reference) for item in items}
    images = {view: 0 for view in ("VS", "IS", "CO")}
    for item in items:
        images[item.labels["view"]] = len(seen_by_model(suite.messages(item))[1])
    assert len(gold) == len(items)
    return source, gold, images


def test_logprobs_travel_from_the_reply_to_calibration_metrics(
    tmp_path: Path, server: ModelServer
) -> None:
    source, gold, images = _gold(tmp_path)
    assert images == {"VS": 1, "IS": 1, "CO": 2}

    def confident(body: dict[str, Any], hit: int) -> Reply:
        letter = gold[seen_by_model(body["messages"])]
        top = [(x, math.log(0.7 if x == letter else 0.1)) for x in LETTERS]
        return Reply(letter, logprobs=[(letter, math.log(0.7), top)])

    server.rules["cal"] = confident
    server.rules["bare"] = lambda body, hit: Reply(gold[seen_by_model(body["messages"])])
    panel = tmp_path / "panel.yaml"
    panel.write_text(
        yaml.safe_dump(
            {
                "suites": [{"name": "v2xqa", "source": str(source)}],
                "models": [
                    {"model": "openai/cal", "name": "cal", "api_base": server.api_base},
                    {"model": "openai/bare", "name": "bare", "api_base": server.api_base},
                ],
            }
        )
    )
    store = str(tmp_path / "store")
    result = invoke("run", "--panel", str(panel), "--store", store)
    assert result.exit_code == 0, result.output

    for body in server.hits_for("cal"):
        assert body["max_tokens"] == 5 and body["temperature"] == 0
        assert body["logprobs"] is True and body["top_logprobs"] == 20
    overall = query_csv(
        store,
        "select model, metric, round(value, 6) from metrics where task = '*' and slice = '' "
        "order by model, metric",
    )
    # Every answer right at confidence 0.7: ECE = 0.3; Brier = 0.3^2 + 3 x 0.1^2 = 0.12.
    assert overall[1:] == [
        "bare,accuracy,1.0",
        "bare,confidence_items,0.0",
        "bare,no_confidence_items,48.0",
        "cal,accuracy,1.0",
        "cal,brier,0.12",
        "cal,confidence_items,48.0",
        "cal,ece,0.3",
        "cal,letters_seen_lt4,0.0",
        "cal,no_confidence_items,0.0",
    ]
    views = query_csv(
        store,
        "select slice_value, round(value, 6), n from metrics where model = 'cal' and "
        "slice = 'view' and metric = 'ece' order by slice_value",
    )
    assert views[1:] == ["CO,0.3,16", "IS,0.3,16", "VS,0.3,16"]
    kept = query_csv(
        store,
        "select count(*) from responses where model = 'cal' "
        "and json_array_length(logprobs_json::json -> 0 -> 'top') = 4",
    )
    assert kept[1] == "48"
    assert "bare on v2xqa: brier not scored for 48 items; first reason: no confidence" in (
        " ".join(result.output.split())
    )
