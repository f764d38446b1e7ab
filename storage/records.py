"""One typed record per store table. The table's Arrow schema is derived from its record, so a
column is declared once, and every row is built as a record (a misspelt or missing field fails
where the row is made, not in a query months later)."""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, TypeVar, Union

import pyarrow as pa

TIMESTAMP = pa.timestamp("us", tz="UTC")
Int32 = Annotated[int, pa.int32()]

R = TypeVar("R")
TABLES: dict[str, type[Any]] = {}


def table(name: str) -> Callable[[type[R]], type[R]]:
    """Class decorator: register a frozen dataclass as the record of table `name`."""

    def register(cls: type[R]) -> type[R]:
        if name in TABLES:
            raise ValueError(f"table {name!r} already has a record: {TABLES[name].__name__}")
        TABLES[name] = cls
        return cls

    return register


def table_of(record: object) -> str:
    """The table a record belongs to; a TypeError for an object that is no table's record."""
    for name, cls in TABLES.items():
        if type(record) is cls:
            return name
    raise TypeError(f"{type(record).__name__} is not the record of any table")


_ARROW_TYPES: dict[Any, pa.DataType] = {
    str: pa.string(),
    int: pa.int64(),
    float: pa.float64(),
    bool: pa.bool_(),
    datetime: TIMESTAMP,
}


def _arrow_type(hint: Any, where: str) -> pa.DataType:
    if typing.get_origin(hint) is Annotated:
        declared = [m for m in typing.get_args(hint)[1:] if isinstance(m, pa.DataType)]
        if declared:
            return declared[0]
        hint = typing.get_args(hint)[0]
    if typing.get_origin(hint) in (Union, types.UnionType):
        present = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        if len(present) == 1:
            return _arrow_type(present[0], where)
    if hint in _ARROW_TYPES:
        return _ARROW_TYPES[hint]
    raise TypeError(f"{where}: no Arrow type for {hint!r}")


def arrow_schema(record: type[Any]) -> pa.Schema:
    """The Arrow schema of a record class: one nullable column per field, in field order."""
    hints = typing.get_type_hints(record, include_extras=True)
    return pa.schema(
        [
            (f.name, _arrow_type(hints[f.name], f"{record.__name__}.{f.name}"))
            for f in dataclasses.fields(record)
        ]
    )


@table("items")
@dataclass(frozen=True)
class ItemRow:
    """One benchmark item of one suite version."""

    suite: str
    suite_version: str
    item_id: str
    task: str
    content_hash: str
    answer_kind: str
    question: str
    options_json: str
    reference_json: str
    media_json: str
    labels_json: str
    extra_json: str


@dataclass(frozen=True)
class AboutItem:
    """The columns every per-item row starts with: which run, which item (by content too, so
    that reruns can find facts by what was asked), and which model's answer it is about."""

    run_id: str
    suite: str
    task: str
    item_id: str
    content_hash: str
    model: str


@table("plan")
@dataclass(frozen=True)
class PlanRow(AboutItem):
    """One request a run set out to make, before it made any: the basis of cost estimates,
    budgets and reruns. `conditional` requests are made only if the protocol calls for them
    (a re-ask after an unreadable answer, a judge call once there is an answer)."""

    # `model` is who is asked (the judge, for a judge call); `answer_model`, whose answer the
    # request is about.
    model_string: str
    api_base: str | None
    answer_model: str
    role: str
    request_key: str | None
    attempt: Int32
    conditional: bool
    answered: bool
    params_json: str
    prompt_tokens_est: int | None
    images: int
    max_output_tokens: int | None
    created_at: datetime


@table("estimates")
@dataclass(frozen=True)
class EstimateRow:
    """A dry run's cost estimate for one suite x model x role (answer or judge), from the plan,
    before any call. `expected` is every first attempt not yet answered (and, for the judge, one
    call per answer still to come), each billed its full input and every output token it may
    ask for; `worst` adds every re-ask the protocol may make and a judge call for every judged
    item. `retry_bound_usd` is (num_retries + 1) x worst: retries after a timeout or a cut-off
    reply may each be billed. USD columns are null when the model is unpriced or its output
    unbounded (no max_tokens known): never 0 for an unknown."""

    run_id: str
    suite: str
    model: str
    role: str
    requests: int
    requests_worst: int
    answered: int
    tokens_in: int
    tokens_in_worst: int
    tokens_out_max: int | None
    tokens_out_worst: int | None
    expected_usd: float | None
    worst_usd: float | None
    retry_bound_usd: float | None
    priced: bool
    price_source: str
    image_rule: str
    created_at: datetime


