"""A scorer that raises on an item fails that item alone: its one score row is `unscored` with
reason `scorer_error: <type>: <message>` (redacted, no traceback; the traceback goes to the log),
the rest of the run is scored and lands, the run is `finished` with the count, and the command
exits 0 with a warning, or 1 with `--strict`. In a thread's chunk (TRIP), on the path judged
suites take (`score_item`), and on a Ray worker."""

from __future__ import annotations

import csv
import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.suite import ParsedAnswer
from roadeval.benchmarks.trip.suite import TripSuite

from support import faulty_scoring
from support.model_server import ModelServer
from support.trip_panel import (
    gold_rule,
    invoke,
    query_csv,
    trip_gold,
    trip_scorer_raises_on,
    write_panel,
)

SECRET = "sk-scorer-secret-0123456789"
REDACTED = "[redacted:ROADEVAL_SCORER_TEST_KEY]"


def _one_line(result: Any) -> str:
    return " ".join(result.output.split())


def _rows(store: Path, sql: str) -> list[str]:
    return query_csv(str(store), sql)[1:]


def _manifests(store: Path) -> list[dict[str, Any]]:
    return [json.loads(path.read_text()) for path in (store / "runs").glob("*/manifest.json")]


def _manifest(store: Path) -> dict[str, Any]:
    [manifest] = _manifests(store)
    return manifest


def _broken_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str, int]:
    """A TRIP panel whose scorer raises on one item (with a secret in the message)."""
    monkeypatch.setenv("ROADEVAL_SCORER_TEST_KEY", SECRET)
    source, gold = trip_gold(tmp_path)
    broken = get_suite("trip").load(source).items[3].item_id
    trip_scorer_raises_on(monkeypatch, {broken}, f"key {SECRET}")
    panel = write_panel(tmp_path / "p.yaml", source, [{"model": "roadeval/always-a"}])
    return panel, broken, len(gold)


@pytest.mark.usefixtures("inline")
def test_a_scorer_that_raises_leaves_its_item_unscored_and_the_run_finished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    panel, broken, n = _broken_trip(tmp_path, monkeypatch)
    store = tmp_path / "store"
    with caplog.at_level(logging.WARNING, logger="roadeval.tasks.shard.scoring"):
        result = invoke("run", "--panel", str(panel), "--store", str(store), "--no-report")
    assert result.exit_code == 0, result.output
    message = _one_line(result)
    assert (
        "warning: trip x roadeval/always-a: 1 items not scored, their scorer raised; first: "
        f"scorer_error: RuntimeError: gold of {broken} will not read (key {REDACTED})"
    ) in message
    assert "items whose scorer raised" in " ".join(result.output.split())  # a health column
    assert SECRET not in result.output
    # The item's one row: metric '*', unscored, the reason redacted and without a traceback.
    [row] = csv.reader(
        _rows(
            store,
            f"select metric, status, value is null, unscored_reason, details_json from scores "
            f"where item_id = '{broken}'",
        )
    )
    metric, status, no_value, reason, details = row
    assert (metric, status, no_value) == ("*", "unscored", "True")
    assert reason == f"scorer_error: RuntimeError: gold of {broken} will not read (key {REDACTED})"
    assert "Traceback" not in reason + details and SECRET not in reason + details
    assert json.loads(details)["scorer_error"] == {
        "type": "RuntimeError",
        "message": f"gold of {broken} will not read (key {REDACTED})",
    }
    # Every other item is scored and lands; the run is finished, with the count.
    scored = _rows(store, "select count(distinct item_id) from scores where status = 'scored'")
    assert scored == [str(n - 1)]
    assert _rows(store, "select status from runs") == ["finished"]
    manifest = _manifest(store)
    assert manifest["status"] == "finished"
    assert manifest["totals"]["scorer_errors"] == 1 and manifest["totals"]["scored"] == n - 1
    assert manifest["counts"][0]["unscored_metrics"]["*"]["items"] == 1
    assert "scorer_errors" in manifest["count_meanings"]
    # The traceback went to the log, redacted.
    [logged] = [r.getMessage() for r in caplog.records if broken in r.getMessage()]
    assert "Traceback" in logged and "score_or_raise" in logged
    assert REDACTED in logged and SECRET not in logged


