"""`roadeval runs`: every item of a run is counted somewhere, for a run that died (killed before
its last event: what it landed) and for items a suite's scorer raised on (unscored)."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest

from roadeval.benchmarks.registry import get_suite
from roadeval.flows.cli.landed import LANDED_COLUMNS, landed_counts
from roadeval.storage.store import open_store

from support.cli_process import start_cli, wait_until
from support.model_server import ModelServer, Reply
from support.trip_panel import (
    gold_rule,
    invoke,
    query_csv,
    seen_by_model,
    trip_gold,
    trip_scorer_raises_on,
    write_panel,
)

pytestmark = pytest.mark.usefixtures("inline")

ENGINES = {"scoring": {"engine": "local"}, "render": {"engine": "local"}}
# Prices, so that what a run paid is a number to check.
PRICES = {"input_cost_per_token": 1e-6, "output_cost_per_token": 1e-5}


def _listed(store: Path) -> list[dict[str, str]]:
    """`roadeval runs --format csv`, row by row."""
    result = invoke("runs", "--store", str(store), "--format", "csv")
    assert result.exit_code == 0, result.output
    return list(csv.DictReader(io.StringIO(result.output)))


def _one(store: Path, sql: str) -> str:
    [value] = query_csv(str(store), sql)[1:]
    return value


def _scored_items(store: Path) -> int:
    """Items with scores in the store (0 before anything landed)."""
    sql = "select count(distinct item_id) from scores"
    result = invoke("query", "--store", str(store), "--format", "csv", sql)
    return int(result.output.splitlines()[1]) if result.exit_code == 0 else 0


def _accounted(row: dict[str, str]) -> int:
    """The items a `runs` row counts somewhere."""
    names = ("n_scored", "n_scorer_errors", "n_errors", "n_unfinished")
    return sum(int(row[name]) for name in names)


def test_runs_counts_what_a_died_run_landed(tmp_path: Path, server: ModelServer) -> None:
    source, gold = trip_gold(tmp_path)
    answer = gold_rule(gold)
    server.rules["slow"] = lambda body, hit: Reply(answer(body, hit).text, delay_s=0.2)
    model = {
        "model": "openai/slow",
        "name": "slow",
        "api_base": server.api_base,
        "max_concurrency": 2,
        **PRICES,
    }
    panel = write_panel(tmp_path / "p.yaml", source, [model], chunk_size=5, **ENGINES)
    store = tmp_path / "store"
    args = ["run", "--panel", str(panel), "--store", str(store)]
    cli = start_cli(args, tmp_path / "killed", {"ROADEVAL_HEARTBEAT_S": "0.5"})
    # Killed once a shard has landed, with more asked since.
    wait_until(lambda: _scored_items(store) > 0, what="a shard landed")
    asked = len(server.hits_for("slow"))
    wait_until(lambda: len(server.hits_for("slow")) > asked + 2, what="more requests")
    cli.kill()
    wait_until(lambda: [r["status"] for r in _listed(store)] == ["died"], timeout=10, what="died")
    [row] = _listed(store)
    run_id = row["run_id"]
    where = f"run_id = '{run_id}'"
    scored = int(_one(store, f"select count(distinct item_id) from scores where {where}"))
    assert scored >= 5  # a shard of 5 at least
    assert int(row["n_items"]) == len(gold)
    assert int(row["n_scored"]) == scored
    assert int(row["n_calls"]) == int(
        _one(store, f"select count(*) from responses where {where} and try_number = 1")
    )
    assert int(row["n_cached"]) == int(row["n_errors"]) == int(row["n_scorer_errors"]) == 0
    assert int(row["n_unfinished"]) == len(gold) - scored
    paid = float(_one(store, f"select sum(cost_usd) from costs where {where}"))
    assert paid > 0 and float(row["cost_usd"]) == pytest.approx(paid)
    assert _accounted(row) == len(gold)


def test_runs_counts_the_items_a_scorer_failed_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, gold = trip_gold(tmp_path)
    broken = {item.item_id for item in get_suite("trip").load(source).items[3:5]}
    trip_scorer_raises_on(monkeypatch, broken)
    models: list[dict[str, Any]] = [{"model": "roadeval/always-a"}]
    panel = write_panel(tmp_path / "p.yaml", source, models, **ENGINES)
    store = tmp_path / "store"
    result = invoke("run", "--panel", str(panel), "--store", str(store))
    assert result.exit_code == 0, result.output
    [row] = _listed(store)
    assert row["status"] == "finished"
    assert int(row["n_scorer_errors"]) == len(broken)
    assert int(row["n_scored"]) == len(gold) - len(broken)
    assert _accounted(row) == int(row["n_items"]) == len(gold)


def test_a_runs_counts_read_from_what_it_landed_are_the_counts_it_recorded(
    tmp_path: Path, server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What `runs` shows of a died run is counted from its rows as the run counts itself: over
    # a first run and its rerun (answers reused), with model errors and scorer errors, the two
    # agree on every count a finished run recorded.
    source, gold = trip_gold(tmp_path)
    items = get_suite("trip").load(source).items
    trip_scorer_raises_on(monkeypatch, {items[3].item_id, items[4].item_id})
    refused = {seen_by_model(get_suite("trip").messages(item)) for item in items[6:9]}
    answer = gold_rule(gold)

    def mixed(body: dict[str, Any], hit: int) -> Reply:
        if seen_by_model(body["messages"]) in refused:
            return Reply("no", status=400)
        return answer(body, hit)

    server.rules["mixed"] = mixed
    model = {"model": "openai/mixed", "name": "mixed", "api_base": server.api_base, **PRICES}
    panel = write_panel(tmp_path / "p.yaml", source, [model], **ENGINES)
    store = tmp_path / "store"
    for _ in range(2):
        result = invoke("run", "--panel", str(panel), "--store", str(store))
        assert result.exit_code == 1, result.output  # items ended in model errors
    rows = _listed(store)
    landed = landed_counts(open_store(str(store)), [row["run_id"] for row in rows])
    for row in rows:
        recorded = {name: float(row[name]) for name in LANDED_COLUMNS}
        assert recorded["n_errors"] == len(refused) and recorded["n_scorer_errors"] == 2
        assert landed[row["run_id"]] == pytest.approx(recorded), row
    first, second = rows
    assert float(first["n_calls"]) == len(gold) and float(second["n_cached"]) > 0
