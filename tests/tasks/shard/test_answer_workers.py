"""Answer workers: shards answered in other processes, with the driver's limits and budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.registry import get_suite
from roadeval.storage.store import LocalStore
from roadeval.tasks.cache.responses import ResponseCache
from roadeval.tasks.calls.budget import OUT_OF_BUDGET, Budget
from roadeval.tasks.calls.gateway import ModelClient
from roadeval.tasks.calls.stopping import StopSignal
from roadeval.tasks.render.stage import render_items
from roadeval.tasks.requests.freshness import now
from roadeval.tasks.requests.model_spec import ModelSpec
from roadeval.tasks.shard.answer_workers import AnswerWorkers
from roadeval.tasks.shard.plan import Shard, ShardPlan, plan_shard

from support.model_server import ModelServer, Reply


def text_items(root: Path, n: int) -> list[Item]:
    suite = get_suite("trip")
    demo = [i for i in suite.load(suite.generate_demo(root)).items if not i.media]
    # Validated anew, so each copy has its own content hash (and so its own prompt).
    return [
        Item.model_validate(
            {
                **demo[k % len(demo)].model_dump(),
                "item_id": f"w-{k}",
                "question": f"{demo[k % len(demo)].question} #{k}",
                "content_hash": "",
            }
        )
        for k in range(n)
    ]


def plans_for(
    client: ModelClient, items: list[Item], store: LocalStore, chunk: int
) -> list[ShardPlan]:
    suite = get_suite("trip")
    plans = []
    for index, start in enumerate(range(0, len(items), chunk)):
        shard = Shard(client.run_id or "r", index, suite, client, items[start : start + chunk])
        renders = render_items(suite, shard.items).renders
        plans.append(plan_shard(shard, renders, ResponseCache(store)))
    return plans


def workers_for(client: ModelClient, budget: Budget) -> AnswerWorkers:
    return AnswerWorkers(
        2,
        {client.spec.label: client.gate},
        {client.spec.label: client.stats},
        client.stop,
        client.run_id or "r",
        now(),
        budget.capped,
    )


def priced(server: ModelServer, name: str, budget: Budget) -> ModelClient:
    spec = ModelSpec(
        model=f"openai/{name}",
        api_base=server.api_base,
        params={"max_tokens": 10},
        input_cost_per_token=0.001,
        output_cost_per_token=0.002,
        max_concurrency=4,
    )
    return ModelClient(spec, stop=StopSignal(grace=0.5), run_id="workers", budget=budget)


def test_shards_answered_in_workers_land_and_count_in_the_driver(
    server: ModelServer, tmp_path: Path
) -> None:
    server.rules["spread"] = lambda body, hit: Reply("A", prompt_tokens=50, completion_tokens=1)
    budget = Budget(100.0)
    client = priced(server, "spread", budget)
    store = LocalStore(tmp_path / "store")
    plans = plans_for(client, text_items(tmp_path / "demo", 24), store, 6)
    workers = workers_for(client, budget)
    try:
        results = [f.result(timeout=120) for f in [workers.submit(p, store, None) for p in plans]]
    finally:
        workers.close()
    assert sum(r.counts["scored"] for r in results) == 24
    assert len(server.hits_for("spread")) == 24
    assert client.stats.snapshot().done == 24  # the driver's progress saw every call
    spent = sum(r.cost_usd for r in results)
    assert spent == pytest.approx(24 * (50 * 0.001 + 1 * 0.002))
    assert budget.spent_usd == pytest.approx(spent) and budget.held_usd == 0
    # The workers' counts arrive tallied per turn of their loops, and add up all the same.
    assert client.stats.snapshot().spent_usd == pytest.approx(spent)


def test_the_budget_stops_every_worker(server: ModelServer, tmp_path: Path) -> None:
    server.rules["capped"] = lambda body, hit: Reply("A", prompt_tokens=50, completion_tokens=1)
    store = LocalStore(tmp_path / "store")
    budget = Budget(0.5)
    client = priced(server, "capped", budget)
    plans = plans_for(client, text_items(tmp_path / "demo", 40), store, 10)
    workers = workers_for(client, budget)
    try:
        results = [f.result(timeout=120) for f in [workers.submit(p, store, None) for p in plans]]
    finally:
        workers.close()
    spent = sum(r.cost_usd for r in results)
    assert spent <= 0.5 and budget.spent_usd == pytest.approx(spent)
    answered = sum(r.counts["scored"] for r in results)
    assert 0 < answered < 40 and answered == len(server.hits_for("capped"))
    assert sum(r.counts["not_run"] for r in results) == 40 - answered
    assert client.stop.reason is not None and client.stop.reason.status == OUT_OF_BUDGET
