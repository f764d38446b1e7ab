"""Reruns after item fixes: only what changed is asked and scored, the rest is copied from the
baseline run, and the run lands what moved (changes, score changes, metric deltas)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from os import getpid
from pathlib import Path
from socket import gethostname
from typing import Any
from urllib.parse import quote

import numpy as np
import pytest

from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.trip.suite import TripSuite
from roadeval.storage.heartbeats import Heartbeat, heartbeat_key
from roadeval.storage.landing import Part, land, visible_parts
from roadeval.storage.store import LocalStore

from support.model_server import ModelServer, Reply
from support.rows import record
from support.trip_panel import gold_rule, invoke, query_csv, seen_by_model, trip_gold, write_panel

pytestmark = pytest.mark.usefixtures("inline")

MODELS = ("openai/ra", "openai/rb")
ENGINES = {"scoring": {"engine": "local"}, "render": {"engine": "local"}}


def _rows(source: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (source / "items.jsonl").read_text().splitlines()]


def _write_rows(source: Path, rows: list[dict[str, Any]]) -> None:
    (source / "items.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))


def _manifests(store: Path) -> list[dict[str, Any]]:
    found = [json.loads(p.read_text()) for p in (store / "runs").glob("*/manifest.json")]
    return sorted(found, key=lambda m: m["started_at"])


@pytest.fixture
def scorer_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Item ids TRIP's scorer is asked to score, in this process (inline runs score here)."""
    calls: list[str] = []
    original = TripSuite.score_details

    def counted(self: TripSuite, item: Any, parsed: Any) -> Any:
        calls.append(item.item_id)
        return original(self, item, parsed)

    monkeypatch.setattr(TripSuite, "score_details", counted)
    yield calls


def _panel(tmp_path: Path, source: Path, server: ModelServer, name: str = "rerun") -> Path:
    models = [{"model": m, "api_base": server.api_base, "max_concurrency": 8} for m in MODELS]
    # Shards of 10 items: a baseline of several parts per suite x model, compacted when it
    # finishes, so that reruns read it from its compacted parts.
    return write_panel(
        tmp_path / f"{name}.yaml", source, models, name=name, chunk_size=10, **ENGINES
    )


def _answer_gold(server: ModelServer, gold: dict[Any, str]) -> None:
    """Every model answers each item's gold letter as it was when the test began."""
    server.reset()
    for model in MODELS:
        server.rules[model.split("/", 1)[1]] = gold_rule(gold)


def _hits(server: ModelServer) -> int:
    return sum(len(server.hits_for(model.split("/", 1)[1])) for model in MODELS)


def _run(panel: Path, store: Path, *extra: str) -> Any:
    result = invoke("run", "--panel", str(panel), "--store", str(store), *extra, "--no-report")
    assert result.exit_code == 0, result.output
    return result


def _scores(store: Path, run_id: str) -> dict[tuple[str, str, str], tuple[str, str, str]]:
    lines = query_csv(
        str(store),
        "select model, item_id, metric, coalesce(cast(value as varchar), status), request_key, "
        f"content_hash from scores where run_id = '{run_id}'",
    )[1:]
    found = {}
    for line in lines:
        model, item_id, metric, value, key, content = line.split(",")
        found[(model, item_id, metric)] = (value, key, content)
    return found


