"""The dry run's cost estimate: from a run's plan, before any call, what each suite x model x role
(answer, judge) will cost, in two figures and a bound.

- expected: every first attempt not yet answered, and a judge call for every judged item whose
  answer is still to come;
- worst: every attempt the protocol may make (re-asks included) and a judge call for every
  judged item;
- retry bound: (num_retries + 1) x worst, since a retried timeout or cut-off reply may be billed
  each time (a try that fails without a reply costs nothing); reported apart, never folded in.

Each request is billed in full: its text by the model's tokenizer, its images by the provider's rule
(`tasks.requests.image_tokens`), the chat format's per-message tokens, and every output token it may
ask for (`max_tokens`, else the price map's `max_output_tokens`). A judge's prompt is the suite's
own judge prompt with an empty candidate, plus the candidate's longest answer (the answering model's
output bound). Unpriced models and unbounded outputs are reported as such, never as $0.

Input tokens are counted whatever the output bound: a request with no bound on its output still
has its prompt counted; only what depends on the bound (its output tokens, and its cost when its
output is priced) reads unbounded. A judge asked about an answer of unbounded length counts its
own prompt without the answer, its cost unbounded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TypeVar

from rich.table import Table

from roadeval.benchmarks.generation import effective_params
from roadeval.benchmarks.judging import JudgeRequest
from roadeval.benchmarks.messages import image_refs
from roadeval.benchmarks.suite import Suite
from roadeval.storage.landing import Part, land
from roadeval.storage.records import EstimateRow
from roadeval.storage.store import Store
from roadeval.tasks.cache.responses import ResponseCache
from roadeval.tasks.calls.admission import UnboundedCost
from roadeval.tasks.requests.image_tokens import image_rule_label
from roadeval.tasks.requests.model_spec import CallMode, ModelSpec
from roadeval.tasks.requests.pricing import WorstCase, max_output_tokens, prices_for
from roadeval.tasks.requests.tokens import input_tokens
from roadeval.tasks.results.manifest import shown_as
from roadeval.tasks.shard.plan import PlannedItem, ShardPlan, stored_answers

ANSWER = "answer"
JUDGE = "judge"
UNPRICED = "unpriced"


def _batch(spec: ModelSpec) -> bool:
    return spec.mode == CallMode.BATCH


@dataclass(frozen=True)
class _Case:
    """One request's figures for the estimate: its input tokens (always counted), its output
    bound and its cost (None: unbounded, or for the cost also unpriced)."""

    tokens_in: int
    tokens_out: int | None
    usd: float | None


def _cost(
    spec: ModelSpec, tokens_in: int, max_out: int | None, *, input_bounded: bool = True
) -> _Case:
    """The request's figures: its cost is unbounded when a priced part of it is (its output
    with no bound, or its input when `input_bounded` is False)."""
    prices = prices_for(spec, batch=_batch(spec))
    if prices is None:
        return _Case(tokens_in, max_out, None)
    if not input_bounded and prices.input > 0:
        return _Case(tokens_in, max_out, None)
    if max_out is None:
        usd = tokens_in * prices.input if prices.output == 0 else None
        return _Case(tokens_in, None, usd)
    return _Case(tokens_in, max_out, tokens_in * prices.input + max_out * prices.output)


# Input tokens already counted in one estimate, by model and prompt (the messages object, which
# every sample and attempt of an item shares: `tasks.shard.plan.shared_prompt`).
_Counted = dict[tuple[str, int], int]


def _answer_case(
    spec: ModelSpec, planned: PlannedItem, attempt_index: int, counted: _Counted | None = None
) -> _Case:
    request = planned.requests[attempt_index]
    if spec.is_baseline:
        return _Case(0, 0, 0.0)
    tokens_in = request.tokens_in_est
    if tokens_in is None:
        key = (spec.model, id(request.messages))
        known = counted.get(key) if counted is not None else None
        if known is None:
            known = input_tokens(spec.model, request.messages, planned.prompt_tokens_est)
            if counted is not None:
                counted[key] = known
        tokens_in = known
    return _cost(spec, tokens_in, max_output_tokens(spec, request.params))


def request_worst_case(spec: ModelSpec, planned: PlannedItem, attempt_index: int) -> WorstCase:
    """The most attempt `attempt_index` (from 0) of a planned item can cost: what the budget
    reserves before sending it. A baseline costs 0; `UnboundedCost` for a priced model whose
    output has no bound."""
    case = _answer_case(spec, planned, attempt_index)
    prices = prices_for(spec, batch=_batch(spec))
    if case.tokens_out is None and prices is not None and prices.output > 0:
        raise UnboundedCost(
            f"model {spec.label}: no max_tokens in its params and no max_output_tokens in "
            "LiteLLM's price map, so a request's cost has no bound; set params.max_tokens"
        )
    return WorstCase(case.tokens_in, case.tokens_out or 0, case.usd)


@dataclass
class _Tally:
    """One estimate row being summed; a None USD sum stays None (unpriced or unbounded)."""

    requests: int = 0
    requests_worst: int = 0
    answered: int = 0
    stale: int = 0
    tokens_in: int = 0
    tokens_in_worst: int = 0
    tokens_out: int | None = 0
    tokens_out_worst: int | None = 0
    expected: float | None = 0.0
    worst: float | None = 0.0

    def add(self, case: _Case, *, expected: bool, times: int = 1) -> None:
        """Count a request still to send, `times` over (the samples of a prompt that are
        still to ask): its input tokens always, its output and cost unbounded (None) from the
        first request whose are."""
        if times <= 0:
            return
        self.requests_worst += times
        self.requests += times * expected
        self.tokens_in_worst += case.tokens_in * times
        self.tokens_out_worst = _plus(self.tokens_out_worst, case.tokens_out, times)
        self.worst = _plus(self.worst, case.usd, times)
        if expected:
            self.tokens_in += case.tokens_in * times
            self.tokens_out = _plus(self.tokens_out, case.tokens_out, times)
            self.expected = _plus(self.expected, case.usd, times)


N = TypeVar("N", int, float)


def _plus(total: N | None, value: N | None, times: int = 1) -> N | None:
    return None if total is None or value is None else total + value * times


def _judge_case(
    judge: ModelSpec, answerer: ModelSpec, planned: PlannedItem, preview: JudgeRequest
) -> _Case:
    """The judge call about one item's answer, the answer as long as it may be (with no bound on
    the answer: the judge's prompt alone is counted, and its cost is unbounded)."""
    if judge.is_baseline:
        return _Case(0, 0, 0.0)
    last = planned.requests[-1]
    candidate = max_output_tokens(answerer, last.params)
    bounded = candidate is not None or answerer.is_baseline
    tokens_in = input_tokens(judge.model, preview.messages) + (candidate or 0)
    params = effective_params(preview.settings, judge.params)
    return _cost(judge, tokens_in, max_output_tokens(judge, params), input_bounded=bounded)


