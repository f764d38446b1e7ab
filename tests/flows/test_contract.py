"""The suite contract end to end, through a test-only suite against the local HTTP server:
log-probabilities reach the parser and are landed and cached; the protocol's settings are sent
and recorded; the judge is called with its own settings, cached, counted and costed; a verdict
that cannot be read is unscored, never a number."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from support import probe_suite  # noqa: F401  (registers the suite)
from support.model_server import ModelServer, Reply, prompt_text
from support.trip_panel import invoke, query_csv

pytestmark = pytest.mark.usefixtures("under_prefect")

ITEMS = [
    {"id": f"q{n}", "question": f"Which is right, case {n}?", "answer": "B"}
    | {"options": {"A": "one", "B": "two", "C": "three", "D": "four"}}
    for n in range(6)
]
LOGPROBS = [("B", -0.1, [("A", -2.5), ("C", -3.0), ("D", -4.0)])]
EXPECTED_CONFIDENCE = math.exp(-0.1) / sum(math.exp(lp) for lp in (-0.1, -2.5, -3.0, -4.0))


def _rules(server: ModelServer) -> None:
    server.rules["probe"] = lambda body, hit: Reply("B", logprobs=LOGPROBS, completion_tokens=1)

    def judge(body: dict[str, Any], hit: int) -> Reply:
        # The judge cannot be read on one item: it rambles without a number.
        if "case 3" in prompt_text(body):
            return Reply("I would rather not say.", prompt_tokens=50, completion_tokens=6)
        return Reply('{"score": 8}', prompt_tokens=50, completion_tokens=4)

    server.rules["probe-judge"] = judge


def _panel(tmp_path: Path, server: ModelServer) -> Path:
    source = tmp_path / "probe.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in ITEMS))
    panel = {
        "suites": [{"name": "contract-probe", "source": str(source)}],
        "models": [
            {
                "model": "openai/probe",
                "name": "probe",
                "api_base": server.api_base,
                "input_cost_per_token": 1e-6,
                "output_cost_per_token": 2e-6,
            }
        ],
        "judge": {
            "model": "openai/probe-judge",
            "name": "judge",
            "api_base": server.api_base,
            "params": {"seed": 1},
            "input_cost_per_token": 3e-6,
            "output_cost_per_token": 4e-6,
        },
        # The judge in this process; tests/flows/test_ray_scoring.py has it on Ray.
        "scoring": {"engine": "local"},
    }
    path = tmp_path / "panel.yaml"
    path.write_text(yaml.safe_dump(panel))
    return path


def test_logprobs_settings_and_the_judge_through_the_real_path(
    tmp_path: Path, server: ModelServer
) -> None:
    _rules(server)
    store = str(tmp_path / "store")
    panel = _panel(tmp_path, server)
    result = invoke("run", "--panel", str(panel), "--store", store)
    assert result.exit_code == 0, result.output
    n = len(ITEMS)

    # The protocol's settings went to the model, the rubric's (with the panel's seed) to the judge.
    [answer_body] = {
        json.dumps({k: h.get(k) for k in ("max_tokens", "temperature", "logprobs", "top_logprobs")})
        for h in server.hits_for("probe")
    }
    assert json.loads(answer_body) == {
        "max_tokens": 5,
        "temperature": 0,
        "logprobs": True,
        "top_logprobs": 4,
    }
    judge_hits = server.hits_for("probe-judge")
    assert len(judge_hits) == n
    assert {(h["temperature"], h["max_tokens"], h["seed"]) for h in judge_hits} == {(0, 192, 1)}

    # Log-probabilities reached the parser (the confidence is a softmax of them) and landed.
    parsed = query_csv(
        store,
        "select distinct json_extract_string(value_json, '$.letter'), "
        "round(cast(json_extract(value_json, '$.confidence') as double), 6) from parses",
    )
    assert parsed[1:] == [f"B,{round(EXPECTED_CONFIDENCE, 6)}"]
    first_tokens = query_csv(
        store,
        "select json_extract_string(logprobs_json, '$[0].token'), count(*) from responses "
        "where role = 'answer' group by all",
    )
    assert first_tokens[1:] == [f"B,{n}"]

    # The unreadable verdict is unscored with its reason; the others carry the judge's record.
    rows = query_csv(
        store,
        "select status, count(*), count(value), count(distinct judge_prompt_hash) "
        "from scores where metric = 'judge_score' group by status order by status",
    )
    assert rows[1:] == [f"scored,{n - 1},{n - 1},{n - 1}", "unscored,1,0,1"]
    reasons = query_csv(
        store,
        "select unscored_reason, judge_reply, judge_model, "
        "judge_params_json from scores where status = 'unscored'",
    )
    assert "unreadable judge reply" in reasons[1] and "I would rather not say" in reasons[1]
    assert ",judge," in reasons[1] and "192" in reasons[1]

    # The judge is counted and costed like any model.
    assert "judge calls" in result.output
    costs = query_csv(
        store, "select role, count(*), sum(cost_usd) from costs group by role order by role"
    )
    [answer, judged] = (line.split(",") for line in costs[1:])
    assert answer[:2] == ["answer", str(n)] and judged[:2] == ["judge", str(n)]
    assert float(answer[2]) == pytest.approx(n * (10 * 1e-6 + 1 * 2e-6))
    assert float(judged[2]) == pytest.approx(
        (n - 1) * (50 * 3e-6 + 4 * 4e-6) + 50 * 3e-6 + 6 * 4e-6
    )
    [manifest_path] = (tmp_path / "store" / "runs").glob("*/manifest.json")
    manifest = json.loads(manifest_path.read_text())
    assert manifest["totals"]["judge_calls"] == n and manifest["totals"]["unscored"] == 1
    [generation] = manifest["generation"]
    assert generation["sent"] == {
        "max_tokens": 5,
        "temperature": 0,
        "logprobs": True,
        "top_logprobs": 4,
    }

    # Everything is cached whole: a second run asks nothing and parses the same confidence.
    again = invoke("run", "--panel", str(panel), "--store", store)
    assert again.exit_code == 0, again.output
    assert len(server.hits_for("probe")) == n and len(server.hits_for("probe-judge")) == n
    confidences = query_csv(
        store,
        "select distinct round(cast(json_extract(value_json, '$.confidence') as double), 6) "
        "from parses",
    )
    assert confidences[1:] == [str(round(EXPECTED_CONFIDENCE, 6))]
