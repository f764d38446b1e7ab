"""What a baseline run answered and scored for one suite x model, read in bulk from the Parquet
parts it landed (a few reads, never one per request), and what of it a rerun may reuse.

An answer is reused for exactly the request key it answered. An item's score rows are copied
only when every call they rest on succeeded and they are a score (its suite's scorer did not
raise on it), the rerun would ask exactly what the baseline asked (the same request key at every
attempt of the chain, so the same item content and prompt) and score it by the same rules. A
failed call is an error, never an outcome: as an item whose model call failed is asked again, an
item whose judge call failed is judged again, and one its scorer raised on scored again, from its
stored answer.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

import pyarrow as pa
import pyarrow.compute as pc

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
from roadeval.storage.part_index import PartIndex
from roadeval.storage.records import EVERY_METRIC, ResponseRow, ScoreRow
from roadeval.storage.store import Store
from roadeval.storage.tables import SCHEMAS, part_key
from roadeval.tasks.requests.freshness import fresh_since
from roadeval.tasks.requests.model_spec import ModelSpec
from roadeval.tasks.requests.request import ModelCall
from roadeval.tasks.rerun.landed_columns import LandedColumns, OutcomeKey

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
    """One item's answer chain (an answer per attempt: their request keys, and the rows they
    are in), its parses and score rows, and the judge's answers, as the baseline run landed
    them (of one sample and variant). The answers are made on demand (`calls`): a rerun that
    copies the outcome whole never needs them."""

    item_id: str
    sample: int
    content_hash: str
    keys: tuple[str, ...]
    landed: LandedRows
    answers: _Answers = field(compare=False, repr=False)
    # The baseline's parses and scores of the suite x model, as columns (`landed.at` says
    # which rows are this outcome's).
    parses: LandedColumns = field(compare=False, repr=False)
    scores: LandedColumns = field(compare=False, repr=False)
    chain: tuple[int, ...] = ()
    judged: tuple[int, ...] = ()
    variant: str = ""

    @property
    def calls(self) -> tuple[ModelCall, ...]:
        """The chain's answers, attempt by attempt (reused: cached, at no cost)."""
        return tuple(self.answers.call(at) for at in self.chain)

    @property
    def judge_calls(self) -> tuple[ModelCall, ...]:
        return tuple(self.answers.call(at) for at in self.judged)

    def fresh(self, since: datetime | None, judge_since: datetime | None) -> bool:
        """Whether its answers were bought `since` then and its verdicts `judge_since` then
        (None: whenever), so that a run may reuse them (`freshness`): a copy never reuses an
        answer the run would ask again."""
        return all(self.answers.fresh(at, since) for at in self.chain) and all(
            self.answers.fresh(at, judge_since) for at in self.judged
        )

    def matches(self, content_hash: str, keys: Sequence[str]) -> bool:
        """Whether a rerun of the item asks what the baseline asked: the same content, and the
        chain's request keys attempt by attempt."""
        if content_hash != self.content_hash or len(self.keys) > len(keys):
            return False
        return self.keys == tuple(keys[: len(self.keys)])

    @cached_property
    def final_parse(self) -> ParsedAnswer:
        """The last attempt's parse (`landed.at` holds the parses by attempt); read once, it is
        asked for by the copy, its scoring and the shard's counts."""
        at, column = self.landed.at["parses"][-1], self.parses.values
        return ParsedAnswer(
            status=ParseStatus(column["status"][at]),
            value=json.loads(column["value_json"][at]),
            rule=column["rule"][at],
            detail=column["detail"][at],
        )

    def score_values(self) -> tuple[dict[str, float], dict[str, str]]:
        """The item's scores (metric: value) and its unscored metrics (metric: why)."""
        column = self.scores.values
        values: dict[str, float] = {}
        unscored: dict[str, str] = {}
        for at in self.landed.at["scores"]:
            metric, value = column["metric"][at], column["value"][at]
            if value is not None:
                values[metric] = value
            if column["status"][at] == "unscored":
                unscored[metric] = column["unscored_reason"][at] or ""
        return values, unscored


def indexed_parts(store: Store, run_id: str) -> dict[str, list[str]] | None:
    """The run's visible parts of the outcome tables, from the store's part index (a few
    requests however many suites and models: never a listing per suite x model); None when
    the store keeps no index."""
    view = PartIndex(store).load(OUTCOME_TABLES)
    if view is None:
        return None
    return {table: view.keys(table, [run_id]) for table in OUTCOME_TABLES}


@dataclass(frozen=True)
class ShardBaseline:
    """What one shard's plan may take from the baseline: answers by request key, and (when the
    suite's scoring is the baseline's and the run is no rescore) whole scored outcomes, those
    whose verdicts were bought `verdicts_since` then (None: whenever)."""

    answers: BaselineAnswers
    copy_scores: bool
    verdicts_since: datetime | None = None


