"""How a run ends, as the CLI tells it and the store records it: a run that fails is `failed`
with its reason, and a row field the release does not have is a warning, never silence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.suite import ParsedAnswer
from roadeval.benchmarks.trip.suite import TripSuite

from support.trip_panel import invoke, query_csv, trip_gold, write_panel

pytestmark = pytest.mark.usefixtures("under_prefect")


def test_a_run_whose_shard_fails_is_recorded_failed_with_its_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A parser that raises fails its shard (a scorer that raises fails its item alone: see
    # test_scorer_errors).
    source, _ = trip_gold(tmp_path)
    parse = TripSuite.parse

    def parse_or_break(self: TripSuite, item: Item, output: ModelOutput) -> ParsedAnswer:
        if item.item_id.endswith("7"):
            raise RuntimeError(f"gold answer of {item.item_id} will not read")
        return parse(self, item, output)

    monkeypatch.setattr(TripSuite, "parse", parse_or_break)
    store = tmp_path / "store"
    panel = write_panel(tmp_path / "p.yaml", source, [{"model": "roadeval/always-a"}])
    result = invoke("run", "--panel", str(panel), "--store", str(store))
    assert result.exit_code == 1
    message = " ".join(result.output.split())
    assert "a shard failed: gold answer of" in message and "recorded failed" in message
    assert "Traceback" not in result.output
    [row] = query_csv(str(store), "select status, message from runs")[1:]
    assert row.startswith("failed,a shard failed: gold answer of")


def test_unknown_row_fields_are_a_warning_listing_them(tmp_path: Path) -> None:
    source, gold = trip_gold(tmp_path)
    items = source / "items.jsonl"
    rows = [json.loads(line) for line in items.read_text().splitlines()]
    rows[3]["hint"] = "look left"
    items.write_text("".join(json.dumps(row) + "\n" for row in rows))
    store = tmp_path / "store"
    panel = write_panel(tmp_path / "p.yaml", source, [{"model": "roadeval/always-a"}])
    result = invoke("run", "--panel", str(panel), "--store", str(store))
    assert result.exit_code == 0, result.output
    message = " ".join(result.output.split())
    assert "warning: suite trip: unknown fields ignored:" in message
    assert "'hint' (1 row)" in message
    [manifest] = [json.loads(p.read_text()) for p in (store / "runs").glob("*/manifest.json")]
    assert manifest["suites"][0]["unknown_fields"] == {str(items): {"hint": 1}}
    assert manifest["totals"]["scored"] == len(gold)
