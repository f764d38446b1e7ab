"""What a run's answers rest on, as its manifest records it per model: how old a stored answer
it could reuse (`reuse_for`, and how many were too old and asked again), and what the provider
said served its answers (the served model and system fingerprint, with counts), for a later
run's history to compare with."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from roadeval.tasks.requests.freshness import FOREVER, fresh_since, run_start
from roadeval.tasks.requests.model_spec import ModelSpec
from roadeval.tasks.results.manifest import FreshnessRecord, PairCounts, ServedRecord
from roadeval.tasks.shard.served import ServedCounts


def freshness_records(
    run_id: str,
    models: Sequence[ModelSpec],
    judge: ModelSpec | None,
    counts: Sequence[PairCounts],
) -> list[FreshnessRecord]:
    """The run's models (then its judge), each with its `reuse_for` in force (as written on
    its spec when the run began) and what it passed over as stale, summed over `counts` (of
    pairs named by model)."""
    started = run_start(run_id)
    stale: Counter[str] = Counter()
    judge_stale = 0
    for entry in counts:
        stale[entry.model] += entry.stale
        judge_stale += entry.judge_stale

    def record(spec: ModelSpec, role: str, passed_over: int) -> FreshnessRecord:
        since = fresh_since(spec.reuse_for, started) if started is not None else None
        reuse_for = spec.reuse_for or FOREVER
        return FreshnessRecord(
            model=spec.label, role=role, reuse_for=reuse_for, fresh_since=since, stale=passed_over
        )

    found = [record(spec, "answer", stale[spec.label]) for spec in models]
    if judge is not None:
        found.append(record(judge, "judge", judge_stale))
    return found


def served_records(served: Iterable[ServedCounts]) -> list[ServedRecord]:
    """The shards' counts of what served their answers, summed per model, role, served model
    and fingerprint, in that order (None first)."""
    total: ServedCounts = Counter()
    for counts in served:
        total.update(counts)
    by_identity: dict[tuple[str, str, str | None, str | None], ServedRecord] = {}
    for (model, role, served_model, fingerprint, reused), n in total.items():
        key = (model, role, served_model, fingerprint)
        entry = by_identity.setdefault(
            key,
            ServedRecord(
                model=model, role=role, served_model=served_model, system_fingerprint=fingerprint
            ),
        )
        if reused:
            entry.reused += n
        else:
            entry.answers += n

    def order(key: tuple[str, str, str | None, str | None]) -> tuple[str, str, str, str]:
        return (key[0], key[1], key[2] or "", key[3] or "")

    return [by_identity[key] for key in sorted(by_identity, key=order)]
