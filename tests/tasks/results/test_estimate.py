"""The dry run's estimate from a real plan, and against the real spend of the same run."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import litellm
import pytest
from rich.console import Console

from roadeval.benchmarks.registry import get_suite
from roadeval.storage.catalog import query
from roadeval.storage.store import LocalStore
from roadeval.tasks.cache.responses import ResponseCache
from roadeval.tasks.calls.gateway import ModelClient
from roadeval.tasks.render.stage import render_items
from roadeval.tasks.requests.model_spec import ModelSpec
from roadeval.tasks.results.estimate import (
    estimate_plans,
    estimate_table,
    land_estimates,
    request_worst_case,
)
from roadeval.tasks.shard.plan import Shard, ShardPlan, plan_shard
from roadeval.tasks.shard.stages import run_shard

from support.model_server import ModelServer, Reply

NOW = datetime(2026, 1, 1, tzinfo=UTC)
IN, OUT = 1e-6, 4e-6  # panel prices: USD per token


def _plans(
    root: Path, store: LocalStore, suite_name: str, specs: list[ModelSpec], n: int = 4
) -> list[ShardPlan]:
    suite = get_suite(suite_name)
    items = suite.load(suite.generate_demo(root / suite_name)).items[:n]
    renders = render_items(suite, items).renders
    return [
        plan_shard(Shard("run", i, suite, ModelClient(spec), items), renders, ResponseCache(store))
        for i, spec in enumerate(specs)
    ]


def test_estimate_of_a_small_plan(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    priced = ModelSpec(
        model="openai/gpt-4o",
        name="priced",
        params={"max_tokens": 50},
        input_cost_per_token=IN,
        output_cost_per_token=OUT,
        num_retries=2,
    )
    unpriced = ModelSpec(
        model="openai/Qwen/Qwen2.5-VL-7B-Instruct", name="local", params={"max_tokens": 50}
    )
    baseline = ModelSpec(model="roadeval/lane-rule")
    plans = _plans(tmp_path, store, "roadbench", [priced, unpriced, baseline])
    rows = {row.model: row for row in estimate_plans(plans, None, "run", NOW)}
    p = rows["priced"]
    attempts = get_suite("roadbench").max_attempts
    assert (p.requests, p.requests_worst, p.answered) == (4, 4 * attempts, 0)
    assert p.tokens_out_max == 4 * 50 and p.tokens_out_worst == 4 * attempts * 50
    assert p.expected_usd == pytest.approx(p.tokens_in * IN + p.tokens_out_max * OUT)
    assert p.worst_usd == pytest.approx(attempts * p.expected_usd)
    assert p.retry_bound_usd == pytest.approx(3 * p.worst_usd)
    assert (p.priced, p.price_source, p.image_rule) == (True, "panel", "openai-tile")
    # Every first request's worst case is what the budget would reserve for it.
    first = [request_worst_case(priced, planned, 0) for planned in plans[0].items]
    assert sum(c.tokens_in for c in first) == p.tokens_in
    assert sum(c.usd or 0 for c in first) == pytest.approx(p.expected_usd)
    u = rows["local"]
    assert (u.priced, u.price_source, u.expected_usd, u.worst_usd) == (
        False,
        "unpriced",
        None,
        None,
    )
    assert u.image_rule == "qwen2-vl"
    b = rows["roadeval/lane-rule"]
    assert (b.expected_usd, b.worst_usd, b.price_source) == (0.0, 0.0, "baseline")

    console = Console(width=250, record=True, file=io.StringIO())
    console.print(estimate_table(list(rows.values())))
    text = console.export_text()
    assert "unpriced" in text and "without unpriced: local" in text
    assert "$0.0000" in text  # the baseline, not the unpriced model

    land_estimates(store, "run", list(rows.values()))
    _, landed = query(store, "select model, expected_usd from estimates order by model")
    assert landed == [
        ("local", None),
        ("priced", pytest.approx(p.expected_usd)),
        ("roadeval/lane-rule", 0.0),
    ]


def test_an_answered_request_is_not_estimated_again(tmp_path: Path, server: ModelServer) -> None:
    store = LocalStore(tmp_path / "store")
    server.rules["gpt-4o"] = lambda body, hit: Reply(
        "- 1\n- 2\n", prompt_tokens=1, completion_tokens=1
    )
    spec = ModelSpec(
        model="openai/gpt-4o",
        api_base=server.api_base,
        params={"max_tokens": 20},
        input_cost_per_token=IN,
        output_cost_per_token=OUT,
    )
    plans = _plans(tmp_path, store, "roadbench", [spec], n=2)
    run_shard(plans[0], store)
    again = _plans(tmp_path, store, "roadbench", [spec], n=2)
    (row,) = estimate_plans(again, None, "run2", NOW)
    assert row.answered == 2
    assert (row.requests, row.expected_usd) == (0, 0.0)


def _counted(model: str, text: str) -> Any:
    """A server rule that reports usage as a provider would: the prompt as LiteLLM's counter
    counts it (text, images, framing) and every output token the request allowed."""

    def rule(body: dict[str, Any], hit: int) -> Reply:
        prompt = litellm.token_counter(model=model, messages=body["messages"])
        return Reply(text, prompt_tokens=prompt, completion_tokens=int(body["max_tokens"]))

    return rule


def test_estimate_against_the_real_spend_of_the_same_run(
    tmp_path: Path, server: ModelServer
) -> None:
    """Plan, estimate, run: expected <= spent <= worst case, judge calls and re-asks included."""
    store = LocalStore(tmp_path / "store")
    # Unreadable YAML: RoadBench asks again, up to its last attempt; STRIDE's open answers go to
    # the judge as they are.
    server.rules["gpt-4o"] = _counted("gpt-4o", "answer: [1, 2")
    server.rules["gpt-4.1"] = _counted("gpt-4.1", '{"score": 7, "rationale": "close"}')
    common = {"api_base": server.api_base, "input_cost_per_token": IN, "output_cost_per_token": OUT}
    answerer = ModelSpec(model="openai/gpt-4o", params={"max_tokens": 40}, num_retries=0, **common)
    judge = ModelSpec(model="openai/gpt-4.1", name="judge", num_retries=0, **common)
    plans = [
        *_plans(tmp_path, store, "roadbench", [answerer], n=3),
        *_plans(tmp_path, store, "stride", [answerer], n=12),
    ]
    rows = estimate_plans(plans, judge, "run", NOW)
    judge_rows = [r for r in rows if r.role == "judge"]
    assert judge_rows and judge_rows[0].requests_worst > 0, (
        "the demo STRIDE items include judged ones"
    )
    expected = sum(r.expected_usd or 0 for r in rows)
    worst = sum(r.worst_usd or 0 for r in rows)

    judge_client = ModelClient(judge)
    spent = sum(run_shard(plan, store, judge=judge_client).cost_usd for plan in plans)
    _, totals = query(
        store, "select role, sum(cost_usd), sum(requests) from cost_totals group by role"
    )
    by_role = {role: (usd, n) for role, usd, n in totals}
    assert sum(usd for usd, _ in by_role.values()) == pytest.approx(spent)
    assert by_role["judge"][1] == judge_rows[0].requests_worst
    margin = (worst - spent) / spent
    print(f"expected ${expected:.6f} <= spent ${spent:.6f} <= worst ${worst:.6f} (+{margin:.1%})")
    assert expected <= spent <= worst


def test_input_tokens_are_counted_whatever_the_output_bound(tmp_path: Path) -> None:
    """With no bound on its output (no max_tokens, a model the price map does not know), a
    request's input tokens are still counted; only its output and its priced cost read
    unbounded, and the judge asked about its answers counts its own prompt."""
    store = LocalStore(tmp_path / "store")
    prices = {"input_cost_per_token": IN, "output_cost_per_token": OUT}
    common = {"model": "openai/roadeval-test-model", **prices}
    bounded = ModelSpec(name="bounded", params={"max_tokens": 16}, **common)
    unbounded = ModelSpec(name="unbounded", **common)
    judge = ModelSpec(model="openai/gpt-4.1", name="judge", **prices)
    rows = {}
    for spec in (bounded, unbounded):
        plans = _plans(tmp_path / spec.label, store, "stride", [spec], n=12)
        rows[spec.label] = {r.role: r for r in estimate_plans(plans, judge, "run", NOW)}
    b, u = rows["bounded"]["answer"], rows["unbounded"]["answer"]
    assert b.tokens_in > 0
    assert (u.tokens_in, u.tokens_in_worst) == (b.tokens_in, b.tokens_in_worst)
    assert (b.tokens_out_max, b.expected_usd is not None) == (16 * b.requests, True)
    assert (u.tokens_out_max, u.tokens_out_worst, u.expected_usd, u.worst_usd) == (
        None,
        None,
        None,
        None,
    )
    assert u.priced and u.price_source == "panel"
    jb, ju = rows["bounded"]["judge"], rows["unbounded"]["judge"]
    assert ju.requests_worst == jb.requests_worst > 0
    # The judge's prompt holds the answer: 16 tokens at most with the bound, uncounted without.
    assert jb.tokens_in_worst - ju.tokens_in_worst == 16 * jb.requests_worst
    assert ju.tokens_out_worst == jb.tokens_out_worst is not None
    assert (jb.worst_usd is not None, ju.worst_usd) == (True, None)