# An estimate row's suite, model, role and variant.
_Key = tuple[str, str, str, str]


def estimate_plans(
    plans: Sequence[ShardPlan], judge_spec: ModelSpec | None, run_id: str, now: datetime
) -> list[EstimateRow]:
    """The estimate rows of a run's plan: one per suite x model x role x variant (a blind
    ablation's requests in rows of their own), sorted."""
    estimate = Estimate(judge_spec)
    for plan in plans:
        estimate.add(plan)
    return estimate.rows(run_id, now)


class Estimate:
    """An estimate summed plan by plan, so that a dry run need not hold its whole plan: each
    shard's is added, then dropped (`rows` gives the estimate of what was added)."""

    def __init__(self, judge_spec: ModelSpec | None) -> None:
        self.judge_spec = judge_spec
        self.tallies: dict[_Key, _Tally] = {}
        self.specs: dict[_Key, ModelSpec] = {}
        # A prompt is counted once per model, not once per sample and attempt: a panel's
        # `samples` multiply its requests, not the tokenizer's passes (every prompt is kept
        # alive by the suite's memo, `tasks.shard.plan.shared_prompt`, so ids are not reused).
        self.counted: _Counted = {}
        # The judge call about one prompt's answer is the same for every sample of it.
        self.judged_cases: dict[tuple[int, str, str], _Case | None] = {}

    def add(self, plan: ShardPlan) -> None:
        """Count one shard's plan: each attempt of each item once per sample not yet answered
        (a dry run's item counts its samples: `PlannedItem.samples`)."""
        suite, spec, variant = plan.shard.suite, plan.shard.client.spec, plan.shard.variant
        key = (suite.name, spec.label, ANSWER, variant)
        tally = self.tallies.setdefault(key, _Tally())
        self.specs[key] = spec
        judge_spec = self.judge_spec
        judged = judge_spec is not None and suite.uses_judge
        for planned in plan.items:
            samples = planned.sample_count
            answered = planned.answered_samples(0)
            tally.answered += answered
            # Asked again, and so counted in `requests` too.
            tally.stale += planned.stale_samples(0)
            for index in range(len(planned.requests)):
                left = samples - planned.answered_samples(index)
                if left:
                    case = _answer_case(spec, planned, index, self.counted)
                    tally.add(case, expected=index == 0, times=left)
            if not judged or judge_spec is None:
                continue
            judge_case = self._judge_case(suite, judge_spec, spec, planned)
            if judge_case is None:
                continue
            judge_key = (suite.name, judge_spec.label, JUDGE, variant)
            judge_tally = self.tallies.setdefault(judge_key, _Tally())
            self.specs[judge_key] = judge_spec
            # An answer already stored may have its verdict stored too: worst case only.
            judge_tally.answered += answered
            judge_tally.add(judge_case, expected=False, times=answered)
            judge_tally.add(judge_case, expected=True, times=samples - answered)

    def _judge_case(
        self, suite: Suite, judge_spec: ModelSpec, spec: ModelSpec, planned: PlannedItem
    ) -> _Case | None:
        """The judge call about the item's answer (None: the suite judges no answer of it)."""
        prompt = planned.requests[0].messages
        seen = (id(prompt), spec.label, suite.name)
        if seen not in self.judged_cases:
            judged = suite.judge_preview(planned.item, image_refs(prompt))
            self.judged_cases[seen] = (
                None if judged is None else _judge_case(judge_spec, spec, planned, judged)
            )
        return self.judged_cases[seen]

    def rows(self, run_id: str, now: datetime) -> list[EstimateRow]:
        """The estimate of every plan added so far, a row per suite x model x role x
        variant, sorted."""
        return [
            _row(run_id, key, self.tallies[key], self.specs[key], now)
            for key in sorted(self.tallies)
        ]


