"""What a baseline run answered and scored for one suite x model, read in bulk from the Parquet
parts it landed (a few reads, never one per request), and what of it a rerun may reuse.

An answer is reused for exactly the request key it answered. An item's score rows are copied
only when the rerun would ask exactly what the baseline asked (the same request key at every
attempt of the chain, so the same item content and prompt) and score it by the same rules.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pyarrow as pa

from roadeval.benchmarks.output import ModelOutput, TokenLogprob
from roadeval.benchmarks.suite import ParsedAnswer, ParseStatus
from roadeval.storage.landing import (
    LANDINGS,
    UnreadablePart,
    part_name,
    read_part,
    records_of,
    visible_keys,
)
from roadeval.storage.records import ParseRow, ResponseRow, ScoreRow
from roadeval.storage.store import Store
from roadeval.storage.tables import SCHEMAS, part_key
from roadeval.tasks.requests.request import ModelCall

log = logging.getLogger(__name__)

# The tables a baseline's item outcomes are read from.
OUTCOME_TABLES = ("responses", "parses", "scores")


@dataclass(frozen=True)
class LandedRows:
    """Where an outcome's rows are in the baseline's tables of its suite x model (read whole
    as Arrow): what a copy lands again, by column (`tasks.shard.copied_rows`)."""

    tables: Mapping[str, pa.Table]
    # Row numbers per table: the answers of `calls` then `judge_calls`, parses, scores.
    at: Mapping[str, tuple[int, ...]]


@dataclass(frozen=True)
class StoredOutcome:
    """One item's answer chain (an answer per attempt), its parses and score rows, and the
    judge's answers, as the baseline run landed them (of one sample and variant)."""

    item_id: str
    sample: int
    content_hash: str
    calls: tuple[ModelCall, ...]
    judge_calls: tuple[ModelCall, ...]
    parses: tuple[ParseRow, ...]
    scores: tuple[ScoreRow, ...]
    landed: LandedRows
    variant: str = ""

    def matches(self, content_hash: str, keys: Sequence[str]) -> bool:
        """Whether a rerun of the item asks what the baseline asked: the same content, and the
        chain's request keys attempt by attempt."""
        if content_hash != self.content_hash or len(self.calls) > len(keys):
            return False
        return all(call.request_key == key for call, key in zip(self.calls, keys, strict=False))

    @property
    def final_parse(self) -> ParsedAnswer:
        row = max(self.parses, key=lambda p: p.attempt)
        return parsed_answer(row)


@dataclass(frozen=True)
class ShardBaseline:
    """What one shard's plan may take from the baseline: answers by request key, and (when the
    suite's scoring is the baseline's and the run is no rescore) whole scored outcomes."""

    answers: BaselineAnswers
    copy_scores: bool


# Whose outcome a row is about: its item, sample and variant ('' as released, 'blind').
OutcomeKey = tuple[str, int, str]


@dataclass
class BaselineAnswers:
    """The baseline run's answers (by request key), and item outcomes and score rows (by item
    id, sample and variant) of one suite x model."""

    run_id: str
    answers: dict[str, ModelCall] = field(default_factory=dict)
    outcomes: dict[OutcomeKey, StoredOutcome] = field(default_factory=dict)
    scores: dict[OutcomeKey, tuple[ScoreRow, ...]] = field(default_factory=dict)
    # Parquet parts read, for the benchmark's count of store requests; parts that did not read.
    parts_read: int = 0
    unreadable: list[str] = field(default_factory=list)

    def stored(self, request_key: str) -> ModelCall | None:
        return self.answers.get(request_key)

    @classmethod
    def read(cls, store: Store, run_id: str, suite: str, model: str) -> BaselineAnswers:
        """The baseline's landed rows of `suite` x `model` (one listing per table and the parts
        of that run, read whole: one part per table once the run is compacted)."""
        landed = {key.removeprefix(LANDINGS) for key in store.list(f"{LANDINGS}{run_id}-")}
        tables: dict[str, pa.Table] = {}
        unreadable: list[str] = []
        parts_read = 0
        for table in OUTCOME_TABLES:
            folder = part_key(table, "x", suite=suite, model=model).rsplit("/", 1)[0] + "/"
            ours = [
                key
                for key in store.list(folder)
                if key.endswith(".parquet") and part_name(key).startswith(f"{run_id}-")
            ]
            keys = visible_keys(ours, landed)
            parts_read += len(keys)
            parts = [SCHEMAS[table].empty_table()]
            for key in keys:
                try:
                    parts.append(read_part(store, table, key))
                except UnreadablePart as exc:
                    # Its items are simply not the baseline's: asked, or found in the cache.
                    unreadable.append(str(exc))
                    log.warning("the baseline run's %s", exc)
            tables[table] = pa.concat_tables(parts)
        answers = cls.of(run_id, tables)
        answers.parts_read = parts_read
        answers.unreadable = unreadable
        return answers

    @classmethod
    def of(cls, run_id: str, tables: Mapping[str, pa.Table]) -> BaselineAnswers:
        """Index a run's tables of one suite x model (`OUTCOME_TABLES`, each of its schema)."""
        found = cls(run_id)
        responses: list[ResponseRow] = records_of("responses", tables["responses"])
        parses: list[ParseRow] = records_of("parses", tables["parses"])
        scores: list[ScoreRow] = records_of("scores", tables["scores"])
        by_item: dict[OutcomeKey, list[int]] = {}
        # One answer per row, shared by the by-key index and the item's outcome.
        calls: dict[int, ModelCall] = {}
        for at, row in enumerate(responses):
            if row.error_kind is None and row.raw_text:
                by_item.setdefault(_of(row), []).append(at)
                call = calls[at] = _call(row)
                if row.role == "answer":
                    found.answers.setdefault(row.request_key, call)
        parses_of: dict[OutcomeKey, list[int]] = {}
        for at, parse in enumerate(parses):
            parses_of.setdefault(_of(parse), []).append(at)
        scores_of: dict[OutcomeKey, list[int]] = {}
        for at, score in enumerate(scores):
            scores_of.setdefault(_of(score), []).append(at)
        found.scores = {key: tuple(scores[at] for at in ats) for key, ats in scores_of.items()}
        rows = _Rows(tables, responses, parses, scores, calls)
        for key, ats in scores_of.items():
            outcome = rows.outcome(key, by_item.get(key, []), parses_of.get(key, []), ats)
            if outcome is not None:
                found.outcomes[key] = outcome
        return found


