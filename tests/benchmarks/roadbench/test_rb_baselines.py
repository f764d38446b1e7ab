"""Offline baselines: registered per task, deterministic, answering in YAML from the request
alone, and scored through the normal parse and score path."""

from __future__ import annotations

import pytest
from shapely import from_wkt

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.registry import BaselineCall, find_baseline, get_suite
from roadeval.benchmarks.roadbench.metrics_lanes import rule_designations
from roadeval.benchmarks.suite import ParseStatus
from roadeval.tasks.requests.request import request_key

SUITE = get_suite("roadbench")


@pytest.fixture(scope="module")
def items(tmp_path_factory: pytest.TempPathFactory) -> list[Item]:
    return SUITE.load(SUITE.generate_demo(tmp_path_factory.mktemp("rb-base"))).items


def ask(name: str, item: Item, seed: int = 0, attempt: int = 1) -> str:
    baseline = find_baseline(name, "roadbench", item.task)
    assert baseline is not None
    # Keyed as the gateway keys it: by the request the item's prompt sends.
    messages = SUITE.prompt(item, SUITE.render(item))
    key = request_key(f"roadeval/{name}", {"seed": seed}, messages, attempt)
    call = BaselineCall.blind(item, seed, attempt, key)
    return baseline.fn(call)


@pytest.mark.parametrize(
    ("name", "tasks"),
    [
        ("lane-rule", {"2", "5"}),
        ("always-2", {"1", "4"}),
        ("random", {"1", "4", "6"}),
        ("do-nothing", {"3"}),
    ],
)
def test_each_baseline_covers_its_tasks_only(name: str, tasks: set[str]) -> None:
    covered = {task for task in "123456" if find_baseline(name, "roadbench", task)}
    assert covered == tasks


def test_every_baseline_answer_parses(items: list[Item]) -> None:
    for item in items:
        for name in ("lane-rule", "always-2", "random", "do-nothing"):
            if find_baseline(name, "roadbench", item.task) is None:
                continue
            parsed = SUITE.parse(item, ModelOutput(ask(name, item)))
            assert parsed.status is ParseStatus.OK, (name, item.item_id, parsed)
            assert SUITE.score(item, parsed)["release_error"] == 0.0


def test_lane_rule_uses_the_lane_count_in_the_prompt(items: list[Item]) -> None:
    for item in items:
        if item.task in {"2", "5"}:
            parsed = SUITE.parse(item, ModelOutput(ask("lane-rule", item)))
            assert parsed.value == rule_designations(item.extra["num_lanes"])


def test_always_two(items: list[Item]) -> None:
    item = next(item for item in items if item.task == "4")
    assert SUITE.parse(item, ModelOutput(ask("always-2", item))).value == 2


def test_random_is_seeded_per_request_seed_and_attempt(items: list[Item]) -> None:
    lane_items = [item for item in items if item.task == "1"]
    first = [ask("random", item, seed=3) for item in lane_items]
    assert first == [ask("random", item, seed=3) for item in lane_items]
    values = {
        SUITE.parse(item, ModelOutput(text)).value
        for item, text in zip(lane_items, first, strict=True)
    }
    assert values <= {2, 3, 4} and len(values) > 1
    other_seed = [ask("random", item, seed=4) for item in lane_items]
    other_attempt = [ask("random", item, seed=3, attempt=2) for item in lane_items]
    assert other_seed != first and other_attempt != first
    road = [
        SUITE.parse(item, ModelOutput(ask("random", item))).value
        for item in items
        if item.task == "6"
    ]
    assert set(road) <= {"main", "service"}


def test_do_nothing_returns_the_reference_line(items: list[Item]) -> None:
    for item in (item for item in items if item.task == "3"):
        parsed = SUITE.parse(item, ModelOutput(ask("do-nothing", item)))
        line = from_wkt(item.extra["pixel_line"])
        start, end = line.coords[0], line.coords[-1]
        assert [from_wkt(p).coords[0] for p in parsed.value["junctions"]] == [start, end]
        assert [from_wkt(text).equals(line) for text in parsed.value["lines"]] == [True]