@pytest.mark.usefixtures("inline")
@pytest.mark.parametrize("command", ["run", "campaign"])
def test_strict_exits_1_when_a_scorer_raised_after_landing_everything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    panel, _, n = _broken_trip(tmp_path, monkeypatch)
    store = tmp_path / "store"
    result = invoke(
        command, "--panel", str(panel), "--store", str(store), "--strict", "--no-report"
    )
    assert result.exit_code == 1, result.output
    message = _one_line(result)
    assert "warning: trip x roadeval/always-a: 1 items not scored" in message
    assert "--strict: 1 items could not be scored (their scorer raised)" in message
    assert _rows(store, "select status, n_scored from runs") == [f"finished,{n - 1}"]


@pytest.mark.usefixtures("inline")
def test_demo_takes_strict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scored = TripSuite.score

    def score_or_raise(self: TripSuite, item: Item, parsed: ParsedAnswer) -> dict[str, float]:
        if item.item_id.endswith("7"):
            raise RuntimeError(f"gold of {item.item_id} will not read")
        return scored(self, item, parsed)

    monkeypatch.setattr(TripSuite, "score", score_or_raise)
    result = invoke("demo", "--store", str(tmp_path / "store"), "--strict", "--no-report")
    assert result.exit_code == 1, result.output
    assert "--strict:" in result.output and "items not scored" in result.output


def _faulty_panel(tmp_path: Path, engine: str, items: int, fail_on: list[str]) -> Path:
    source = tmp_path / "faulty.jsonl"
    rows = [
        {"id": f"q{n}", "question": f"Which, case {n} (key {SECRET})?", "answer": "B"}
        | {"options": {"A": "one", "B": "two", "C": "three", "D": "four"}}
        for n in range(items)
    ]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    panel = {
        "suites": [
            {
                "name": faulty_scoring.SUITE,
                "source": str(source),
                "options": {"fail_on": fail_on, "heavy": engine == "ray"},
            }
        ],
        "models": [{"model": "roadeval/faulty-b"}],
        "scoring": {"engine": engine, "batch_size": 4},
    }
    path = tmp_path / f"{engine}.yaml"
    path.write_text(yaml.safe_dump(panel))
    return path