@table("responses")
@dataclass(frozen=True)
class ResponseRow(AboutItem):
    """One HTTP request sent (retries included), or one answer reused from the store; `model`
    is who answered (the judge, for a judge call)."""

    model_string: str
    api_base: str | None
    # "answer" for the model under test, "judge" for a model that scores answers.
    role: str
    request_key: str
    attempt: Int32
    try_number: Int32
    raw_text: str | None
    finish_reason: str | None
    tokens_in: int | None
    tokens_out: int | None
    # What this run paid: 0 for a reused answer, whose first cost is original_cost_usd.
    cost_usd: float | None
    original_cost_usd: float | None
    latency_s: float
    error_kind: str | None
    error_message: str | None
    # A timed-out or cancelled request may still be billed by the provider.
    may_be_billed: bool
    cached: bool
    origin_run_id: str | None
    # The output tokens' log-probabilities with their top alternatives, where the provider
    # gives them: [{"token", "logprob", "top": [{"token", "logprob"}, ...]}, ...].
    logprobs_json: str | None
    # What else the provider said that is worth keeping (response id, served model, ...).
    extras_json: str | None
    created_at: datetime


@table("parses")
@dataclass(frozen=True)
class ParseRow(AboutItem):
    """What the suite's parser read from one attempt's answer, and by which rule."""

    attempt: Int32
    request_key: str
    status: str
    rule: str
    value_json: str
    detail: str


@table("scores")
@dataclass(frozen=True)
class ScoreRow(AboutItem):
    """One metric of one item's answer. An answer that could not be scored (a judge reply that
    does not read) is a row with no value, status `unscored` and the reason: never 0."""

    request_key: str
    metric: str
    value: float | None
    status: str
    unscored_reason: str | None
    judge_model: str | None
    judge_request_key: str | None
    judge_prompt_hash: str | None
    judge_params_json: str | None
    judge_reply: str | None
    details_json: str | None


@table("metrics")
@dataclass(frozen=True)
class MetricRow:
    """A corpus-level result: per task (slice '' = all items), per slice value, or suite-wide
    (task '*')."""

    run_id: str
    suite: str
    task: str
    model: str
    slice: str
    slice_value: str
    metric: str
    value: float
    n: int


@table("pareto")
@dataclass(frozen=True)
class ErrorParetoRow:
    """One bar of a Pareto chart of errors: for one model and one group of items (TRIP: a
    role), a category (TRIP: a knowledge point) with its errors, ranked by errors (most first,
    ties by name, rank 1 first); `share` is its part of the group's errors, `cumulative_share`
    the running total down to this rank (1.0 at the last). A group without errors has no rows."""

    run_id: str
    suite: str
    model: str
    role: str
    knowledge_point: str
    rank: Int32
    errors: int
    share: float
    cumulative_share: float


@table("run_events")
@dataclass(frozen=True)
class RunEventRow:
    """A status a run went through (running, then finished / failed / interrupted); the `runs`
    view shows each run's latest."""

    run_id: str
    seq: Int32
    status: str
    started_at: datetime
    ended_at: datetime | None
    panel: str
    code_version: str
    host: str
    pid: int
    heartbeat_s: float
    n_items: int
    n_scored: int
    n_calls: int
    n_requests: int
    n_cached: int
    n_errors: int
    n_interrupted: int
    n_not_run: int
    n_abnormal: int
    n_unparsed: int
    n_judge_calls: int
    n_unscored: int
    cost_usd: float
    message: str | None
    manifest_json: str
    # Who ran the stages: "prefect" or "inline" (None in runs recorded before it was kept).
    orchestrator: str | None = None


# The run counts that are columns of `run_events` (and so of the `runs` view), as n_<name>.
RUN_COUNT_COLUMNS = tuple(
    f.name.removeprefix("n_") for f in dataclasses.fields(RunEventRow) if f.name.startswith("n_")
)