def _row(run_id: str, key: _Key, tally: _Tally, spec: ModelSpec, now: datetime) -> EstimateRow:
    suite, model, role, variant = key
    prices = prices_for(spec, batch=_batch(spec))
    retry = None if tally.worst is None else tally.worst * (spec.num_retries + 1)
    return EstimateRow(
        run_id=run_id,
        suite=suite,
        model=model,
        role=role,
        requests=tally.requests,
        requests_worst=tally.requests_worst,
        answered=tally.answered,
        stale=tally.stale,
        tokens_in=tally.tokens_in,
        tokens_in_worst=tally.tokens_in_worst,
        tokens_out_max=tally.tokens_out,
        tokens_out_worst=tally.tokens_out_worst,
        expected_usd=None if prices is None else tally.expected,
        worst_usd=None if prices is None else tally.worst,
        retry_bound_usd=None if prices is None else retry,
        priced=prices is not None,
        price_source=prices.source if prices is not None else UNPRICED,
        image_rule="none" if spec.is_baseline else image_rule_label(spec.model),
        created_at=now,
        variant=variant,
    )


def land_estimates(store: Store, run_id: str, rows: Sequence[EstimateRow]) -> list[str]:
    """Land the estimate as one landing (`<run_id>-estimate`), a part per suite x model."""
    parts: dict[tuple[str, str], list[EstimateRow]] = {}
    for row in rows:
        parts.setdefault((row.suite, row.model), []).append(row)
    return land(
        store,
        f"{run_id}-estimate",
        [Part("estimates", r, suite=s, model=m) for (s, m), r in sorted(parts.items())],
    )


def _usd(value: float | None, row: EstimateRow | None = None) -> str:
    if row is not None and not row.priced:
        return UNPRICED
    return "unbounded" if value is None else f"${value:,.4f}"


