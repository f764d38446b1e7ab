"""What served a shard's answers, as the provider said in each reply (the `model` it names, a
vLLM or SGLang server's served model, and its `system_fingerprint`): counted per model, role and
identity, the answers this run bought apart from those it reused, so that a change between two
runs can be told apart from noise and put down to what answered; and per model and role how old
the oldest answer it reused was (when it was bought), so a reader sees what a run rests on."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import pyarrow as pa

from roadeval.tasks.requests.request import ModelCall
from roadeval.tasks.rerun.answers import StoredOutcome
from roadeval.tasks.shard.answer import ItemOutcome
from roadeval.tasks.shard.rows import served_by

# (model, role, served model, system fingerprint, reused) -> answers.
ServedCounts = Counter[tuple[str, str, str | None, str | None, bool]]


@dataclass
class Served:
    """A shard's answers by what served them (`counts`), and per (model, role) when the oldest
    answer it reused was bought (`oldest_reused`; absent where none reused had a time)."""

    counts: ServedCounts = field(default_factory=Counter)
    oldest_reused: dict[tuple[str, str], datetime] = field(default_factory=dict)

    def add(
        self,
        who: str,
        role: str,
        identity: tuple[str | None, str | None],
        reused: bool,
        bought: datetime | None,
        n: int = 1,
    ) -> None:
        """Count `n` answers of `who` in `role` served by `identity`, bought at `bought`."""
        self.counts[(who, role, *identity, reused)] += n
        if reused and bought is not None:
            oldest = self.oldest_reused.get((who, role))
            if oldest is None or bought < oldest:
                self.oldest_reused[(who, role)] = bought

    def update(self, other: Served) -> None:
        """Add another shard's."""
        self.counts.update(other.counts)
        for key, bought in other.oldest_reused.items():
            oldest = self.oldest_reused.get(key)
            if oldest is None or bought < oldest:
                self.oldest_reused[key] = bought


def served_counts(outcomes: Sequence[ItemOutcome], model: str, judge: str | None) -> Served:
    """Per model (`model` answering, `judge` judging), role and what served them, the answers
    of `outcomes` (an answer per attempt, a verdict per judge call; errors served nothing):
    those asked now, those reused, and those of outcomes copied from the baseline run."""
    served = Served()
    for who, call in _calls(outcomes, model, judge):
        if call.ok:
            identity = (
                served_by(call.output, "served_model"),
                served_by(call.output, "system_fingerprint"),
            )
            served.add(who, call.role, identity, call.cached, call.answered_at)
    copied = [outcome.copied for outcome in outcomes if outcome.copied is not None]
    _copied(served, copied, model, judge)
    return served


def _calls(
    outcomes: Sequence[ItemOutcome], model: str, judge: str | None
) -> Iterator[tuple[str, ModelCall]]:
    """Each answer (its final try per attempt) and, with a judge, each verdict, with whose."""
    for outcome in outcomes:
        for attempt in outcome.attempts:
            yield model, attempt.final
        if judge is not None:
            for call in outcome.judge_calls:
                yield judge, call


def _copied(served: Served, copied: Sequence[StoredOutcome], model: str, judge: str | None) -> None:
    """The copied outcomes' answers and verdicts (all reused), read by column from the
    baseline's rows (one take for the shard, as they are landed again)."""
    if not copied:
        return
    rows = [at for outcome in copied for at in outcome.landed.at["responses"]]
    table = copied[0].landed.tables["responses"]
    keys = ["role", "served_model", "system_fingerprint"]
    taken = table.take(pa.array(rows, pa.int64())).select([*keys, "answered_at"])
    grouped = taken.group_by(keys, use_threads=False).aggregate(
        [([], "count_all"), ("answered_at", "min")]
    )
    for row in grouped.to_pylist():
        role = row["role"]
        who = judge if role == "judge" and judge is not None else model
        identity = (row["served_model"], row["system_fingerprint"])
        served.add(who, role, identity, True, row["answered_at_min"], row["count_all"])
