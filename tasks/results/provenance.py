"""What a run's answers rest on, as its manifest records it per model: how old a stored answer
it could reuse (`reuse_for`), how many it reused and how old the oldest was, how many were too
old and asked again, and what the provider said served its answers (the served model and system
fingerprint, with counts), for a person comparing runs to put a change down to what answered."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime

from roadeval.tasks.requests.freshness import FOREVER, fresh_since
from roadeval.tasks.requests.model_spec import ModelSpec
from roadeval.tasks.results.manifest import FreshnessRecord, PairCounts, ServedRecord
from roadeval.tasks.shard.served import Served


def all_served(shards: Iterable[Served]) -> Served:
    """The shards' answers by what served them, summed over the run."""
    total = Served()
    for served in shards:
        total.update(served)
    return total


def freshness_records(
    started: datetime,
    models: Sequence[ModelSpec],
    judge: ModelSpec | None,
    counts: Sequence[PairCounts],
    served: Served,
) -> list[FreshnessRecord]:
    """The run's models (then its judge), each with its `reuse_for` in force (as written on
    its spec when the run began) measured back from `started` (the run's horizon), what it
    passed over as stale (summed over `counts`, of pairs
    named by model), and the answers it reused with when the oldest was bought (`served`)."""
    stale: Counter[str] = Counter()
    judge_stale = 0
    for entry in counts:
        stale[entry.model] += entry.stale
        judge_stale += entry.judge_stale
    reused: Counter[tuple[str, str]] = Counter()
    for (model, role, _, _, was_reused), n in served.counts.items():
        reused[(model, role)] += n if was_reused else 0

    def record(spec: ModelSpec, role: str, passed_over: int) -> FreshnessRecord:
        return FreshnessRecord(
            model=spec.label,
            role=role,
            reuse_for=spec.reuse_for or FOREVER,
            fresh_since=fresh_since(spec.reuse_for, started),
            stale=passed_over,
            reused=reused[(spec.label, role)],
            oldest_reused=served.oldest_reused.get((spec.label, role)),
        )

    found = [record(spec, "answer", stale[spec.label]) for spec in models]
    if judge is not None:
        found.append(record(judge, "judge", judge_stale))
    return found


def served_records(served: Served) -> list[ServedRecord]:
    """The run's answers per model, role, served model and fingerprint, in that order (None
    first), bought and reused apart."""
    by_identity: dict[tuple[str, str, str | None, str | None], ServedRecord] = {}
    for (model, role, served_model, fingerprint, reused), n in served.counts.items():
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