def test_items_with_identical_requests_are_asked_once_and_share_the_answer(
    tmp_path: Path, server: ModelServer
) -> None:
    source, gold = trip_gold(tmp_path)
    rows = _rows(source)
    twin = {**rows[0], "id": rows[0]["id"] + "_twin"}
    _write_rows(source, [*rows, twin])
    suite = get_suite("trip")
    items = {item.item_id: item for item in suite.load(source).items}
    assert suite.messages(items[twin["id"]]) == suite.messages(items[rows[0]["id"]])
    seen: list[int] = []

    def changing(body: dict[str, Any], hit: int) -> Reply:
        # A different letter on every hit: an item asked twice could not score the same.
        seen.append(hit)
        if seen_by_model(body["messages"]) == seen_by_model(suite.messages(items[twin["id"]])):
            return Reply("ABCD"[len(seen) % 4])
        return gold_rule(gold)(body, hit)

    server.rules["ra"] = changing
    models = [{"model": "openai/ra", "api_base": server.api_base}]
    panel = write_panel(tmp_path / "p.yaml", source, models, **ENGINES)
    store = tmp_path / "store"
    _run(panel, store)
    twins = [
        b
        for b in server.hits_for("ra")
        if seen_by_model(b["messages"]) == seen_by_model(suite.messages(items[twin["id"]]))
    ]
    assert len(twins) == 1
    [first] = _manifests(store)
    run_id = first["run_id"]
    scores = _scores(store, run_id)
    a = scores[("openai/ra", rows[0]["id"], "correct")]
    b = scores[("openai/ra", twin["id"], "correct")]
    assert a[:2] == b[:2]  # the same answer (request key) scored the same
    assert first["totals"]["cached"] == 1 and first["totals"]["calls"] == len(items) - 1
    # A second identical run scores what the first did, metric for metric.
    _run(panel, store)
    second = _manifests(store)[1]["run_id"]
    metrics = (
        "select task, slice, slice_value, metric, value from metrics where run_id = '{}' "
        "order by all"
    )
    assert (
        query_csv(str(store), metrics.format(run_id))[1:]
        == query_csv(str(store), metrics.format(second))[1:]
    )


def _perturbed_scan(path: Path) -> None:
    points = np.fromfile(path, dtype=np.float32).reshape(-1, 4)
    points[-1, 0] += 0.5
    points.tofile(path)


def test_a_rerun_asks_and_scores_only_what_changed_and_lands_what_moved(
    tmp_path: Path, server: ModelServer, scorer_calls: list[str]
) -> None:
    source, gold = trip_gold(tmp_path)
    _answer_gold(server, gold)
    panel = _panel(tmp_path, source, server)
    store = tmp_path / "store"
    _run(panel, store)
    first = _manifests(store)[0]
    n_items = first["suites"][0]["items"]
    assert _hits(server) == n_items * len(MODELS)
    assert len(scorer_calls) == n_items * len(MODELS)
    # The baseline reads as one part per table and model: its shards' parts are compacted.
    assert first["compaction"]["parts_written"] >= 3 * len(MODELS)
    assert first["compaction"]["error"] is None
    responses = visible_parts(LocalStore(store), tables=["responses"])["responses"]
    assert [k for k in responses if first["run_id"] in k] == sorted(
        f"tables/responses/suite=trip/model={quote(m, safe='')}/{first['run_id']}-compacted.parquet"
        for m in MODELS
    )

    rows = _rows(source)
    by_id = {row["id"]: row for row in rows}
    gold_fixed, reworded, removed = "V_t_1", "V_t_2", "V_t_3"
    scan_item = next(row["id"] for row in rows if row.get("point_cloud"))
    by_id[gold_fixed]["answer"] = "B"
    by_id[reworded]["question"] += " (Assume dry asphalt.)"
    _perturbed_scan(source / by_id[scan_item]["point_cloud"])
    _write_rows(source, [row for row in rows if row["id"] != removed])

    _answer_gold(server, gold)
    scorer_calls.clear()
    _run(panel, store)
    second = _manifests(store)[1]
    old, new = first["run_id"], second["run_id"]
    assert second["baseline"]["run_id"] == old
    # The question and the scan cost a call per model; the gold fix none.
    assert _hits(server) == 2 * len(MODELS)
    # Only the three changed items were scored again; the rest were copied.
    assert sorted(scorer_calls) == sorted([gold_fixed, reworded, scan_item] * len(MODELS))
    totals = second["totals"]
    assert totals["scores_reused"] == (n_items - 4) * len(MODELS)

    changes = query_csv(
        str(store),
        f"select item_id, kind, coalesce(what, ''), coalesce(fields, '') from changes "
        f"where run_id = '{new}' and kind <> 'unchanged' order by item_id",
    )[1:]
    assert sorted(changes) == sorted(
        [
            f"{gold_fixed},changed,reference,reference",
            f"{reworded},changed,prompt,question",
            f"{scan_item},changed,prompt,media",
            f"{removed},removed,,",
        ]
    )
    unchanged = query_csv(
        str(store), f"select count(*) from changes where run_id = '{new}' and kind = 'unchanged'"
    )
    assert unchanged[1:] == [str(n_items - 4)]

    before, after = _scores(store, old), _scores(store, new)
    assert not any(item_id == removed for _, item_id, _ in after)
    moved_items = {gold_fixed, reworded, scan_item}
    for key, value in after.items():
        if key[1] not in moved_items:
            assert before[key] == value  # copied: the same value, request key and content
    # The model answers each item's old gold letter: every changed item flipped to wrong.
    flips = query_csv(
        str(store),
        f"select model, item_id, old_value, new_value from score_changes where run_id = '{new}' "
        "and metric = 'correct' and flipped order by all",
    )[1:]
    assert flips == sorted(
        f"{model},{item_id},1.0,0.0" for model in MODELS for item_id in moved_items
    )
    deltas = query_csv(
        str(store),
        "select model, baseline_value, new_value, delta from metric_deltas "
        f"where run_id = '{new}' and task = '*' and slice = '' and metric = 'accuracy' "
        "order by model",
    )[1:]
    n_new = n_items - 1
    for line, model in zip(deltas, MODELS, strict=True):
        got_model, was, now, delta = line.split(",")
        assert got_model == model and float(was) == 1.0
        assert float(now) == pytest.approx((n_new - 3) / n_new)
        assert float(delta) == pytest.approx(float(now) - 1.0)
    runs = query_csv(str(store), f"select baseline_run_id from runs where run_id = '{new}'")
    assert runs[1:] == [old]


