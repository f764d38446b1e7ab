"""The run's stages as Prefect tasks: thin wrappers around plain functions, one per coarse unit
(a suite to load or render, a shard to plan or answer), never one per item."""

from __future__ import annotations

from datetime import UTC, datetime

from prefect import task
from prefect.cache_policies import NO_CACHE

from roadeval.flows.panel_file import Panel
from roadeval.flows.suites import LoadedSuite, load_entry
from roadeval.storage.landing import Part, land
from roadeval.storage.store import Store
from roadeval.tasks.gateway import ModelClient
from roadeval.tasks.plan import Shard, ShardPlan, plan_rows, plan_shard
from roadeval.tasks.remote_scoring import RemoteScoring
from roadeval.tasks.render import RenderReport, Renders, render_items
from roadeval.tasks.render_cluster import RenderConfig
from roadeval.tasks.response_cache import ResponseCache
from roadeval.tasks.shard import ShardResult, run_shard


@task(name="load-suite", cache_policy=NO_CACHE)
def load_suite_task(panel: Panel, index: int) -> LoadedSuite:
    return load_entry(panel, panel.suites[index])


@task(name="render-suite", cache_policy=NO_CACHE, task_run_name="render/{loaded.suite.name}")
def render_task(loaded: LoadedSuite, store: Store, config: RenderConfig) -> RenderReport:
    return render_items(loaded.suite, loaded.items, store, config)


@task(
    name="plan-shard",
    cache_policy=NO_CACHE,
    task_run_name="plan/{shard.suite.name}/{shard.client.spec.label}/{shard.index}",
)
def plan_task(shard: Shard, renders: Renders, store: Store) -> ShardPlan:
    return plan_shard(shard, renders, ResponseCache(store))


@task(
    name="answer-shard",
    cache_policy=NO_CACHE,
    task_run_name="{plan.shard.suite.name}/{plan.shard.client.spec.label}/{plan.shard.index}",
)
def answer_task(
    plan: ShardPlan, store: Store, judge: ModelClient | None, remote: RemoteScoring | None
) -> ShardResult:
    return run_shard(plan, store, judge, remote)


def land_plan(store: Store, run_id: str, plans: list[ShardPlan], judge: ModelClient | None) -> None:
    """The run's plan as one landing, before its first call, partitioned by suite x model."""
    now = datetime.now(UTC)
    parts: dict[tuple[str, str], list[object]] = {}
    for plan in plans:
        where = (plan.shard.suite.name, plan.shard.client.spec.label)
        parts.setdefault(where, []).extend(plan_rows(plan, judge, now))
    land(
        store,
        f"{run_id}-plan",
        [Part("plan", rows, suite=suite, model=model) for (suite, model), rows in parts.items()],
    )
