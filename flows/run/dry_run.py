"""A dry run's plan and estimate, shard by shard: each shard is planned, added to the estimate and
its rows to the plan's next landing, then dropped. So a dry run holds a few thousand items' plans
at a time, not its whole panel's: its memory does not grow with the requests it counts. (Its
shards do not multiply with the samples either: one counts every sample of its items, and the
plan has a row per run of samples answered alike, `Shard.samples`.)"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import pyarrow as pa

from roadeval.flows.record.parts import RunContext, RunEngines, RunInputs
from roadeval.flows.record.progress import RunProgress
from roadeval.flows.run.collect import collect
from roadeval.flows.stages.plan import PLAN_SHARD, land_plan_tables
from roadeval.storage.records import EstimateRow
from roadeval.tasks.calls.gateway import ModelClient
from roadeval.tasks.results.estimate import Estimate, land_estimates
from roadeval.tasks.shard.plan import Shard, ShardPlan
from roadeval.tasks.shard.plan_table import plan_table

# Items planned at once (at least one shard's): enough to keep the stage threads busy, few
# enough that their plans stay small (an item's plan is about a kilobyte, whatever its samples).
ITEMS_AT_ONCE = 4_000
# Plan rows landed at once: a landing of a part per suite x model for every this many rows
# (about 30 MB of them in Arrow), so a large dry run lands a few parts, not one per shard.
ROWS_PER_LANDING = 100_000


class PlanBatches:
    """The dry run's plan rows, landed a batch at a time (`<run_id>-plan-<n>`)."""

    def __init__(self, context: RunContext, judge: ModelClient | None) -> None:
        self.context = context
        self.judge = judge
        self.now = datetime.now(UTC)
        self.tables: dict[tuple[str, str], list[pa.Table]] = {}
        self.rows = 0
        self.landed = 0

    def add(self, plan: ShardPlan) -> None:
        table = plan_table(plan, self.judge, self.now)
        where = (plan.shard.suite.name, plan.shard.client.spec.label)
        self.tables.setdefault(where, []).append(table)
        self.rows += table.num_rows
        if self.rows >= ROWS_PER_LANDING:
            self.flush()

    def flush(self) -> None:
        if not self.tables:
            return
        name = f"{self.context.run_id}-plan-{self.landed:05d}"
        land_plan_tables(self.context.store, name, self.tables)
        self.tables, self.rows = {}, 0
        self.landed += 1


def waves(shards: Sequence[Shard], items: int = ITEMS_AT_ONCE) -> list[list[Shard]]:
    """The shards in turn, in groups of about `items` items (a shard larger alone)."""
    groups: list[list[Shard]] = []
    held = items
    for shard in shards:
        if held >= items:
            groups.append([])
            held = 0
        groups[-1].append(shard)
        held += len(shard.items)
    return groups


def plan_and_estimate(
    context: RunContext, inputs: RunInputs, engines: RunEngines, progress: RunProgress
) -> tuple[list[EstimateRow], BaseException | None]:
    """Plan every shard a wave at a time, adding each plan to the estimate and the plan's
    landings as it comes; then land the rest of the plan and the estimate. A failed plan (or a
    stop) ends it there: nothing estimated, the error returned."""
    judge = engines.judge
    estimate = Estimate(judge.spec if judge is not None else None)
    batches = PlanBatches(context, judge)

    def planned(plan: ShardPlan) -> None:
        estimate.add(plan)
        batches.add(plan)

    progress.phase("planning", len(inputs.shards))
    for wave in waves(inputs.shards):
        futures = [
            context.orchestrator.submit(
                PLAN_SHARD, shard, inputs.shown[shard.name], context.store, inputs.reader
            )
            for shard in wave
        ]
        _, failure = collect(context.orchestrator, futures, engines.stop, planned, progress)
        if failure is not None:
            return [], failure
        if engines.stop.requested:
            return [], None
    batches.flush()
    rows = estimate.rows(context.run_id, datetime.now(UTC))
    land_estimates(context.store, context.run_id, rows)
    return rows, None
