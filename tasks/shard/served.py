"""What served a shard's answers, as the provider said in each reply (the `model` it names, a
vLLM or SGLang server's served model, and its `system_fingerprint`): counted per model, role and
identity, the answers this run bought apart from those it reused, so that a change between two
runs can be told apart from noise and put down to what answered."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import pyarrow as pa

from roadeval.tasks.requests.request import ModelCall
from roadeval.tasks.rerun.answers import StoredOutcome
from roadeval.tasks.shard.answer import ItemOutcome
from roadeval.tasks.shard.rows import served_by

# (model, role, served model, system fingerprint, reused) -> answers.
ServedCounts = Counter[tuple[str, str, str | None, str | None, bool]]


def served_counts(outcomes: Sequence[ItemOutcome], model: str, judge: str | None) -> ServedCounts:
    """Per model (`model` answering, `judge` judging), role and what served them, the answers
    of `outcomes` (an answer per attempt, a verdict per judge call; errors served nothing):
    those asked now, those reused, and those of outcomes copied from the baseline run."""
    counts: ServedCounts = Counter()
    asked = [attempt.final for outcome in outcomes for attempt in outcome.attempts]
    _count(counts, model, asked)
    if judge is not None:
        _count(counts, judge, (call for outcome in outcomes for call in outcome.judge_calls))
    copied = [outcome.copied for outcome in outcomes if outcome.copied is not None]
    counts.update(_copied(copied, model, judge))
    return counts


def _count(counts: ServedCounts, who: str, calls: Iterable[ModelCall]) -> None:
    for call in calls:
        if call.ok:
            served = served_by(call.output, "served_model")
            fingerprint = served_by(call.output, "system_fingerprint")
            counts[(who, call.role, served, fingerprint, call.cached)] += 1


def _copied(copied: Sequence[StoredOutcome], model: str, judge: str | None) -> ServedCounts:
    """The copied outcomes' answers and verdicts (all reused), read by column from the
    baseline's rows (one take for the shard, as they are landed again)."""
    counts: ServedCounts = Counter()
    if not copied:
        return counts
    rows = [at for outcome in copied for at in outcome.landed.at["responses"]]
    table = copied[0].landed.tables["responses"]
    taken = table.take(pa.array(rows, pa.int64())).select(
        ["role", "served_model", "system_fingerprint"]
    )
    keys = ["role", "served_model", "system_fingerprint"]
    grouped = taken.group_by(keys, use_threads=False).aggregate([([], "count_all")])
    for row in grouped.to_pylist():
        role = row["role"]
        who = judge if role == "judge" and judge is not None else model
        counts[(who, role, row["served_model"], row["system_fingerprint"], True)] += row[
            "count_all"
        ]
    return counts
