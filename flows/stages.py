"""The run's stages: plain functions, one per coarse unit (a suite to load or render, a shard to
plan or answer), never one per item. An orchestrator runs them (`flows.orchestration`): Prefect
as tasks of the same names, or this process's threads.

Heavy modules (LiteLLM through the gateway, the shard code) are imported inside the stages that
need them, so that loading suites can go on while they import.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from roadeval.flows.orchestration import Stage
from roadeval.flows.panel_file import Panel
from roadeval.flows.suites import LoadedSuite, load_entry
from roadeval.storage.landing import Part, land
from roadeval.storage.store import Store

if TYPE_CHECKING:
    import pyarrow as pa

    from roadeval.flows.answering import StartingWorkers
    from roadeval.flows.baseline import BaselineReader
    from roadeval.tasks.calls.gateway import ModelClient
    from roadeval.tasks.render.cluster import RenderConfig
    from roadeval.tasks.render.stage import RenderReport, Renders
    from roadeval.tasks.report.build import BuiltReport
    from roadeval.tasks.shard.plan import Shard, ShardPlan
    from roadeval.tasks.shard.remote_scoring import RemoteScoring
    from roadeval.tasks.shard.stages import ShardResult


def load_suite(panel: Panel, index: int) -> LoadedSuite:
    return load_entry(panel, panel.suites[index])


def render_suite(loaded: LoadedSuite, store: Store, config: RenderConfig) -> RenderReport:
    from roadeval.tasks.render.stage import render_items

    return render_items(loaded.suite, loaded.items, store, config)


def plan_shard(
    shard: Shard, renders: Renders, store: Store, baseline: BaselineReader | None = None
) -> ShardPlan:
    """Plan one shard: its requests, their stored answers, and on a rerun what it takes from
    the baseline run (read in bulk, once per suite x model)."""
    from roadeval.tasks.cache.responses import ResponseCache
    from roadeval.tasks.shard.plan import plan_shard as plan

    taken = baseline.for_shard(shard.suite.name, shard.client.spec.label) if baseline else None
    cache = ResponseCache(store, run_id=shard.run_id, counted=shard.counted)
    return plan(shard, renders, cache, taken)


def answer_shard(
    plan: ShardPlan,
    store: Store,
    judge: ModelClient | None,
    remote: RemoteScoring | None,
    workers: StartingWorkers | None = None,
) -> ShardResult:
    """Answer one shard: in an answer worker process when the run spreads its calls and the
    shard can go (see `AnswerWorkers.can_take`; the stage waits for their start), else
    here."""
    from roadeval.tasks.shard.stages import run_shard

    if workers is not None and workers.can_take(plan, remote):
        return workers.run(plan, store, judge)
    return run_shard(plan, store, judge, remote)


def prepare_report() -> None:
    """A run about to finish: its report's figure helpers start now, in the command's own
    process (see `build_report`), to import while the run lands its metrics."""
    from roadeval.flows.quick_exit import armed

    if armed():
        from roadeval.tasks.report.drawing import start_helpers

        start_helpers()


def build_report(store: Store, run_id: str) -> BuiltReport:
    """Build the run's HTML report and keep it in the store (`reports/<run_id>.html`)."""
    from roadeval.flows.quick_exit import armed
    from roadeval.tasks.report.build import build_report as build

    # A helper process for the figures only in the command's own process (see `drawings`).
    return build(store, run_id, helper=armed())


# The names are Prefect's task names and task-run names (templates over each stage's parameters).
LOAD_SUITE = Stage("load-suite", load_suite)
RENDER_SUITE = Stage("render-suite", render_suite, "render/{loaded.suite.name}")
PLAN_SHARD = Stage(
    "plan-shard", plan_shard, "plan/{shard.suite.name}/{shard.client.spec.label}/{shard.index}"
)
ANSWER_SHARD = Stage(
    "answer-shard",
    answer_shard,
    "{plan.shard.suite.name}/{plan.shard.client.spec.label}/{plan.shard.index}",
)
BUILD_REPORT = Stage("build-report", build_report, "report/{run_id}")
STAGES = (LOAD_SUITE, RENDER_SUITE, PLAN_SHARD, ANSWER_SHARD, BUILD_REPORT)


def land_plan(store: Store, name: str, plans: list[ShardPlan], judge: ModelClient | None) -> None:
    """Plans as one landing (`name`), before their first call, partitioned by suite x model:
    each shard's own before the shard is asked (a dry run's, in batches: `flows.dry_run`)."""
    from roadeval.tasks.shard.plan_table import plan_table

    now = datetime.now(UTC)
    tables: dict[tuple[str, str], list[pa.Table]] = {}
    for plan in plans:
        where = (plan.shard.suite.name, plan.shard.client.spec.label)
        tables.setdefault(where, []).append(plan_table(plan, judge, now))
    land_plan_tables(store, name, tables)


def land_plan_tables(
    store: Store, name: str, tables: dict[tuple[str, str], list[pa.Table]]
) -> None:
    """Plan rows (tables of them by suite x model) as one landing, a part per suite x model."""
    import pyarrow as pa

    land(
        store,
        name,
        [
            Part("plan", suite=suite, model=model, copied=pa.concat_tables(parts))
            for (suite, model), parts in tables.items()
        ],
    )