def _check_faulty_run(
    tmp_path: Path, engine: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> str:
    """Run the faulty suite (q5 raises) scored on `engine`; the traceback logged."""
    monkeypatch.setenv("ROADEVAL_SCORER_TEST_KEY", SECRET)
    n, broken = 10, "q5"
    store = tmp_path / "store"
    panel = _faulty_panel(tmp_path, engine, n, [broken])
    with caplog.at_level(logging.WARNING, logger="roadeval.tasks.shard.scoring"):
        result = invoke("run", "--panel", str(panel), "--store", str(store), "--no-report")
    assert result.exit_code == 0, result.output
    message = _one_line(result)
    assert (
        f"warning: {faulty_scoring.SUITE} x roadeval/faulty-b: 1 items not scored, their scorer "
        f"raised; first: scorer_error: ValueError: cannot score {broken}: Which, case 5 (key "
        f"{REDACTED})?"
    ) in message
    unscored = _rows(store, "select item_id, metric, status from scores where status = 'unscored'")
    assert unscored == [f"{broken},*,unscored"]
    assert _rows(store, "select count(*) from scores where status = 'scored'") == [str(n - 1)]
    [reason] = _rows(store, "select unscored_reason from scores where status = 'unscored'")
    assert SECRET not in reason and REDACTED in reason
    assert _rows(store, "select status, n_scored from runs") == [f"finished,{n - 1}"]
    assert _manifest(store)["totals"]["scorer_errors"] == 1
    [logged] = [r.getMessage() for r in caplog.records if f"item {broken}" in r.getMessage()]
    assert SECRET not in logged and REDACTED in logged
    strict = invoke("run", "--panel", str(panel), "--store", str(store), "--strict", "--no-report")
    assert strict.exit_code == 1, strict.output
    return logged


@pytest.mark.usefixtures("inline")
def test_a_scorer_item_error_on_the_score_item_path_is_caught_per_item(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    logged = _check_faulty_run(tmp_path, "local", monkeypatch, caplog)
    assert "in score_outcome" in logged


@pytest.mark.usefixtures("inline", "ray_session")
def test_a_scorer_item_error_on_a_ray_worker_is_caught_per_item(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Batches of 4: the raising item shares its batch with three that are scored. The
    # traceback is the worker's, sent back and logged by the run.
    logged = _check_faulty_run(tmp_path, "ray", monkeypatch, caplog)
    assert "remote_scoring.py" in logged and "in one" in logged


@pytest.mark.usefixtures("inline")
def test_a_rerun_scores_again_what_a_scorer_failed_on_from_the_stored_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: ModelServer
) -> None:
    # Run 1: the model answers every item (its gold letter); TRIP's scorer raises on one.
    source, gold = trip_gold(tmp_path)
    server.rules["fixable"] = gold_rule(gold)
    broken = get_suite("trip").load(source).items[3].item_id
    unpatched = TripSuite.score
    trip_scorer_raises_on(monkeypatch, {broken})
    model = {"model": "openai/fixable", "name": "fixable", "api_base": server.api_base}
    engines = {"scoring": {"engine": "local"}, "render": {"engine": "local"}}
    panel = write_panel(tmp_path / "p.yaml", source, [model], **engines)
    store = tmp_path / "store"
    first = invoke("run", "--panel", str(panel), "--store", str(store), "--no-report")
    assert first.exit_code == 0, first.output
    assert "1 items not scored, their scorer raised" in _one_line(first)
    asked = len(server.hits_for("fixable"))
    assert asked == len(gold)

    # Run 2 of the same panel, the fault gone (the scorer's version and options unchanged).
    monkeypatch.setattr(TripSuite, "score", unpatched)
    second = invoke("run", "--panel", str(panel), "--store", str(store), "--strict", "--no-report")
    assert second.exit_code == 0, second.output
    assert "not scored" not in _one_line(second)
    # Scored again from the stored answer: no request was sent again.
    assert len(server.hits_for("fixable")) == asked
    old, new = (m["run_id"] for m in sorted(_manifests(store), key=lambda m: m["started_at"]))
    rows = _rows(
        store,
        "select run_id, metric, status, value, request_key from scores "
        f"where item_id = '{broken}' order by run_id, metric",
    )
    [before, *after] = [row.split(",") for row in rows]
    assert before[:3] == [old, "*", "unscored"]
    assert after and all(row[0] == new and row[2] == "scored" for row in after), rows
    assert {row[4] for row in after} == {before[4]}  # the same answer, scored
    totals = next(m for m in _manifests(store) if m["run_id"] == new)["totals"]
    assert totals["scorer_errors"] == 0 and totals["scored"] == len(gold)
    assert totals["calls"] == 0 and totals["scores_reused"] == len(gold) - 1
    # `roadeval changes` counts it among what moved: one item of trip x fixable.
    changes = invoke("changes", "--store", str(store))
    assert changes.exit_code == 0, changes.output
    assert "scores: none changed" not in changes.output
    cells = rf"│\s*trip\s*│\s*fixable\s*│\s*0\s*│\s*0\s*│\s*0\s*│\s*{len(after) + 1}\s*│\s*1\s*│"
    assert re.search(cells, changes.output), changes.output
    diff = invoke("diff", old, new, "--store", str(store))
    assert diff.exit_code == 0 and diff.output == changes.output, diff.output
