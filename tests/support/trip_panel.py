"""A TRIP demo suite, a panel over it, and the CLI driven in process: shared by the flow tests."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.suite import ParsedAnswer
from roadeval.benchmarks.trip.suite import TripSuite
from roadeval.flows.cli.main import app

from support.model_server import Reply, prompt_text

runner = CliRunner()


def invoke(*args: str) -> Any:
    result = runner.invoke(app, list(args), catch_exceptions=False)
    return result


def seen_by_model(messages: list[dict[str, Any]]) -> tuple[str, tuple[str, ...]]:
    """What a model sees: the prompt text and the image URLs, in order."""
    urls = tuple(
        part["image_url"]["url"] if isinstance(part["image_url"], dict) else part["image_url"]
        for message in messages
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if part.get("type") == "image_url"
    )
    return prompt_text({"messages": messages}), urls


def trip_gold(tmp_path: Path) -> tuple[Path, dict[tuple[str, tuple[str, ...]], str]]:
    """Generate the TRIP demo suite and map what each item shows a model to its gold letter."""
    suite = get_suite("trip")
    source = suite.generate_demo(tmp_path / "trip-src")
    items = suite.load(source).items
    gold = {seen_by_model(suite.messages(item)): item.reference for item in items}
    assert len(gold) == len(items)
    return source, gold


def trip_with_text_items(root: Path, extra: int) -> Path:
    """The TRIP demo suite (images, scans and text) with `extra` more text items made from its
    text rows (ids and questions made distinct, so each is a request of its own)."""
    import json

    from roadeval.benchmarks.trip.taxonomy import ITEMS_FILE

    source = get_suite("trip").generate_demo(root)
    lines = (source / ITEMS_FILE).read_text().splitlines()
    text_rows = [row for line in lines if (row := json.loads(line))["modality"] == "text"]
    with (source / ITEMS_FILE).open("a", encoding="utf-8") as out:
        for k in range(extra):
            row = {**text_rows[k % len(text_rows)], "id": f"more-{k}"}
            row["question"] = f"{row['question']} (#{k})"
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return source


def gold_rule(gold: dict[tuple[str, tuple[str, ...]], str]):
    def rule(body: dict[str, Any], hit: int) -> Reply:
        return Reply(gold.get(seen_by_model(body["messages"]), "?"))

    return rule


def query_csv(store: str, sql: str) -> list[str]:
    """`roadeval query --format csv` through the CLI; the lines it printed, header first."""
    result = invoke("query", "--store", store, "--format", "csv", sql)
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def write_panel(path: Path, source: Path, models: list[dict[str, Any]], **extra: Any) -> Path:
    panel = {
        "name": "test",
        "suites": [{"name": "trip", "source": str(source)}],
        "models": models,
        **extra,
    }
    path.write_text(yaml.safe_dump(panel))
    return path


def answering_panel(tmp_path: Path, server: Any, name: str, reply: Reply) -> Path:
    """A TRIP demo panel of one model, `name` on the test server answering `reply` to every
    item, scored and drawn in the run's own process."""
    source, _ = trip_gold(tmp_path)
    server.rules[name] = lambda body, hit: reply
    return write_panel(
        tmp_path / "panel.yaml",
        source,
        [{"model": f"openai/{name}", "name": name, "api_base": server.api_base}],
        scoring={"engine": "local"},
        render={"engine": "local"},
    )


def trip_scorer_raises_on(
    monkeypatch: pytest.MonkeyPatch, broken: Collection[str], note: str = ""
) -> None:
    """TRIP's scorer raises on the items `broken` (a RuntimeError naming the item, then `note`
    in brackets), and scores the rest as before, until `monkeypatch` is undone."""
    scored = TripSuite.score
    tail = f" ({note})" if note else ""

    def score_or_raise(self: TripSuite, item: Item, parsed: ParsedAnswer) -> dict[str, float]:
        if item.item_id in broken:
            raise RuntimeError(f"gold of {item.item_id} will not read{tail}")
        return scored(self, item, parsed)

    monkeypatch.setattr(TripSuite, "score", score_or_raise)