@dataclass(frozen=True)
class CopyFreshness:
    """How old a baseline's answers (per model, by name) and its judge's verdicts may be for a
    rerun to reuse them: the run's start less each one's `reuse_for` (None: any age)."""

    answers: Mapping[str, datetime | None] = field(default_factory=dict)
    verdicts: datetime | None = None

    @classmethod
    def of(
        cls, started: datetime, models: Sequence[ModelSpec], judge: ModelSpec | None
    ) -> CopyFreshness:
        """The freshness of a run's models and judge, from their `reuse_for` in force measured
        back from `started` (the run's horizon)."""
        return cls(
            {spec.label: fresh_since(spec.reuse_for, started) for spec in models},
            fresh_since(judge.reuse_for, started) if judge is not None else None,
        )

    def copyable(self, model: str, outcome: StoredOutcome) -> bool:
        """Whether `model`'s stored outcome is fresh enough to be copied whole."""
        return outcome.fresh(self.answers.get(model), self.verdicts)


@dataclass
class BaselineAnswers:
    """The baseline run's answers (by request key), and item outcomes and score rows (by item
    id, sample and variant) of one suite x model."""

    run_id: str
    # Each request key's answer row (the first landed), in `rows`.
    answers: dict[str, int] = field(default_factory=dict)
    outcomes: dict[OutcomeKey, StoredOutcome] = field(default_factory=dict)
    # Each outcome's score rows, by row number in `score_columns`.
    score_rows: dict[OutcomeKey, list[int]] = field(default_factory=dict)
    score_columns: LandedColumns | None = None
    # Parquet parts read, for the benchmark's count of store requests; parts that did not read.
    parts_read: int = 0
    unreadable: list[str] = field(default_factory=list)

    rows: _Answers | None = None

    def scores(self, key: OutcomeKey) -> tuple[ScoreRow, ...]:
        """The baseline's score rows of an outcome (none when it landed none)."""
        rows = self.score_rows.get(key)
        if not rows or self.score_columns is None:
            return ()
        return self.score_columns.records(rows)

    def stored(self, request_key: str) -> ModelCall | None:
        at = self.answers.get(request_key)
        return None if at is None or self.rows is None else self.rows.call(at)

    @classmethod
    def read(
        cls,
        store: Store,
        run_id: str,
        suite: str,
        model: str,
        indexed: Mapping[str, Sequence[str]] | None = None,
    ) -> BaselineAnswers:
        """The baseline's landed rows of `suite` x `model`, its parts read whole (one part per
        table once the run is compacted). `indexed`: the run's visible parts per table, from
        the store's part index (`indexed_parts`); without it (a store that keeps no index)
        the run's landings and the pair's folder of each table are listed."""
        tables: dict[str, pa.Table] = {}
        unreadable: list[str] = []
        parts_read = 0
        landed: set[str] = set()
        if indexed is None:
            landed = {key.removeprefix(LANDINGS) for key in store.list(f"{LANDINGS}{run_id}-")}
        for table in OUTCOME_TABLES:
            folder = part_key(table, "x", suite=suite, model=model).rsplit("/", 1)[0] + "/"
            if indexed is not None:
                keys = [key for key in indexed[table] if key.startswith(folder)]
            else:
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
        """Index a run's tables of one suite x model (`OUTCOME_TABLES`, each of its schema).
        Answers stay columns until one is wanted: a rerun copies most outcomes whole."""
        found = cls(run_id)
        answers = found.rows = _Answers(tables["responses"])
        parses = LandedColumns(
            "parses", tables["parses"], ("attempt", "status", "value_json", "rule", "detail")
        )
        scores = LandedColumns(
            "scores",
            tables["scores"],
            ("metric", "value", "status", "unscored_reason", "content_hash", "judge_request_key"),
        )
        by_item: dict[OutcomeKey, list[int]] = {}
        for at, key in enumerate(answers.outcome_keys):
            if answers.usable(at):
                by_item.setdefault(key, []).append(at)
                if answers.roles[at] == "answer":
                    found.answers.setdefault(answers.request_keys[at], at)
        parses_of = parses.rows_of()
        scores_of = found.score_rows = scores.rows_of()
        found.score_columns = scores
        rows = _Rows(tables, answers, parses, scores)
        for key, ats in scores_of.items():
            outcome = rows.outcome(key, by_item.get(key, []), parses_of.get(key, []), ats)
            if outcome is not None:
                found.outcomes[key] = outcome
        return found


# Answers made from their own row before the whole table is made into records.
_ONE_BY_ONE = 64


