"""A run set up after its suites are loaded: its stop, redaction, one budget and its clients, its
suites drawn (the render stage) with their blind twins, its item changes against the baseline,
its shards, the engine that scores its heavy items (a local Ray only where it pays:
`tasks.shard.scoring_choice`) and the Ray cluster that answers them, if any; handed on as one
frozen `Run` (`flows.record.parts`).

The call path (LiteLLM) is imported inside `set_up`, not here: the command imports it in the
background while the run checks its store and loads its suites (`flows.process.warmup`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from roadeval.flows.record.log import RunLog
from roadeval.flows.record.parts import Run, RunContext, RunEngines, RunInputs
from roadeval.flows.rerun.baseline import BaselineRun
from roadeval.flows.rerun.comparison import compare_with_baseline
from roadeval.flows.stages.load import Applies, LoadedSuite
from roadeval.flows.stages.orchestration import Logger
from roadeval.flows.stages.plan import plan_shards
from roadeval.flows.stages.render import RENDER_SUITE, blind_suites, drawn

if TYPE_CHECKING:
    from roadeval.tasks.calls.budget import Budget
    from roadeval.tasks.calls.stopping import StopSignal
    from roadeval.tasks.shard.answer_cluster import ClusterAnswering


@dataclass(frozen=True)
class Started:
    """What the run's start hands on: which run it is (its context), its baseline, its suites
    and the pairs of the panel that apply, and the logger of its own lines."""

    context: RunContext
    baseline: BaselineRun | None
    loaded: list[LoadedSuite]
    pairs: list[Applies]
    not_covered: list[dict[str, Any]]
    logger: Logger | None


def set_up(start: Started) -> Run:
    """Make the run's clients (one budget for all of them, the judge's included), draw its
    suites, compare them with the baseline run and shard them."""
    from roadeval.tasks.calls.admission import Gate
    from roadeval.tasks.calls.budget import Budget
    from roadeval.tasks.calls.clients import ClientBuilder
    from roadeval.tasks.calls.secrets import Redactor
    from roadeval.tasks.calls.stopping import InFlightAtStop, StopSignal
    from roadeval.tasks.shard.remote_scoring import RemoteScoring, ScoringEngine
    from roadeval.tasks.shard.scoring_choice import HeavyWork, choose_scoring

    context = start.context
    panel, store, run_id = context.panel, context.store, context.run_id
    stop = StopSignal()
    redact = Redactor.from_environment(s.api_key_env for s in panel.all_models if s.api_key_env)
    # One budget for every caller of the run: answers, re-asks, retries and the judge.
    budget = Budget(panel.budget_usd)
    fresh_from = context.fresh_from
    builder = ClientBuilder(run_id, stop, redact, budget=budget, fresh_from=fresh_from)
    clients = {spec.label: builder.client(spec) for spec in panel.models}
    judge = builder.client(panel.judge) if panel.judge is not None else None
    # The run's gates admit every request of it, in any process: this one holds them all (its
    # builder has no authority to defer to), and other processes are admitted through them.
    gates = [c.gate for c in [*clients.values(), judge] if c is not None]
    held = [gate for gate in gates if isinstance(gate, Gate)]
    in_flight = InFlightAtStop(stop, lambda: sum(gate.in_flight for gate in held))
    # The shards are made after the renders, without the items that cannot be drawn.
    drawing = {
        s.suite.name: context.orchestrator.submit(RENDER_SUITE, s, store, panel.render)
        for s in start.loaded
    }
    renders = drawn(start.loaded, drawing)
    blind = blind_suites(panel.ablations, renders)
    changes, reader = compare_with_baseline(
        run_id, store, panel, start.loaded, renders, start.baseline, context.rescore, fresh_from
    )
    shards = plan_shards(
        run_id,
        panel,
        start.pairs,
        clients,
        rescore=context.rescore,
        copied=reader.candidates(changes) if reader is not None else None,
        shown=blind,
        counted=context.dry_run,
    )
    # The images each shard shows, chosen now: the suite's renders, a blind shard's blacked out.
    shown = {s.name: (blind if s.variant else renders)[s.suite.name] for s in shards}
    log = RunLog(start.logger)
    scoring = choose_scoring(panel.scoring, HeavyWork.of(shards))
    remote = (
        RemoteScoring(panel.scoring, store, run_id, stop, judge)
        if scoring.engine is ScoringEngine.RAY and not context.dry_run
        else None
    )
    answering = answering_cluster(context, stop, budget)
    inputs = RunInputs(
        start.loaded, shards, shown, start.not_covered, start.baseline, reader, changes
    )
    engines = RunEngines(stop, redact, budget, judge, remote, in_flight, scoring, answering)
    return Run(context, inputs, engines, log)


def answering_cluster(
    context: RunContext, stop: StopSignal, budget: Budget
) -> ClusterAnswering | None:
    """The Ray cluster the panel answers on (`answering: {engine: ray}`), joined and checked
    once the run's secrets are kept out of the log (`execute.execute_run`); None for this
    machine, a dry run or a rescore (no model asked)."""
    from roadeval.tasks.shard.answer_cluster import ClusterAnswering
    from roadeval.tasks.shard.answering_config import AnsweringEngine

    answering = context.panel.answering
    if answering.engine is not AnsweringEngine.RAY or context.dry_run or context.rescore:
        return None
    return ClusterAnswering(
        answering, context.store, context.run_id, stop, context.fresh_from, budget.capped
    )
