"""STRIDE through the real path: a candidate and a vision judge, both on the local HTTP server,
the judge called from Ray workers. The judge sees the frames and the stripped answer, with the
release's settings; an unreadable verdict is unscored and left out of the mean, a 12 stays 12, and
every verdict lands traceable to its judge, prompt and parameters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from roadeval.benchmarks.registry import get_suite

from support.model_server import ModelServer, Reply, prompt_text
from support.trip_panel import invoke, query_csv

pytestmark = pytest.mark.usefixtures("under_prefect", "ray_session")

ANSWER = "The white van yields to the cyclist."


def _images(body: dict[str, Any]) -> int:
    return sum(
        1
        for message in body["messages"]
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if part.get("type") == "image_url"
    )


def _panel(tmp_path: Path, server: ModelServer) -> Path:
    source = get_suite("stride").generate_demo(tmp_path / "stride-src")
    panel = {
        "suites": [{"name": "stride", "source": str(source)}],
        "models": [{"model": "openai/cand", "name": "cand", "api_base": server.api_base}],
        "judge": {"model": "openai/vl-judge", "name": "vl", "api_base": server.api_base},
        "scoring": {"engine": "ray", "batch_size": 2},
    }
    path = tmp_path / "panel.yaml"
    path.write_text(yaml.safe_dump(panel))
    return path


def test_judge_on_ray_sees_the_frames_and_its_verdicts_are_traceable(
    tmp_path: Path, server: ModelServer
) -> None:
    server.rules["cand"] = lambda body, hit: Reply(f"<think>the van waits, so: B</think> {ANSWER}")

    def judge(body: dict[str, Any], hit: int) -> Reply:
        if hit == 1:
            return Reply("I would rather not grade this one.")
        if hit == 2:
            return Reply('{"score": 12, "rationale": "generous"}')
        return Reply('{"score": 6, "rationale": "partly"}')

    server.rules["vl-judge"] = judge
    store = str(tmp_path / "store")
    panel = _panel(tmp_path, server)
    result = invoke("run", "--panel", str(panel), "--store", store)
    assert result.exit_code == 0, result.output

    judged = server.hits_for("vl-judge")
    assert len(judged) == 6  # the demo's two judged templates, three items each
    asked = {prompt_text(body): _images(body) for body in server.hits_for("cand")}
    for body in judged:
        text = prompt_text(body)
        assert f"Candidate answer: {ANSWER}\n" in text and "<think>" not in text
        assert body["temperature"] == 0 and body["max_tokens"] == 192
        # The judge reads the question as the row has it; the candidate read it with `<obj>`
        # substituted.
        question = text.split("Question: ", 1)[1].split("\n", 1)[0]
        question = question.replace("<obj>", "the object in the red bounding box")
        frames = [n for prompt, n in asked.items() if question in prompt]
        assert frames and _images(body) == frames[0] > 1

    rows = query_csv(
        store,
        "select status, value, judge_model, judge_prompt_hash is not null, judge_params_json, "
        "unscored_reason like 'unreadable judge reply%' from scores where metric = 'judge_score' "
        "order by status, value",
    )
    params = '"{""max_tokens"": 192, ""temperature"": 0.0}"'
    assert rows[1:] == [
        *[f"scored,6.0,vl,True,{params}," for _ in range(4)],
        f"scored,12.0,vl,True,{params},",  # not clamped, as the release reads it
        f"unscored,,vl,True,{params},True",
    ]
    raw = query_csv(
        store, "select judge_reply from scores where metric = 'judge_score' and value is null"
    )
    assert raw[1:] == ["I would rather not grade this one."]

    metrics = query_csv(
        store,
        "select metric, value from metrics where task = '*' and slice = '' "
        "and metric like 'judge%' order by metric",
    )
    assert metrics[1:] == [
        "judge_score,7.2",  # (12 + 4 x 6) / 5: the unreadable verdict is out of the mean
        "judge_scored,5.0",
        "judge_unanswered,0.0",
        "judge_unscored,1.0",
    ]
    costs = query_csv(store, "select role, count(*) from costs group by role order by role")
    assert costs[1:] == ["answer,21", "judge,6"]

    again = invoke("run", "--panel", str(panel), "--store", store)
    assert again.exit_code == 0, again.output
    assert len(server.hits_for("vl-judge")) == 6