class _Answers:
    """A baseline's response rows of one suite x model as the columns an index needs, and each
    row's answer made on demand (once) as the answer a rerun reuses (cached: it pays nothing)."""

    def __init__(self, table: pa.Table) -> None:
        self.table = table
        column = table.column
        self.request_keys: list[str] = column("request_key").to_pylist()
        self.roles: list[str] = column("role").to_pylist()
        self.attempts: list[int] = column("attempt").to_pylist()
        self._errors: list[str | None] = column("error_kind").to_pylist()
        self._texts: list[str | None] = column("raw_text").to_pylist()
        # Rows landed before samples (or variants) were kept: the first sample, as released.
        self.outcome_keys: list[OutcomeKey] = [
            (item, sample or 1, variant or "")
            for item, sample, variant in zip(
                column("item_id").to_pylist(),
                column("sample").to_pylist(),
                column("variant").to_pylist(),
                strict=True,
            )
        ]
        self._made: dict[int, ModelCall] = {}
        self._records: list[ResponseRow] | None = None
        self._fresh: dict[datetime, list[bool]] = {}

    def usable(self, at: int) -> bool:
        """Whether row `at` is an answer (no error, some text)."""
        return self._errors[at] is None and bool(self._texts[at])

    def fresh(self, at: int, since: datetime | None) -> bool:
        """Whether row `at`'s answer was bought `since` then (None: whenever); one landed
        before answers had a time is not. Computed for every row at once, per `since`."""
        if since is None:
            return True
        found = self._fresh.get(since)
        if found is None:
            bought = self.table.column("answered_at")
            after = pc.greater_equal(bought, pa.scalar(since, bought.type))
            found = self._fresh[since] = pc.fill_null(after, False).to_pylist()
        return found[at]

    def call(self, at: int) -> ModelCall:
        made = self._made.get(at)
        if made is None:
            made = self._made[at] = _call(self._record(at))
        return made

    def _record(self, at: int) -> ResponseRow:
        # A few rows one by one (a rerun's fixed references); past that every row at once (a
        # rescore wants them all), which costs less than a row's slice each.
        if self._records is None and len(self._made) < _ONE_BY_ONE:
            (row,) = records_of("responses", self.table.slice(at, 1))
            return row
        if self._records is None:
            self._records = records_of("responses", self.table)
        return self._records[at]


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
        answered_at=row.answered_at,
    )


@dataclass(frozen=True)
class _Rows:
    """A baseline's tables of one suite x model: its answers (columns), parses and scores."""

    tables: Mapping[str, pa.Table]
    answers: _Answers
    parses: LandedColumns
    scores: LandedColumns

    def outcome(
        self, key: OutcomeKey, responses: list[int], parses: list[int], scores: list[int]
    ) -> StoredOutcome | None:
        """An item's whole scored chain (rows by number), or None when the baseline did not
        land one: an error, a stop, an answer missing at some attempt, a judge call that failed
        (its verdict is not among `responses`, the answers), a scorer that raised (its one row,
        metric `*`, is no score to reuse)."""
        roles, attempts = self.answers.roles, self.answers.attempts
        answers = {attempts[at]: at for at in responses if roles[at] == "answer"}
        if not parses or not answers or not self._scored(responses, scores):
            return None
        attempt_of = self.parses.values["attempt"]
        by_attempt = sorted(parses, key=attempt_of.__getitem__)
        last = attempt_of[by_attempt[-1]]
        if sorted(answers) != list(range(1, last + 1)):
            return None
        hashes = self.scores.values["content_hash"]
        content = {hashes[at] for at in scores}
        if len(content) != 1:
            return None
        chain = tuple(answers[n] for n in range(1, last + 1))
        judged = tuple(at for at in responses if roles[at] == "judge")
        return StoredOutcome(
            item_id=key[0],
            sample=key[1],
            variant=key[2],
            content_hash=content.pop(),
            keys=tuple(self.answers.request_keys[at] for at in chain),
            landed=LandedRows(
                self.tables,
                {
                    "responses": (*chain, *judged),
                    "parses": tuple(by_attempt),
                    "scores": tuple(scores),
                },
            ),
            answers=self.answers,
            parses=self.parses,
            scores=self.scores,
            chain=chain,
            judged=judged,
        )

    def _scored(self, responses: list[int], scores: list[int]) -> bool:
        """Whether the score rows are a score: none is a scorer's error, and every judge
        verdict they name (by request key) is among the item's answers."""
        column = self.scores.values
        if any(column["metric"][at] == EVERY_METRIC for at in scores):
            return False
        verdicts = {
            self.answers.request_keys[at] for at in responses if self.answers.roles[at] == "judge"
        }
        named = {column["judge_request_key"][at] for at in scores} - {None}
        return named <= verdicts
