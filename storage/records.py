"""One typed record per store table. The table's Arrow schema is derived from its record, so a
column is declared once, and every row is built as a record (a misspelt or missing field fails
where the row is made, not in a query months later).

The registry of tables is open: the shared tables below register when this module loads, a
suite's own tables (its `Suite.tables`) when the suite is registered. Everything that needs a
table (part keys, Parquet encoding, landings, the catalogue's views) looks it up here at the
time, so a table registered later is everywhere at once.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any, TypeVar, Union

import pyarrow as pa

TIMESTAMP = pa.timestamp("us", tz="UTC")
Int32 = Annotated[int, pa.int32()]

R = TypeVar("R")

_RECORDS: dict[str, type[Any]] = {}
_SCHEMAS: dict[str, pa.Schema] = {}
_TABLE_OF: dict[type[Any], str] = {}
# Names the catalogue gives its own views (`runs`, `costs`, ...): no table may take one.
_RESERVED: set[str] = set()

# Live, read-only views of the registry (never a copy that goes stale): table name -> record,
# and table name -> Arrow schema, in the order the tables were registered.
TABLES: Mapping[str, type[Any]] = types.MappingProxyType(_RECORDS)
SCHEMAS: Mapping[str, pa.Schema] = types.MappingProxyType(_SCHEMAS)

# A table's name is a bare SQL identifier (its view) and a folder name (its parts).
_TABLE_NAME = re.compile(r"[a-z][a-z0-9_]*")


def register_tables(records: Mapping[str, type[Any]]) -> None:
    """Register records as the tables named by the keys, deriving each schema now; all or
    none (a bad record or a taken name fails before any is added). Registering the same
    record under the same name again is a no-op."""
    new: dict[str, tuple[type[Any], pa.Schema]] = {}
    for name, record in records.items():
        if _RECORDS.get(name) is record:
            continue
        if not _TABLE_NAME.fullmatch(name):
            raise ValueError(f"table name {name!r} is not a lowercase identifier")
        if name in _RECORDS:
            raise ValueError(f"table {name!r} already has a record: {_RECORDS[name].__name__}")
        if name in _RESERVED:
            raise ValueError(f"table name {name!r} is taken by a view of the catalogue")
        if not (dataclasses.is_dataclass(record) and isinstance(record, type)):
            raise TypeError(f"the record of table {name!r} must be a dataclass, not {record!r}")
        params = getattr(record, "__dataclass_params__", None)  # set by @dataclass
        if not getattr(params, "frozen", False):
            raise TypeError(f"the record of table {name!r} ({record.__name__}) must be frozen")
        owner = _TABLE_OF.get(record) or next(
            (other for other, (cls, _) in new.items() if cls is record), None
        )
        if owner is not None:
            raise ValueError(f"{record.__name__} is already the record of table {owner!r}")
        new[name] = (record, arrow_schema(record))
    for name, (record, schema) in new.items():
        _RECORDS[name], _SCHEMAS[name], _TABLE_OF[record] = record, schema, name


def table(name: str) -> Callable[[type[R]], type[R]]:
    """Class decorator: register a frozen dataclass as the record of table `name`."""

    def register(cls: type[R]) -> type[R]:
        register_tables({name: cls})
        return cls

    return register


def reserve_names(names: Iterable[str]) -> None:
    """Keep names (the catalogue's own views) from ever naming a table."""
    for name in names:
        if name in _RECORDS:
            raise ValueError(f"{name!r} is both a table and a view of the catalogue")
        _RESERVED.add(name)


def table_of(record: object) -> str:
    """The table a record belongs to; a TypeError for an object that is no table's record."""
    name = _TABLE_OF.get(type(record))
    if name is None:
        raise TypeError(f"{type(record).__name__} is not the record of any table")
    return name


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
    # Which of the model's independent samples of the item (`samples:` in the panel; 1 when
    # it takes one). Keyword-only, so the tables' own fields follow it.
    sample: Int32 = field(default=1, kw_only=True)
    # How the item was shown: '' as released, 'blind' with every image replaced by a black one
    # of its size (the panel's `ablations`). Parts landed before it read it as null: ''.
    variant: str = field(default="", kw_only=True)


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
    # The store held an answer, older than the model's `reuse_for`: asked again (None in rows
    # landed before it was kept).
    stale: bool | None = None
    # How many samples of the item the row stands for, from `sample` on, each the same
    # request but for its sample (and so its key: `request_key` is the first's), all answered
    # alike (and all stale alike): 1 in a run; a dry run counts an item's samples in runs
    # rather than a row each. Parts landed before it read it as null: 1.
    samples: Int32 = field(default=1, kw_only=True)


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
    # The requests' items as shown ('' as released, 'blind': see `AboutItem.variant`): an
    # ablation's requests are estimated in rows of their own.
    variant: str = field(default="", kw_only=True)
    # First attempts whose stored answer is older than the model's `reuse_for`: to be asked
    # again, so counted in `requests`, not in `answered` (None in rows landed before it was
    # kept).
    stale: int | None = field(default=None, kw_only=True)


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
    # When the answer was bought (a reused one's: when its origin run bought it); None for an
    # error, and in rows landed before it was kept. What a later run's `reuse_for` reads.
    answered_at: datetime | None = None
    # Asked again because the answer the store held was older than the model's `reuse_for`.
    replaced_stale: bool | None = None
    # What the provider says served it: the `model` its reply names (a vLLM or SGLang
    # server's served model name) and its `system_fingerprint`, where it sends them.
    served_model: str | None = None
    system_fingerprint: str | None = None


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


# The metric of the one score row of an item whose suite's scorer raised: every metric ('*'), as
# it cannot say which it would have had (`tasks.shard.rows.score_rows`). The manifest's unscored
# metrics and the shard counts name it so too.
EVERY_METRIC = "*"


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
    # The suite's `scorer_version` that scored it (None in rows landed before it was kept).
    scorer_version: str | None = None


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
    # The 95% confidence interval of `value` (None where none is computed; the method and
    # its seed are in the run's manifest).
    ci_low: float | None = None
    ci_high: float | None = None
    # The items as shown ('' as released, 'blind': see `AboutItem.variant`).
    variant: str = field(default="", kw_only=True)


@table("metric_pairs")
@dataclass(frozen=True)
class MetricPairRow:
    """Two models' difference on one headline metric (suite-wide: task '*', or per task) over
    the items both were scored on, `difference` = a - b, with its 95% interval from a paired
    bootstrap over those items; `significant` when the interval leaves out 0."""

    run_id: str
    suite: str
    task: str
    metric: str
    model_a: str
    model_b: str
    n: int
    difference: float
    ci_low: float
    ci_high: float
    significant: bool
    variant: str = field(default="", kw_only=True)


class RunStatus:
    """The statuses of a run's `run_events` rows, in the order a run may go through them."""

    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    INTERRUPTED = "interrupted"
    # Stopped by its budget (`tasks.calls.budget.OUT_OF_BUDGET`): what was answered is landed.
    OUT_OF_BUDGET = "out_of_budget"
    # A dry run: planned and estimated, no model called.
    PLANNED = "planned"


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
    # Under Prefect: the flow run's id, and the deployment that started it (None: by hand).
    flow_run_id: str | None = None
    deployment: str | None = None
    # The finished run this one was compared with and reused (None: no baseline).
    baseline_run_id: str | None = None
    # Where it drew (dask or local) and scored heavy items (ray or local), the clusters'
    # addresses when given, and the Prefect API it reported to (the manifest's `engines`).
    render_engine: str | None = None
    render_address: str | None = None
    scoring_engine: str | None = None
    scoring_address: str | None = None
    prefect_api_url: str | None = None
    # Items a suite's scorer raised on (unscored, not in n_scored; None in rows landed before
    # it was kept: the manifest's `totals.scorer_errors` has it).
    n_scorer_errors: int | None = None
    # Why heavy items were scored on `scoring_engine` (the manifest's `engines.scoring.reason`;
    # None in rows landed before it was kept).
    scoring_reason: str | None = None
    # Where answer shards ran (local, or ray: the nodes of the cluster at `answering_address`),
    # the nodes that landed shards, and the requests each sent (`node=calls, ...`); the
    # manifest's `engines.answering` (None in rows landed before it was kept).
    answering_engine: str | None = None
    answering_address: str | None = None
    answering_nodes: int | None = None
    answering_calls_per_node: str | None = None


@table("changes")
@dataclass(frozen=True)
class ChangeRow:
    """One item of a run against its baseline run, landed for every item (so each run holds
    its items' ledger): `kind` added, removed, changed or unchanged; for a change, `what`
    (`prompt`: what is sent to the model differs; `reference`: only the gold or scoring
    fields) and the item `fields` that differ (comma-separated; `render` when only a drawing
    did). The prompt hash covers the messages as sent, each image by its bytes' sha256."""

    run_id: str
    baseline_run_id: str | None
    suite: str
    item_id: str
    task: str
    kind: str
    what: str | None
    fields: str | None
    old_content_hash: str | None
    new_content_hash: str | None
    old_prompt_hash: str | None
    new_prompt_hash: str | None


@table("score_changes")
@dataclass(frozen=True)
class ScoreChangeRow:
    """One metric of one item whose score differs from the baseline run's (an item in both
    runs): old and new value (None where unscored or absent) and status; `flipped` when a
    0/1 verdict turned over."""

    run_id: str
    baseline_run_id: str
    suite: str
    model: str
    item_id: str
    task: str
    sample: Int32
    metric: str
    old_value: float | None
    new_value: float | None
    old_status: str | None
    new_status: str | None
    flipped: bool
    variant: str = field(default="", kw_only=True)


@table("metric_deltas")
@dataclass(frozen=True)
class MetricDeltaRow:
    """A corpus-level metric against the baseline run's: each side None where that run has no
    such metric (a task added or removed), delta = new - baseline where both exist."""

    run_id: str
    baseline_run_id: str
    suite: str
    task: str
    model: str
    slice: str
    slice_value: str
    metric: str
    baseline_value: float | None
    new_value: float | None
    delta: float | None
    variant: str = field(default="", kw_only=True)


@table("comparisons")
@dataclass(frozen=True)
class ComparisonRow:
    """One model's headline metric in a run against its value in an earlier run of the panel
    (its baseline), over the items both scored with unchanged inputs (same id, same content):
    `difference` = new - baseline there, its 95% interval from a paired bootstrap over those
    items (whole clusters where they share a scene), `significant` when it leaves out 0;
    `regressed` and `improved`: the items whose scores moved the worse and the better way;
    `p_value`, the bootstrap's two-sided p-value of the difference (None in rows landed before
    it was kept), which a panel's history corrects for the many rows of one comparison."""

    run_id: str
    baseline_run_id: str
    suite: str
    task: str
    model: str
    metric: str
    n: int
    baseline_value: float
    new_value: float
    difference: float
    ci_low: float
    ci_high: float
    significant: bool
    regressed: int
    improved: int
    clusters: int | None = None
    p_value: float | None = None
    variant: str = field(default="", kw_only=True)


# The run counts that are columns of `run_events` (and so of the `runs` view), as n_<name>.
RUN_COUNT_COLUMNS = tuple(
    f.name.removeprefix("n_") for f in dataclasses.fields(RunEventRow) if f.name.startswith("n_")
)
