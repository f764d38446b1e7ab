"""A panel's `reuse_for`, through the CLI against the test model server: answers bought three
days ago (the clock answers are stamped with, moved back) are reused `forever`, asked again
under `reuse_for: 1d` for the model called over the network and never for the built-in
baseline beside it, counted as stale by the dry run's estimate first, recorded per request
(plan, responses) and per model (manifest); and once asked again, they are fresh."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from roadeval.benchmarks.registry import get_suite
from roadeval.tasks.requests import freshness
from roadeval.tasks.results.provenance_table import PROVENANCE_HEADINGS, PROVENANCE_TITLE

from support.html_tables import read_page
from support.model_server import ModelServer, Reply
from support.trip_panel import gold_rule, invoke, query_csv, trip_gold, write_panel

pytestmark = pytest.mark.usefixtures("inline")

ENGINES = {"scoring": {"engine": "local"}, "render": {"engine": "local"}}


def _run(panel: Path, store: Path, printed: list[str] | None = None) -> dict[str, Any]:
    result = invoke("run", "--panel", str(panel), "--store", str(store))
    assert result.exit_code == 0, result.output
    if printed is not None:
        printed.append(result.output)
    return _last_manifest(store)


def _last_manifest(store: Path) -> dict[str, Any]:
    found = [json.loads(p.read_text()) for p in (store / "runs").glob("*/manifest.json")]
    return max(found, key=lambda m: m["started_at"])


def _by_model(entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {entry["model"]: entry for entry in entries}


def _rows(store: Path, sql: str) -> list[list[str]]:
    return [line.split(",") for line in query_csv(str(store), sql)[1:]]


def test_answers_are_reused_as_long_as_reuse_for_says_and_no_longer(
    tmp_path: Path, server: ModelServer
) -> None:
    source, gold = trip_gold(tmp_path)
    server.rules["fa"] = gold_rule(gold)
    models = [
        {"model": "openai/fa", "name": "fa", "api_base": server.api_base},
        {"model": "roadeval/always-a", "name": "always-a"},
    ]
    store = tmp_path / "store"

    def panel(file: str, **reuse: str) -> Path:
        # One panel name: each run is a rerun of the one before, which it may copy from.
        return write_panel(tmp_path / file, source, models, name="fresh", **ENGINES, **reuse)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(freshness, "now", lambda: datetime.now(UTC) - timedelta(days=3))
        first = _run(panel("first.yaml"), store)
    items = first["suites"][0]["items"]
    assert len(server.hits_for("fa")) == items

    # forever: nothing is asked, whatever the answers' age; what was reused, and how old the
    # oldest was when the run began, is in the manifest and in the run's summary.
    printed: list[str] = []
    forever = _run(panel("forever.yaml", reuse_for="forever"), store, printed)
    assert len(server.hits_for("fa")) == items
    assert {e["model"]: e["stale"] for e in forever["freshness"]} == {"fa": 0, "always-a": 0}
    assert {e["model"]: e["reused"] for e in forever["freshness"]} == {
        "fa": items,
        "always-a": items,
    }
    for entry in forever["freshness"]:
        age = datetime.fromisoformat(forever["started_at"]) - datetime.fromisoformat(
            entry["oldest_reused"]
        )
        assert timedelta(days=3) <= age < timedelta(days=3, minutes=5)
    title = "answers reused, and what served them"
    assert title in printed[0], printed[0]
    section = printed[0].split(title, 1)[1].splitlines()
    fa_line = next(line for line in section if line.startswith("│ fa "))
    cells = [cell.strip() for cell in fa_line.strip("│ ").split("│")]
    assert cells[:7] == ["fa", "answer", "forever", "0", str(items), "3.0 d", "0"]
    assert all(c["calls"] == 0 and c["stale"] == 0 for c in forever["counts"])

    # The dry run counts what a day's reuse would ask again: every answer of fa's, none of the
    # baseline's.
    one_day = panel("one-day.yaml", reuse_for="1d")
    dry = invoke("campaign", "--panel", str(one_day), "--store", str(store), "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "stale" in dry.output
    planned = _last_manifest(store)["run_id"]
    estimate = _rows(
        store,
        "select model, requests, answered, stale from estimates "
        f"where run_id = '{planned}' order by model",
    )
    assert estimate == [["always-a", "0", str(items), "0"], ["fa", str(items), "0", str(items)]]
    assert len(server.hits_for("fa")) == items

    # reuse_for: 1d asks every answer of fa's again, and nothing of the baseline's.
    third = _run(one_day, store)
    assert len(server.hits_for("fa")) == 2 * items
    counts = _by_model(third["counts"])
    assert counts["fa"]["stale"] == items and counts["fa"]["calls"] == items
    assert counts["always-a"]["stale"] == 0 and counts["always-a"]["calls"] == 0
    assert counts["always-a"]["scores_reused"] == items
    fresh = _by_model(third["freshness"])
    assert fresh["fa"]["reuse_for"] == "1d" and fresh["fa"]["stale"] == items
    started = datetime.fromisoformat(third["started_at"])
    since = datetime.fromisoformat(fresh["fa"]["fresh_since"])
    assert timedelta(days=1) <= started - since < timedelta(days=1, seconds=1)
    assert fresh["always-a"] == {
        "model": "always-a",
        "role": "answer",
        "reuse_for": "forever",
        "fresh_since": None,
        "stale": 0,
        "reused": items,
        # The baseline's answers are the first run's, bought three days ago.
        "oldest_reused": forever["freshness"][1]["oldest_reused"],
    }
    assert (fresh["fa"]["reused"], fresh["fa"]["oldest_reused"]) == (0, None)
    specs = {spec["name"]: spec["reuse_for"] for spec in third["models"]}
    assert specs == {"fa": "1d", "always-a": "forever"}
    # Recorded per request: the plan says which stored answers were stale, and the responses
    # which requests were asked again and when each answer was bought.
    run_id = third["run_id"]
    stale_plan = _rows(
        store,
        "select model, count(*) filter (where stale) from plan "
        f"where run_id = '{run_id}' group by model order by model",
    )
    assert stale_plan == [["always-a", "0"], ["fa", str(items)]]
    answered = _rows(
        store,
        "select model, count(*) filter (where replaced_stale), count(*) filter (where cached), "
        "count(*) filter (where answered_at >= "
        f"timestamptz '{third['started_at']}' - interval 1 second), "
        "string_agg(distinct origin_run_id) from responses "
        f"where run_id = '{run_id}' group by model order by model",
    )
    # The baseline's copied answers are the first run's (bought three days ago, by it).
    assert answered == [
        ["always-a", "0", str(items), "0", first["run_id"]],
        ["fa", str(items), "0", str(items), run_id],
    ]

    # What was asked again is fresh now: the next day-long run asks nothing.
    fourth = _run(one_day, store)
    assert len(server.hits_for("fa")) == 2 * items
    assert all(c["stale"] == 0 and c["calls"] == 0 for c in fourth["counts"])


def test_a_stale_verdict_is_asked_again_of_the_judge_and_the_fresh_answer_is_reused(
    tmp_path: Path, server: ModelServer
) -> None:
    """A rerun copies an outcome whole only while its answers and its verdicts are fresh: an
    answer the model may still reuse with a verdict the judge may not is judged again."""
    server.rules["cand"] = lambda body, hit: Reply("The white van yields to the cyclist.")
    server.rules["vl-judge"] = lambda body, hit: Reply('{"score": 6, "rationale": "partly"}')
    source = get_suite("stride").generate_demo(tmp_path / "stride-src")
    body = {
        "name": "judged-fresh",
        "suites": [{"name": "stride", "source": str(source)}],
        "models": [
            {"model": "openai/cand", "name": "cand", "api_base": server.api_base},
        ],
        "judge": {
            "model": "openai/vl-judge",
            "name": "vl",
            "api_base": server.api_base,
            "reuse_for": "12h",
        },
        "reuse_for": "30d",
        **ENGINES,
    }
    panel, store = tmp_path / "panel.yaml", tmp_path / "store"
    panel.write_text(yaml.safe_dump(body))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(freshness, "now", lambda: datetime.now(UTC) - timedelta(days=2))
        first = _run(panel, store)
    asked, judged = len(server.hits_for("cand")), len(server.hits_for("vl-judge"))
    # Every item is asked; those with an open answer are judged.
    assert asked == first["suites"][0]["items"] and 0 < judged < asked

    second = _run(panel, store)
    assert len(server.hits_for("cand")) == asked
    assert len(server.hits_for("vl-judge")) == 2 * judged
    [counts] = second["counts"]
    assert (counts["cached"], counts["stale"], counts["calls"]) == (asked, 0, 0)
    assert (counts["judge_calls"], counts["judge_stale"]) == (judged, judged)
    # The items with no verdict are copied whole; the judged ones scored again.
    assert counts["scores_reused"] == asked - judged
    assert [(e["model"], e["role"], e["reuse_for"], e["stale"]) for e in second["freshness"]] == [
        ("cand", "answer", "30d", 0),
        ("vl", "judge", "12h", judged),
    ]


def test_a_stopped_never_run_resumes_without_asking_twice_and_a_new_run_asks_all(
    tmp_path: Path, server: ModelServer
) -> None:
    """`reuse_for: never` is measured from the start of the first run of the chain a resume
    continues: the same command after two budget stops asks only what neither stopped run had
    bought; the next run after the finished one asks everything again."""
    source, _ = trip_gold(tmp_path)
    server.rules["nv"] = lambda body, hit: Reply("A", prompt_tokens=50, completion_tokens=1)
    model = {
        "model": "openai/nv",
        "name": "nv",
        "api_base": server.api_base,
        "params": {"max_tokens": 8},
        "max_concurrency": 1,
        "input_cost_per_token": 1e-6,
        "output_cost_per_token": 2e-6,
    }
    panel = write_panel(tmp_path / "panel.yaml", source, [model], reuse_for="never", **ENGINES)
    store = tmp_path / "store"
    printed: list[str] = []

    def campaign(budget: str) -> tuple[int, dict[str, Any]]:
        args = ["--panel", str(panel), "--store", str(store), "--budget-usd", budget]
        result = invoke("campaign", *args)
        printed.append(" ".join(result.output.replace("│", " ").split()))
        return result.exit_code, _last_manifest(store)

    code, stopped = campaign("0.0012")
    assert code == 3 and stopped["status"] == "out_of_budget"
    items = stopped["suites"][0]["items"]
    code, again = campaign("0.0012")
    assert code == 3 and again["horizon"]["run_id"] == stopped["run_id"]
    bought = len(server.hits_for("nv"))
    assert 0 < bought < items

    code, resumed = campaign("1")
    assert code == 0 and resumed["status"] == "finished"
    sent = [json.dumps(hit["messages"], sort_keys=True) for hit in server.hits_for("nv")]
    # Every item asked once over the three runs: nothing a stopped run bought is asked again.
    assert len(sent) == items and len(set(sent)) == items
    [counts] = resumed["counts"]
    assert (counts["cached"], counts["stale"], counts["calls"]) == (bought, 0, items - bought)
    assert resumed["horizon"] == {
        "run_id": stopped["run_id"],
        "started_at": stopped["started_at"],
        "continues": again["run_id"],
        "continued_status": "out_of_budget",
    }
    [fresh] = resumed["freshness"]
    assert (fresh["reuse_for"], fresh["fresh_since"]) == ("never", stopped["started_at"])
    # The summary and the HTML report say whose start it was, beside the same table.
    said = f"reuse_for measured from the start of run {stopped['run_id']}"
    assert said in printed[2] and f"this run continues {again['run_id']}" in printed[2]
    out = tmp_path / "report.html"
    report = invoke("report", resumed["run_id"], "--store", str(store), "--out", str(out))
    assert report.exit_code == 0, report.output
    html = out.read_text()
    assert said in html
    table = read_page(html).table(PROVENANCE_TITLE)
    assert table.headers == list(PROVENANCE_HEADINGS)
    row = table.row("nv")
    assert row[:5] + row[6:7] == ["nv", "answer", "never", str(items - bought), str(bought), "0"]

    # A new run after the finished one measures from its own start: it asks everything again.
    code, new = campaign("1")
    assert code == 0 and len(server.hits_for("nv")) == 2 * items
    [counts] = new["counts"]
    assert (counts["cached"], counts["stale"], counts["calls"]) == (0, items, items)
    assert new["horizon"] == {
        "run_id": new["run_id"],
        "started_at": new["started_at"],
        "continues": None,
        "continued_status": None,
    }
