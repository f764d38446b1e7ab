"""A run's stages after it is recorded: its items and changes landed, then every shard planned
and answered (each plan landed before its shard's first call), scored from the store for a
rescore, or planned and estimated only for a dry run; handed on as one frozen `Answered`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from roadeval.flows.record.parts import Run
from roadeval.flows.record.progress import RunProgress
from roadeval.flows.run.collect import collect, failed
from roadeval.flows.run.rescore import unanswered
from roadeval.flows.stages.answer import (
    ANSWER_SHARD,
    AnswerSpread,
    planning_waves,
    unanswered_first_attempts,
)
from roadeval.flows.stages.orchestration import StageFuture
from roadeval.flows.stages.plan import PLAN_SHARD, land_plan

if TYPE_CHECKING:
    from roadeval.tasks.calls.gateway import ModelClient
    from roadeval.tasks.shard.plan import ShardPlan
    from roadeval.tasks.shard.stages import ShardResult


@dataclass(frozen=True)
class Answered:
    """What the stages leave: the shards that landed (in plan order), the first failure, the
    plans made, the answer worker processes used, and a dry run's estimate rows."""

    results: list[ShardResult] = field(default_factory=list)
    failure: BaseException | None = None
    plans: list[ShardPlan] = field(default_factory=list)
    spread: int = 0
    estimates: list[Any] = field(default_factory=list)


def clients(run: Run) -> list[ModelClient]:
    """The run's model clients, the judge's when a suite of it is judged, each once."""
    shards, judge = run.inputs.shards, run.engines.judge
    seen: dict[int, ModelClient] = {}
    for shard in shards:
        seen.setdefault(id(shard.client), shard.client)
    if judge is not None and any(s.suite.uses_judge for s in shards):
        seen.setdefault(id(judge), judge)
    return list(seen.values())


def plan_rescore(run: Run) -> Answered:
    """A rescore's plans, made before the run is recorded: a store that lacks an answer they
    need refuses it here (`RescoreRefused`, exit 2), and no run is left behind. A planning
    failure is kept for the run to record (`answer_run`)."""
    with RunProgress(clients(run), run.engines.budget) as progress:
        futures = [
            run.context.orchestrator.submit(
                PLAN_SHARD,
                shard,
                run.inputs.shown[shard.name],
                run.context.store,
                run.inputs.reader,
            )
            for shard in run.inputs.shards
        ]
        progress.phase("planning", len(futures))
        plans, failure = collect(
            run.context.orchestrator, futures, run.engines.stop, progress=progress
        )
    if failure is not None:
        return Answered(failure=failure)
    if not run.engines.stop.requested:
        refused = unanswered(plans)
        if refused is not None:
            raise refused
    return Answered(plans=plans)


def answer_run(run: Run, rescored: Answered | None = None) -> Answered:
    """The shards, once the items and what changed since the baseline are landed, under the
    live display: planned and answered, scored again (a rescore, planned in `plan_rescore`),
    or planned and estimated (a dry run)."""
    if run.context.dry_run:
        return _plan_only(run)
    if rescored is not None:
        return _rescore(run, rescored)
    return _plan_and_answer(run)


def _land_inputs(run: Run) -> RunProgress:
    """Land the items and the changes, before the first call; the live display to show the
    stages on, over the run's clients."""
    from roadeval.tasks.rerun.changes import land_changes
    from roadeval.tasks.results.items import land_items

    watched = clients(run)
    context = run.context
    for suite in run.inputs.loaded:
        land_items(context.store, suite.suite.name, suite.items, suite.hash)
    # What changed since the baseline, landed before the first call.
    land_changes(context.run_id, context.store, run.inputs.changes)
    answering = run.engines.answering
    nodes = answering.calls_per_node if answering is not None else None
    return RunProgress(watched, run.engines.budget, nodes=nodes)


def _plan_only(run: Run) -> Answered:
    """A dry run's stage: every shard planned and estimated, the plan and the estimate landed
    (`run.dry_run`: no plan is kept)."""
    from roadeval.flows.run.dry_run import plan_and_estimate

    with _land_inputs(run) as progress:
        estimates, failure = plan_and_estimate(run.context, run.inputs, run.engines, progress)
    return Answered(failure=failure, estimates=estimates)