def test_a_new_scorer_version_rescores_every_stored_answer_without_a_call(
    tmp_path: Path, server: ModelServer, scorer_calls: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    source, gold = trip_gold(tmp_path)
    _answer_gold(server, gold)
    panel = _panel(tmp_path, source, server)
    store = tmp_path / "store"
    _run(panel, store)
    n = _manifests(store)[0]["planned_items"]
    _answer_gold(server, gold)
    scorer_calls.clear()
    monkeypatch.setattr(TripSuite, "scorer_version", "2")
    result = invoke("rescore", "--panel", str(panel), "--store", str(store), "--no-report")
    assert result.exit_code == 0, result.output
    assert _hits(server) == 0
    assert len(scorer_calls) == n
    last = _manifests(store)[-1]
    assert last["rescore"] is True and last["totals"]["scores_reused"] == 0
    assert last["totals"]["calls"] == 0 and last["totals"]["cached"] == n
    assert last["baseline"]["rescored_suites"] == ["trip"]
    versions = query_csv(
        str(store),
        f"select distinct scorer_version from scores where run_id = '{last['run_id']}'",
    )
    assert versions[1:] == ["2"]
    # A plain rerun under the new version now copies the rescored rows: nothing to do.
    scorer_calls.clear()
    _run(panel, store)
    assert _hits(server) == 0 and scorer_calls == []


def test_a_rescore_refuses_when_an_answer_is_missing(tmp_path: Path, server: ModelServer) -> None:
    source, gold = trip_gold(tmp_path)
    _answer_gold(server, gold)
    panel = _panel(tmp_path, source, server)
    store = tmp_path / "store"
    _run(panel, store)
    rows = _rows(source)
    _write_rows(source, [*rows, {**rows[0], "id": "NEW_1", "question": "A new question?"}])
    _answer_gold(server, gold)
    result = invoke("rescore", "--panel", str(panel), "--store", str(store), "--no-report")
    assert result.exit_code == 2, result.output
    assert "no stored answer" in " ".join(result.output.split())
    assert "NEW_1" in result.output
    assert _hits(server) == 0
    assert len(_manifests(store)) == 1  # the first run's: the refused rescore left none


def test_a_refused_rescore_leaves_no_run_behind(tmp_path: Path) -> None:
    """A rescore the store cannot answer is bad input: refused before the run is recorded, so
    `runs` lists no `failed` run of it (and a later rerun's baseline is not disturbed)."""
    source, _ = trip_gold(tmp_path)
    panel = write_panel(tmp_path / "panel.yaml", source, [{"model": "roadeval/always-a"}])
    store = tmp_path / "store"
    result = invoke("rescore", "--panel", str(panel), "--store", str(store), "--no-report")
    assert result.exit_code == 2, result.output
    message = " ".join(result.output.split())
    n = len(_rows(source))
    assert message.startswith(f"error: rescore: {n} items have no stored answer (first: trip x ")
    assert message.endswith("a rescore asks no model: run the panel to ask them"), message
    assert not (store / "runs").exists()
    assert not list(store.glob("tables/run_events/*"))


def test_against_an_unknown_run_or_another_panels_run_is_refused_before_any_call(
    tmp_path: Path, server: ModelServer
) -> None:
    source, gold = trip_gold(tmp_path)
    _answer_gold(server, gold)
    store = tmp_path / "store"
    other = _panel(tmp_path, source, server, name="other")
    _run(other, store)
    other_run = _manifests(store)[0]["run_id"]
    panel = _panel(tmp_path, source, server)
    _answer_gold(server, gold)
    unknown = invoke("run", "--panel", str(panel), "--store", str(store), "--against", "nope")
    assert unknown.exit_code == 2
    assert "no run of that id" in unknown.output
    foreign = invoke("run", "--panel", str(panel), "--store", str(store), "--against", other_run)
    assert foreign.exit_code == 2
    assert "panel 'other'" in " ".join(foreign.output.split())
    assert _hits(server) == 0
    assert len(_manifests(store)) == 1


def test_against_a_run_that_died_says_it_died(tmp_path: Path) -> None:
    """A run killed mid-way keeps its `running` event, and its heartbeat stops: `--against` it
    reads it as `runs` does, died, not running."""
    source, _ = trip_gold(tmp_path)
    panel = write_panel(tmp_path / "panel.yaml", source, [{"model": "roadeval/always-a"}])
    store = LocalStore(tmp_path / "store")
    started = datetime.now(UTC) - timedelta(hours=1)
    when = {"started_at": started, "heartbeat_s": 15.0}
    event = record("run_events", run_id="r1", seq=0, status="running", panel="test", **when)
    land(store, "r1-event-000", [Part("run_events", [event])])
    # Its last beat, from a process of this machine that still lives: stopped by time alone.
    beat = Heartbeat(run_id="r1", at=started, interval_s=15.0, host=gethostname(), pid=getpid())
    store.put(heartbeat_key("r1"), beat.to_json())
    assert query_csv(store.uri, "select status from runs")[1:] == ["died"]
    result = invoke("run", "--panel", str(panel), "--store", store.uri, "--against", "r1")
    assert result.exit_code == 2, result.output
    message = " ".join(result.output.split())
    at = f"{started:%Y-%m-%d %H:%M:%S} UTC"
    assert message.startswith(
        f"error: --against r1: that run died (its last heartbeat was at {at}), not finished; "
        "a baseline must be a finished run"
    ), message
    assert query_csv(store.uri, "select count(*) from runs")[1:] == ["1"]


def _stride_panel(tmp_path: Path, source: Path, judge_params: dict[str, Any]) -> Path:
    judge = {"name": "judge", "model": "roadeval/midpoint-judge", "params": judge_params}
    models = [{"name": "random", "model": "roadeval/random", "params": {"seed": 0}}]
    panel = {
        "name": "judged",
        "suites": [{"name": "stride", "source": str(source)}],
        "models": models,
        "judge": judge,
        **ENGINES,
    }
    path = tmp_path / "judged.yaml"
    path.write_text(json.dumps(panel))
    return path


def test_the_judge_is_asked_again_only_where_its_prompt_would_differ(tmp_path: Path) -> None:
    source = get_suite("stride").generate_demo(tmp_path / "stride-src")
    questions = source if source.is_file() else source / "questions.json"
    store = tmp_path / "store"
    _run(_stride_panel(tmp_path, questions, {}), store)
    first = _manifests(store)[0]
    judged = first["totals"]["judge_calls"]
    assert judged > 1
    # Unchanged: every judged score is copied, the judge is not asked.
    _run(_stride_panel(tmp_path, questions, {}), store)
    assert _manifests(store)[1]["totals"]["judge_calls"] == 0
    # One open answer's reference fixed: that item alone is judged again.
    body = json.loads(questions.read_text())
    fixed = next(q for q in body["tasks"] if q["question_format"] == "OEQ")
    fixed["ground_truth"] += " It keeps its lane."
    questions.write_text(json.dumps(body))
    _run(_stride_panel(tmp_path, questions, {}), store)
    third = _manifests(store)[2]["totals"]
    assert (third["judge_calls"], third["calls"]) == (1, 0)
    # Other judge settings: every judged item is judged again (its stored answer reused).
    _run(_stride_panel(tmp_path, questions, {"seed": 1}), store)
    fourth = _manifests(store)[3]["totals"]
    assert (fourth["judge_calls"], fourth["calls"], fourth["scores_reused"]) == (judged, 0, 0)


def test_a_damaged_baseline_part_is_named_and_its_items_are_not_copied(
    tmp_path: Path, server: ModelServer, scorer_calls: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    source, gold = trip_gold(tmp_path)
    _answer_gold(server, gold)
    panel = _panel(tmp_path, source, server)
    store = tmp_path / "store"
    _run(panel, store)
    first = _manifests(store)[0]
    # The part a rerun reads: the one the baseline's scores were compacted into.
    [damaged] = [
        p
        for p in (store / "tables" / "scores").rglob("*-compacted.parquet")
        if "model=openai%2Fra" in str(p)
    ]
    damaged.write_bytes(damaged.read_bytes()[:100])
    _answer_gold(server, gold)
    scorer_calls.clear()
    _run(panel, store)
    # Its answers were still the baseline's (no call); its scores could not be copied.
    assert _hits(server) == 0
    assert len(scorer_calls) == first["suites"][0]["items"]
    assert "not a readable part" in caplog.text and damaged.name in caplog.text
    # The comparison at the run's end cannot read it either: the pairs of the baseline's scores
    # view (made over every part) are named as not compared, the part named, and the run ends.
    uncompared = [r.message for r in caplog.records if "not compared" in r.message]
    assert any(m.startswith("trip x openai/ra not compared") for m in uncompared)
    assert all(damaged.name in m for m in uncompared)


def _landed(store: Path, table: str, run_id: str) -> list[dict[str, Any]]:
    from roadeval.storage.landing import read_table
    from roadeval.storage.store import open_store

    rows = read_table(open_store(str(store)), table).to_pylist()
    return [row for row in rows if row["run_id"] == run_id]


def test_copied_rows_are_the_baselines_under_this_run(tmp_path: Path) -> None:
    """A copied outcome's response and parse rows (the judge's included) are the baseline's,
    with this run's id, reused at no cost and nothing sent, and with where they came from."""
    source = get_suite("stride").generate_demo(tmp_path / "stride-src")
    questions = source if source.is_file() else source / "questions.json"
    store = tmp_path / "store"
    panel = _stride_panel(tmp_path, questions, {})
    _run(panel, store)
    _run(panel, store)
    old, new = (m["run_id"] for m in _manifests(store))
    assert _manifests(store)[1]["totals"]["calls"] == 0

    def by_key(table: str, run_id: str) -> dict[tuple[Any, ...], dict[str, Any]]:
        return {
            (
                r["model"],
                r["item_id"],
                r["sample"],
                r.get("role", ""),
                r["attempt"],
            ): r
            for r in _landed(store, table, run_id)
        }

    first, second = by_key("responses", old), by_key("responses", new)
    assert {k[3] for k in first} == {"answer", "judge"}
    assert set(second) == set(first)
    ignored = {"run_id", "try_number", "cost_usd", "cached", "origin_run_id", "created_at"}
    for key, was in first.items():
        now = second[key]
        assert {k: v for k, v in now.items() if k not in ignored} == {
            k: v for k, v in was.items() if k not in ignored
        }
        assert (now["try_number"], now["cost_usd"], now["cached"]) == (0, 0.0, True)
        assert now["origin_run_id"] == old and now["may_be_billed"] is False
    parses_then, parses_now = by_key("parses", old), by_key("parses", new)
    assert set(parses_now) == set(parses_then) and parses_then
    for key, was in parses_then.items():
        assert {**parses_now[key], "run_id": old} == was
