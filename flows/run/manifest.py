"""Building the run manifest (`tasks.results.manifest.RunManifest`) from a run's parts."""

from __future__ import annotations

import subprocess
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from roadeval.benchmarks.generation import departures, effective_params
from roadeval.flows.rerun.changes import count_changes
from roadeval.flows.run.parts import RunContext, RunInputs
from roadeval.flows.stages.load import LoadedSuite
from roadeval.flows.stages.orchestration import OrchestratorKind, configured_api_url
from roadeval.tasks.requests.model_spec import redact_model
from roadeval.tasks.results.engines import (
    AnsweringRecord,
    EngineRecord,
    EnginesRecord,
    NodeRecord,
    bare_address,
)
from roadeval.tasks.results.left_out import skipped_groups
from roadeval.tasks.results.manifest import (
    GenerationRecord,
    HorizonRecord,
    PairCounts,
    RunManifest,
    SuiteRecord,
    Totals,
    UnscoredMetric,
)
from roadeval.tasks.results.provenance import all_served, freshness_records, served_records
from roadeval.tasks.shard.answer_cluster import ClusterAnswering
from roadeval.tasks.shard.counts import COUNTS, new_counts
from roadeval.tasks.shard.plan import Shard
from roadeval.tasks.shard.scoring_choice import ScoringChoice
from roadeval.tasks.shard.stages import ShardResult
from roadeval.version import __version__


def code_version() -> str:
    """The package version, plus the git commit when running from a checkout."""
    version = __version__
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return f"{version}+{commit}" if commit else version


def count_table(results: Sequence[ShardResult]) -> list[PairCounts]:
    """Counts, cost and errors per suite x model x variant, in plan order."""
    table: dict[tuple[str, str, str], PairCounts] = {}
    for r in results:
        key = (r.suite, r.model, r.variant)
        entry = table.get(key)
        if entry is None:
            entry = table[key] = PairCounts(suite=r.suite, model=r.model, variant=r.variant)
        for name in COUNTS:
            setattr(entry, name, getattr(entry, name) + r.counts[name])
        entry.cost_usd += r.cost_usd
        entry.cost_known = entry.cost_known and r.cost_known
        for kind, n in r.errors.items():
            entry.error_kinds[kind] = entry.error_kinds.get(kind, 0) + n
        entry.first_error = entry.first_error or r.first_error
        entry.corrupt_cache_entries.extend(str(c) for c in r.corrupt_cache)
        for metric, n in r.unscored.items():
            unscored = entry.unscored_metrics.setdefault(
                metric, UnscoredMetric(first_reason=r.first_unscored[metric])
            )
            unscored.items += n
    return list(table.values())


def totals(counts: Sequence[PairCounts]) -> Totals:
    summed: Counter[str] = new_counts()
    for entry in counts:
        for name in COUNTS:
            summed[name] += getattr(entry, name)
    return Totals(**summed, cost_usd=sum(c.cost_usd for c in counts))


def generation_in_force(shards: Sequence[Shard]) -> list[GenerationRecord]:
    """Per suite x model: what the protocol states, what the panel set, what was sent, and
    where the two part (see `benchmarks.generation` for the rule)."""
    seen: dict[tuple[str, str], GenerationRecord] = {}
    for shard in shards:
        suite, spec = shard.suite, shard.client.spec
        if (suite.name, spec.label) in seen:
            continue
        protocol = suite.protocol_generation()
        seen[(suite.name, spec.label)] = GenerationRecord(
            suite=suite.name,
            model=spec.label,
            protocol=protocol.params(),
            panel=spec.params,
            sent=effective_params(protocol, spec.params),
            departures=departures(protocol, spec.params),
        )
    return list(seen.values())


def suite_record(loaded: LoadedSuite, judge: dict[str, Any] | None = None) -> SuiteRecord:
    """A loaded suite as the manifest lists it (`judge`: the panel's, as dumped)."""
    from roadeval.flows.rerun.baseline import scoring_key

    return SuiteRecord(
        name=loaded.suite.name,
        source=str(loaded.source),
        demo=loaded.entry.demo,
        version=loaded.items[0].suite_version,
        hash=loaded.hash,
        items=len(loaded.items),
        tasks=sorted({i.task for i in loaded.items}),
        prompt_version=loaded.suite.prompt_version,
        max_attempts=loaded.suite.max_attempts,
        options=loaded.suite.options(),
        skipped_items=[str(p) for p in loaded.skipped],
        skipped=skipped_groups(loaded.skipped),
        drawings=loaded.drawings,
        unknown_fields=loaded.unknown_fields,
        unknown_fields_message=loaded.unknown_fields_message,
        scorer_version=loaded.suite.scorer_version,
        scoring_key=scoring_key(loaded.suite, judge),
    )


