"""A shard's plan rows, built by column: one per request the protocol may make, then the judge's
conditional call, each row's item columns its own item's."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from roadeval.storage.records import SCHEMAS
from roadeval.tasks.shard.plan_table import plan_table

NOW = datetime(2026, 12, 4, tzinfo=UTC)


def _planned(item_id: str, attempts: int, answered: int, stale: int = 0) -> Any:
    params = {"max_tokens": 64, "temperature": 0}
    requests = tuple(
        SimpleNamespace(role="answer", key=f"{item_id}-k{n}", attempt=n, params=params)
        for n in range(1, attempts + 1)
    )
    item = SimpleNamespace(
        suite="s", task=f"t-{item_id}", item_id=item_id, content_hash=f"h{item_id}"
    )
    return SimpleNamespace(
        item=item,
        requests=requests,
        images=1,
        prompt_tokens_est=40,
        answered=lambda index: index < answered,
        was_stale=lambda index: index < stale,
        samples=(),
        sample_count=1,
    )


def _plan(judged: bool) -> Any:
    def client(label: str) -> Any:
        return SimpleNamespace(
            spec=SimpleNamespace(label=label, model=f"openai/{label}"), api_base="http://x"
        )

    shard = SimpleNamespace(
        run_id="r",
        sample=2,
        variant="blind",
        client=client("m"),
        suite=SimpleNamespace(uses_judge=judged),
    )
    return SimpleNamespace(
        shard=shard, items=[_planned("a", 2, 1), _planned("b", 1, 0, stale=1)]
    ), client("judge")


def test_a_judged_shard_plans_each_attempt_and_one_conditional_judge_call_per_item() -> None:
    plan, judge = _plan(judged=True)
    table = plan_table(plan, judge, NOW)
    assert table.schema == SCHEMAS["plan"]
    rows = table.to_pylist()
    assert [(r["item_id"], r["role"], r["attempt"], r["model"]) for r in rows] == [
        ("a", "answer", 1, "m"),
        ("a", "answer", 2, "m"),
        ("a", "judge", 1, "judge"),
        ("b", "answer", 1, "m"),
        ("b", "judge", 1, "judge"),
    ]
    assert [r["task"] for r in rows] == ["t-a", "t-a", "t-a", "t-b", "t-b"]
    assert [r["answered"] for r in rows] == [True, False, False, False, False]
    # b's stored answer was too old to reuse; which verdict a judge call asks is not known yet.
    assert [r["stale"] for r in rows] == [False, False, None, True, None]
    assert [r["conditional"] for r in rows] == [False, True, True, False, True]
    assert [r["request_key"] for r in rows] == ["a-k1", "a-k2", None, "b-k1", None]
    assert {(r["run_id"], r["sample"], r["variant"], r["answer_model"]) for r in rows} == {
        ("r", 2, "blind", "m")
    }
    answers = [r for r in rows if r["role"] == "answer"]
    assert {r["params_json"] for r in answers} == {'{"max_tokens": 64, "temperature": 0}'}
    assert {r["max_output_tokens"] for r in answers} == {64}
    assert {r["max_output_tokens"] for r in rows if r["role"] == "judge"} == {None}


def test_a_shard_without_a_judge_plans_its_attempts_only() -> None:
    plan, judge = _plan(judged=False)
    rows = plan_table(plan, judge, NOW).to_pylist()
    assert [(r["item_id"], r["attempt"]) for r in rows] == [("a", 1), ("a", 2), ("b", 1)]