def _rescore(run: Run, rescored: Answered) -> Answered:
    """Score each shard from the stored answers, planned and checked before the run was
    recorded (`plan_rescore`)."""
    with _land_inputs(run) as progress:
        if rescored.failure is not None:
            return rescored
        return _score(run, rescored, progress)


def _score(run: Run, rescored: Answered, progress: RunProgress) -> Answered:
    context, engines = run.context, run.engines
    land_plan(context.store, f"{context.run_id}-plan", rescored.plans, engines.judge)
    progress.phase("scoring", len(rescored.plans))
    futures = [
        context.orchestrator.submit(
            ANSWER_SHARD, plan, context.store, engines.judge, engines.remote
        )
        for plan in rescored.plans
    ]
    results, failure = collect(
        context.orchestrator, futures, engines.stop, run.log.shard_landed, progress
    )
    return Answered(results, failure, rescored.plans)


def _plan_and_answer(run: Run) -> Answered:
    """The first request waits for one shard's plan, not the whole run's: shards are planned in
    turn from each suite x model (a rerun's copies once the rest are planned, `planning_waves`),
    and each is submitted for answering once its plan has landed."""
    from roadeval.tasks.cache.journal import close_gateway_journals

    with _land_inputs(run) as progress:
        context, inputs, engines = run.context, run.inputs, run.engines
        orchestrator, shards, judge = context.orchestrator, inputs.shards, engines.judge
        progress.phase("answering", len(shards))
        plans: dict[int, ShardPlan] = {}
        answers: dict[int, StageFuture[ShardResult]] = {}
        failure: BaseException | None = None
        made: list[ShardPlan] = []
        # Items to be asked of models: not the baselines', not a rerun's copies.
        asked = sum(len(s.items) for s in shards if not s.client.spec.is_baseline and not s.copies)
        spread = AnswerSpread(
            context.panel.processes,
            lambda: clients(run),
            engines.stop,
            context.run_id,
            context.fresh_from,
            engines.budget.capped,
            asked,
        )
        try:
            for wave in planning_waves(shards):
                planning = {
                    n: orchestrator.submit(
                        PLAN_SHARD,
                        shards[n],
                        inputs.shown[shards[n].name],
                        context.store,
                        inputs.reader,
                    )
                    for n in wave
                }
                position = {id(future): n for n, future in planning.items()}
                for future in orchestrator.as_completed(list(planning.values())):
                    n = position[id(future)]
                    try:
                        plan = future.result()
                        if plan.asks:
                            # Before the first call. A plan that asks nothing (a rerun's
                            # copies) lands with the shard's rows instead (`run_shard`).
                            land_plan(context.store, f"{shards[n].name}-plan", [plan], judge)
                    except Exception as exc:
                        if failure is None:
                            failure = exc
                            engines.stop.request(failed(exc))
                        continue
                    plans[n] = plan
                    # Each model's live counters: the requests its plan will send (the judge: one
                    # per judged item at worst).
                    plan.shard.client.stats.plan(unanswered_first_attempts(plan))
                    if judge is not None and plan.shard.suite.uses_judge:
                        judge.stats.plan(len(plan.items))
                    answers[n] = orchestrator.submit(
                        ANSWER_SHARD,
                        plan,
                        context.store,
                        judge,
                        engines.remote,
                        engines.answering or spread.workers_for(plan),
                    )
            made = [plans[n] for n in sorted(plans)]
            results, answer_failure = collect(
                orchestrator,
                [answers[n] for n in sorted(answers)],
                engines.stop,
                run.log.shard_landed,
                progress,
            )
            return Answered(results, failure or answer_failure, made, spread.processes)
        except Exception as exc:
            # The run records it as failed, with the plans made once every shard was planned.
            return Answered([], exc, made, spread.processes)
        finally:
            spread.close()
            close_gateway_journals()  # this process's answers (the workers close theirs)