def build_manifest(
    run: RunContext,
    inputs: RunInputs,
    results: Sequence[ShardResult],
    ended: datetime | None,
    answer_processes: int = 0,
    scoring: ScoringChoice | None = None,
    scored_on_cluster: int = 0,
    answering: AnsweringRecord | None = None,
) -> RunManifest:
    """The run's manifest now: `results` are the shards answered so far (none at its start),
    `scoring` the engine chosen for heavy scoring (None: the panel's, as given), and
    `scored_on_cluster` the items sent to the scoring cluster so far."""
    panel = run.panel
    counts = count_table(results)
    judge = redact_model(panel.judge.model_dump(mode="json")) if panel.judge else None
    baseline = inputs.baseline
    served = all_served(r.served for r in results)
    return RunManifest(
        run_id=run.run_id,
        panel=panel.name,
        started_at=run.started,
        ended_at=ended,
        code_version=code_version(),
        store=run.store.uri,
        suites=[suite_record(s, judge) for s in inputs.loaded],
        models=[redact_model(spec.model_dump(mode="json")) for spec in panel.models],
        judge=judge,
        generation=generation_in_force(inputs.shards),
        not_covered=inputs.not_covered,
        planned_items=sum(len(shard.items) * shard.samples for shard in inputs.shards),
        counts=counts,
        totals=totals(counts),
        orchestrator=str(run.orchestrator.kind),
        flow_run_id=run.orchestrator.flow_run.id if run.orchestrator.flow_run else None,
        deployment=run.orchestrator.flow_run.deployment if run.orchestrator.flow_run else None,
        answer_processes=answer_processes,
        dry_run=run.dry_run,
        budget_usd=panel.budget_usd,
        baseline=baseline.record(
            rescored_suites(inputs),
            {suite: count_changes(rows) for suite, rows in inputs.changes.items()},
        )
        if baseline is not None
        else None,
        rescore=run.rescore,
        ablations=list(panel.ablations),
        engines=engines_used(run, inputs.loaded, scoring, scored_on_cluster, answering),
        freshness=freshness_records(run.fresh_from, panel.models, panel.judge, counts, served),
        horizon=run.horizon or HorizonRecord(run_id=run.run_id, started_at=run.started),
        served=served_records(served),
    )


def engines_used(
    run: RunContext,
    loaded: Sequence[LoadedSuite],
    chosen: ScoringChoice | None,
    scored: int,
    answering: AnsweringRecord | None = None,
) -> EnginesRecord:
    """Where the run draws and scores (the panel's engines, the command line's addresses, the
    engine chosen for heavy scoring and why), how much went to each cluster, and the Prefect
    API it reports to."""
    render, scoring = run.panel.render, run.panel.scoring
    reason = chosen.reason if chosen is not None else None
    engine = chosen.engine if chosen is not None else scoring.engine
    prefect = run.orchestrator.kind is OrchestratorKind.PREFECT
    return EnginesRecord(
        render=EngineRecord(
            engine=str(render.engine),
            address=bare_address(render.address),
            on_cluster=sum(s.drawings.get("on_cluster", 0) for s in loaded),
        ),
        scoring=EngineRecord(
            engine=str(engine),
            address=bare_address(scoring.address),
            on_cluster=scored,
            reason=reason,
        ),
        answering=answering
        or AnsweringRecord(
            engine=str(run.panel.answering.engine),
            address=bare_address(run.panel.answering.address),
        ),
        prefect_api_url=bare_address(configured_api_url()) if prefect else None,
    )


def answering_record(answering: ClusterAnswering) -> AnsweringRecord:
    """Where the run's shards were answered on a Ray cluster, and what each node answered."""
    return AnsweringRecord(
        engine=str(answering.config.engine),
        address=bare_address(answering.config.address),
        nodes=[NodeRecord(node=n.name, shards=n.shards, calls=n.calls) for n in answering.nodes],
    )


def rescored_suites(inputs: RunInputs) -> list[str]:
    """Suites of the run (and of its baseline) whose stored answers were all scored again:
    their scoring differs from the baseline's, or the run is a rescore."""
    if inputs.baseline is None:
        return []
    copied = inputs.reader.copy_suites if inputs.reader is not None else frozenset()
    return [
        s.suite.name
        for s in inputs.loaded
        if inputs.baseline.suite(s.suite.name) is not None and s.suite.name not in copied
    ]