def _tokens(value: int | None) -> str:
    return "unbounded" if value is None else f"{value:,}"


def estimate_table(rows: Sequence[EstimateRow]) -> Table:
    """The estimate per model and suite, with a total row: an unpriced model shows "unpriced"
    and the totals say that they leave it out; a `stale` column when some stored answers are
    too old to reuse (they are counted in `requests`)."""
    stale = any(row.stale for row in rows)
    table = Table(title="dry run: estimated cost", title_justify="left")
    for name in ("suite", "model", "role"):
        table.add_column(name)
    counted = ("requests", "answered", *(("stale",) if stale else ()))
    for name in (*counted, "tokens in", "tokens out (max)", "expected", "worst"):
        table.add_column(name, justify="right")
    table.add_column("retry bound", justify="right")
    table.add_column("prices")
    table.add_column("images")
    for row in sorted(rows, key=lambda r: (r.model, r.suite, r.role, r.variant or "")):
        table.add_row(
            row.suite,
            shown_as(row.model, row.variant),
            row.role,
            f"{row.requests:,} / {row.requests_worst:,}",
            f"{row.answered:,}",
            *((f"{row.stale or 0:,}",) if stale else ()),
            f"{row.tokens_in:,} / {row.tokens_in_worst:,}",
            f"{_tokens(row.tokens_out_max)} / {_tokens(row.tokens_out_worst)}",
            _usd(row.expected_usd, row),
            _usd(row.worst_usd, row),
            _usd(row.retry_bound_usd, row),
            row.price_source,
            row.image_rule,
        )
    totals = {
        name: _total([getattr(r, name) for r in rows if r.priced])
        for name in ("expected_usd", "worst_usd", "retry_bound_usd")
    }
    unpriced = sorted({r.model for r in rows if not r.priced})
    note = f" (without unpriced: {', '.join(unpriced)})" if unpriced else ""
    table.add_section()
    table.add_row(
        "total" + note,
        "",
        "",
        f"{sum(r.requests for r in rows):,} / {sum(r.requests_worst for r in rows):,}",
        f"{sum(r.answered for r in rows):,}",
        *((f"{sum(r.stale or 0 for r in rows):,}",) if stale else ()),
        "",
        "",
        *(_usd(totals[name]) for name in ("expected_usd", "worst_usd", "retry_bound_usd")),
        "",
        "",
    )
    caption = (
        "requests, tokens: expected / worst case (re-asks and every judge call). "
        "retry bound: worst x (num_retries + 1), if every retry were billed."
    )
    if stale:
        caption += (
            " stale: stored answers older than the model's reuse_for, asked again "
            "(in requests, not in answered)."
        )
    table.caption = caption
    return table


def _total(values: Sequence[float | None]) -> float | None:
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


def worst_case_left(
    plans: Sequence[ShardPlan], cache: ResponseCache, judge: ModelSpec | None, run_id: str
) -> float | None:
    """The worst case of what a resumed run would still pay: the plans' requests the store
    cannot answer now (every answer the run bought is kept, so it is not counted); None when
    some of it has no price or no output bound, or there are no plans."""
    if not plans:
        return None
    refreshed = [_refreshed(plan, cache) for plan in plans]
    rows = estimate_plans(refreshed, judge, run_id, datetime.now(UTC))
    worst = [row.worst_usd for row in rows if row.requests_worst]
    if any(value is None for value in worst):
        return None  # an unpriced model or an unbounded output: no honest bound
    return float(sum(value for value in worst if value is not None))


def _refreshed(plan: ShardPlan, cache: ResponseCache) -> ShardPlan:
    """The plan with its stored answers looked up again, as the plan stage looks them up (a
    re-ask only after its attempt before was found; none older than the model's
    `reuse_for`)."""
    since = plan.shard.fresh_since
    # Read now (`find`, not the run's listing): the answers bought since the plan, by any
    # process of the run.
    look = cache.as_of(since).find
    items = []
    for planned in plan.items:
        keys = [request.key for request in planned.requests]
        found, stale = stored_answers(keys, look, since)
        items.append(replace(planned, stored=found, stale=stale))
    return replace(plan, items=tuple(items))
