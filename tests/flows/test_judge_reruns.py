"""A judge call that failed is an error, never an outcome: the next run of the panel asks the
judge again for that item (the model's stored answer reused, no call to it), and `roadeval
changes` counts the item among what moved once it scores. A verdict that landed is never asked
again."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from roadeval.benchmarks.registry import get_suite

from support.model_server import ModelServer, Reply
from support.trip_panel import invoke, query_csv, seen_by_model

pytestmark = pytest.mark.usefixtures("inline")

VERDICT = '{"score": 6, "rationale": "partly"}'


def _graded(body: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    """What a judge request grades: its rubric text and frames (one per judged item)."""
    return seen_by_model(body["messages"])


def _panel(tmp_path: Path, server: ModelServer) -> Path:
    source = get_suite("stride").generate_demo(tmp_path / "stride-src")
    retried = {"num_retries": 1, "retry_backoff_s": 0.01}
    panel = {
        "name": "judged",
        "suites": [{"name": "stride", "source": str(source)}],
        "models": [{"model": "openai/cand", "name": "cand", "api_base": server.api_base}],
        "judge": {"model": "openai/vl-judge", "name": "vl", "api_base": server.api_base, **retried},
        "scoring": {"engine": "local"},
        "render": {"engine": "local"},
    }
    path = tmp_path / "panel.yaml"
    path.write_text(yaml.safe_dump(panel))
    return path


def _run(panel: Path, store: Path) -> Any:
    return invoke("run", "--panel", str(panel), "--store", str(store))


def _totals(store: Path) -> list[dict[str, Any]]:
    found = [json.loads(p.read_text()) for p in (store / "runs").glob("*/manifest.json")]
    return [
        m["totals"] | {"run_id": m["run_id"]} for m in sorted(found, key=lambda m: m["started_at"])
    ]


def test_an_item_whose_judge_call_failed_is_judged_again_by_the_next_run(
    tmp_path: Path, server: ModelServer
) -> None:
    server.rules["cand"] = lambda body, hit: Reply("The white van yields to the cyclist.")
    failing: list[tuple[str, tuple[str, ...]]] = []

    def judge_down_for_one_item(body: dict[str, Any], hit: int) -> Reply:
        # The first item the judge is asked about gets a 500 on every try; the others a verdict.
        failing[:] = failing or [_graded(body)]
        if _graded(body) == failing[0]:
            return Reply(status=500, text="judge overloaded")
        return Reply(VERDICT)

    server.rules["vl-judge"] = judge_down_for_one_item
    panel, store = _panel(tmp_path, server), tmp_path / "store"
    first = _run(panel, store)
    assert first.exit_code == 0, first.output
    assert "judge_score not scored for 1 items; first reason: judge call failed" in first.output
    judged = {_graded(body) for body in server.hits_for("vl-judge")}
    asked = len(server.hits_for("cand"))
    assert len(judged) > 1 and len(server.hits_for("vl-judge")) == len(judged) + 1  # one retry
    failed = query_csv(
        str(store),
        "select item_id from scores where metric = 'judge_score' "
        "and unscored_reason like 'judge call failed:%'",
    )[1:]
    assert len(failed) == 1, failed
    [item] = failed

    # Run 2 of the same panel, the judge healthy again.
    server.hits.clear()
    server.rules["vl-judge"] = lambda body, hit: Reply(VERDICT)
    second = _run(panel, store)
    assert second.exit_code == 0, second.output
    assert "items' scores copied, 0 model calls and 1 judge call made" in second.output
    assert "judge call failed" not in second.output
    # The judge is asked once, about that item alone; the model under test not at all.
    assert [_graded(body) for body in server.hits_for("vl-judge")] == failing
    assert server.hits_for("cand") == []
    old, new = _totals(store)
    assert (new["calls"], new["judge_calls"]) == (0, 1)
    assert new["cached"] == asked and new["judge_cached"] == len(judged) - 1
    rows = query_csv(
        str(store),
        "select run_id, status, value from scores "
        f"where item_id = '{item}' and metric = 'judge_score' order by run_id = '{new['run_id']}'",
    )[1:]
    assert rows == [f"{old['run_id']},unscored,", f"{new['run_id']},scored,6.0"]
    # `roadeval changes` counts it among what moved: one score change of stride x cand.
    changes = invoke("changes", "--store", str(store))
    assert changes.exit_code == 0, changes.output
    assert "scores: none changed" not in changes.output
    assert re.search(
        r"│\s*stride\s*│\s*cand\s*│\s*0\s*│\s*0\s*│\s*0\s*│\s*1\s*│\s*1\s*│", changes.output
    ), changes.output

    # Run 3: every verdict landed, so nothing is asked again.
    server.hits.clear()
    third = _run(panel, store)
    assert third.exit_code == 0, third.output
    assert server.hits == []