def _of(row: ResponseRow | ParseRow | ScoreRow) -> OutcomeKey:
    """A row's item, sample and variant (rows landed before samples were kept: the first;
    before variants were: as released)."""
    return row.item_id, row.sample or 1, row.variant or ""


def _call(row: ResponseRow) -> ModelCall:
    """A landed answer as the answer a rerun reuses (cached: this run pays nothing for it)."""
    assert row.raw_text is not None
    logprobs = (
        tuple(TokenLogprob.from_json(t) for t in json.loads(row.logprobs_json))
        if row.logprobs_json
        else None
    )
    output = ModelOutput(
        text=row.raw_text,
        finish_reason=row.finish_reason,
        tokens_in=row.tokens_in,
        tokens_out=row.tokens_out,
        cost_usd=row.original_cost_usd,
        latency_s=row.latency_s,
        logprobs=logprobs,
        extras=json.loads(row.extras_json) if row.extras_json else {},
    )
    return ModelCall(
        request_key=row.request_key,
        model=row.model_string,
        attempt=row.attempt,
        output=output,
        cached=True,
        try_number=0,
        api_base=row.api_base,
        origin_run_id=row.origin_run_id or row.run_id,
        role=row.role,
    )


@dataclass(frozen=True)
class _Rows:
    """A baseline's tables of one suite x model, as records, and the answers of its rows."""

    tables: Mapping[str, pa.Table]
    responses: list[ResponseRow]
    parses: list[ParseRow]
    scores: list[ScoreRow]
    calls: dict[int, ModelCall]

    def outcome(
        self, key: OutcomeKey, responses: list[int], parses: list[int], scores: list[int]
    ) -> StoredOutcome | None:
        """An item's whole scored chain (rows by number), or None when the baseline did not
        land one (an error, a stop, an answer missing at some attempt)."""
        answers = {self.responses[at].attempt: at for at in responses if self._answer(at)}
        if not parses or not answers:
            return None
        by_attempt = sorted(parses, key=lambda at: self.parses[at].attempt)
        last = self.parses[by_attempt[-1]].attempt
        if sorted(answers) != list(range(1, last + 1)):
            return None
        content = {self.scores[at].content_hash for at in scores}
        if len(content) != 1:
            return None
        chain = [answers[n] for n in range(1, last + 1)]
        judged = [at for at in responses if self.responses[at].role == "judge"]
        return StoredOutcome(
            item_id=key[0],
            sample=key[1],
            variant=key[2],
            content_hash=content.pop(),
            calls=tuple(self.calls[at] for at in chain),
            judge_calls=tuple(self.calls[at] for at in judged),
            parses=tuple(self.parses[at] for at in by_attempt),
            scores=tuple(self.scores[at] for at in scores),
            landed=LandedRows(
                self.tables,
                {
                    "responses": (*chain, *judged),
                    "parses": tuple(by_attempt),
                    "scores": tuple(scores),
                },
            ),
        )

    def _answer(self, at: int) -> bool:
        return self.responses[at].role == "answer"


def parsed_answer(row: ParseRow) -> ParsedAnswer:
    """A landed parse as the suite's record of it."""
    return ParsedAnswer(
        status=ParseStatus(row.status),
        value=json.loads(row.value_json),
        rule=row.rule,
        detail=row.detail,
    )
