"""A small store of one finished run in the store's own layout (landed parts of the records in
`storage.records`, a `runs` event with its manifest), with the rows other work lands beside the
scores: confidence intervals on metrics, paired differences (one pair not significant), a blind
ablation, and what changed since a baseline run. For the report's and `show`'s tests."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from roadeval.flows.run.record import event_row
from roadeval.storage.landing import Part, land
from roadeval.storage.records import (
    ChangeRow,
    MetricDeltaRow,
    MetricPairRow,
    MetricRow,
    ParseRow,
    ResponseRow,
    RunEventRow,
    ScoreChangeRow,
    ScoreRow,
)
from roadeval.storage.store import Store, open_store
from roadeval.tasks.results.manifest import (
    BaselineRecord,
    PairCounts,
    RunManifest,
    SuiteRecord,
    Totals,
)

RUN = "20260101T000000Z-report01"
BASELINE = "20251231T000000Z-report00"
MODELS = ("model-a", "model-b", "random")
# The values the tests look for.
ACCURACY = {"model-a": 0.62, "model-b": 0.58, "random": 0.25}
INTERVAL = {"model-a": (0.51, 0.71), "model-b": (0.47, 0.68), "random": (0.16, 0.35)}
BLIND = {"model-a": 0.41, "model-b": 0.57, "random": 0.25}
ECE = {"model-a": 0.081, "model-b": 0.153, "random": 0.02}


@dataclass(frozen=True)
class Options:
    """What the run has beside its scores."""

    pairs: bool = True
    blind: bool = True
    baseline: bool = True


def _metric(model: str, metric: str, value: float, suite: str = "trip", **more: Any) -> MetricRow:
    fields = {"task": "*", "slice": "", "slice_value": "", "n": 40} | more
    return MetricRow(RUN, suite, fields.pop("task"), model, metric=metric, value=value, **fields)


def _metrics(options: Options) -> list[MetricRow]:
    rows: list[MetricRow] = []
    for model in MODELS:
        low, high = INTERVAL[model]
        rows.append(_metric(model, "accuracy", ACCURACY[model], ci_low=low, ci_high=high))
        rows.append(_metric(model, "modality_penalty", 0.1))
        rows.append(_metric(model, "accuracy", ACCURACY[model], task="mcq"))
        rows.append(_metric(model, "abnormal_count", 3.0, task="mcq"))
        for role, value in (("vehicle", 0.7), ("traveler", 0.4)):
            rows.append(
                _metric(model, "correct", value, task="mcq", slice="role", slice_value=role)
            )
        rows.append(_metric(model, "accuracy", ACCURACY[model] - 0.1, suite="v2xqa"))
        rows.append(_metric(model, "ece", ECE[model], suite="v2xqa"))
        rows.append(_metric(model, "accuracy", 0.5, suite="v2xqa", task="VS1"))
        if options.blind:
            rows.append(_metric(model, "accuracy", BLIND[model], variant="blind"))
    return rows


def _pairs() -> list[MetricPairRow]:
    def pair(a: str, b: str, low: float, high: float) -> MetricPairRow:
        return MetricPairRow(
            RUN, "trip", "*", "accuracy", a, b, 40, ACCURACY[a] - ACCURACY[b], low, high, low > 0
        )

    return [pair("model-a", "model-b", -0.03, 0.11), pair("model-a", "random", 0.2, 0.54)]


def _about(model: str, item: int, suite: str = "trip") -> dict[str, Any]:
    return {
        "run_id": RUN,
        "suite": suite,
        "task": "mcq" if suite == "trip" else "VS1",
        "item_id": f"{suite}-{item}",
        "content_hash": f"h{item}",
        "model": model,
    }


def _per_item() -> Iterable[Part]:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    for model in MODELS:
        scores, parses, responses = [], [], []
        for item in range(4):
            key = f"{model}-{item}"
            failed = model == "model-b" and item == 3
            responses.append(
                ResponseRow(
                    **_about(model, item),
                    model_string=f"openai/{model}",
                    api_base="http://127.0.0.1:1/v1",
                    role="answer",
                    request_key=key,
                    attempt=1,
                    try_number=1,
                    raw_text=None if failed else "A",
                    finish_reason=None if failed else "stop",
                    tokens_in=100,
                    tokens_out=1,
                    cost_usd=0.001,
                    original_cost_usd=0.001,
                    latency_s=0.1,
                    error_kind="server_error" if failed else None,
                    error_message="500" if failed else None,
                    may_be_billed=False,
                    cached=False,
                    origin_run_id=None,
                    logprobs_json=None,
                    extras_json=None,
                    created_at=now,
                )
            )
            if failed:
                continue
            status = "unparsed" if model == "model-b" and item == 2 else "ok"
            parses.append(
                ParseRow(
                    **_about(model, item),
                    attempt=1,
                    request_key=key,
                    status=status,
                    rule="letter",
                    value_json='"A"',
                    detail="",
                )
            )
            scores.append(
                ScoreRow(
                    **_about(model, item),
                    request_key=key,
                    metric="correct",
                    value=float(item % 2),
                    status="scored",
                    unscored_reason=None,
                    judge_model=None,
                    judge_request_key=None,
                    judge_prompt_hash=None,
                    judge_params_json=None,
                    judge_reply=None,
                    details_json=None,
                )
            )
        for table, rows in (("scores", scores), ("parses", parses), ("responses", responses)):
            yield Part(table, rows, suite="trip", model=model)


def _changes() -> Iterable[Part]:
    yield Part(
        "changes",
        [
            ChangeRow(
                RUN,
                BASELINE,
                "trip",
                "trip-0",
                "mcq",
                "changed",
                "reference",
                "answer",
                "h0",
                "h0b",
                "p0",
                "p0",
            ),
            ChangeRow(
                RUN,
                BASELINE,
                "trip",
                "trip-1",
                "mcq",
                "unchanged",
                None,
                None,
                "h1",
                "h1",
                "p1",
                "p1",
            ),
        ],
    )
    yield Part(
        "score_changes",
        [
            ScoreChangeRow(
                RUN,
                BASELINE,
                "trip",
                "model-a",
                "trip-0",
                "mcq",
                1,
                "correct",
                1.0,
                0.0,
                "scored",
                "scored",
                True,
            )
        ],
        suite="trip",
        model="model-a",
    )
    yield Part(
        "metric_deltas",
        [
            MetricDeltaRow(
                RUN, BASELINE, "trip", "*", "model-a", "", "", "accuracy", 0.645, 0.62, 0.62 - 0.645
            ),
            MetricDeltaRow(
                RUN, BASELINE, "trip", "*", "model-b", "", "", "accuracy", 0.53, 0.58, 0.58 - 0.53
            ),
            # TRIP has one task: its task rows repeat the suite-wide ones (one metric, once).
            MetricDeltaRow(
                RUN, BASELINE, "trip", "mcq", "model-a", "", "", "accuracy", 0.645, 0.62, -0.025
            ),
            # Better lower: a rise is worse.
            MetricDeltaRow(
                RUN, BASELINE, "trip", "*", "model-a", "", "", "modality_penalty", 0.1, 0.138, 0.038
            ),
            MetricDeltaRow(
                RUN, BASELINE, "trip", "mcq", "model-b", "role", "vehicle", "correct", 0.6, 0.7, 0.1
            ),
            MetricDeltaRow(
                RUN, BASELINE, "trip", "*", "random", "", "", "accuracy", 0.25, 0.25, 0.0
            ),
        ],
        suite="trip",
    )


def manifest(options: Options) -> RunManifest:
    started = datetime(2026, 1, 1, tzinfo=UTC)
    suites = [
        SuiteRecord(
            name=name,
            source=f"/data/{name}",
            demo=False,
            version=f"{name}-v1",
            hash="ab" * 32,
            items=4,
            tasks=[task],
            prompt_version="p1",
            max_attempts=1,
            options={},
            skipped_items=[],
            drawings={},
            unknown_fields={},
            unknown_fields_message=None,
            scorer_version="1",
        )
        for name, task in (("trip", "mcq"), ("v2xqa", "VS1"))
    ]
    models = [
        {"name": m, "model": f"openai/{m}", "api_base": "http://127.0.0.1:1/v1"} for m in MODELS[:2]
    ] + [{"name": "random", "model": "roadeval/random", "params": {"seed": 0}}]
    counts = [PairCounts(suite="trip", model=m, items=4, scored=4, calls=4) for m in MODELS]
    return RunManifest(
        run_id=RUN,
        panel="report-test",
        started_at=started,
        ended_at=started + timedelta(minutes=3),
        code_version="0.2.0+test",
        store="memory",
        suites=suites,
        models=models,
        judge=None,
        generation=[],
        not_covered=[],
        planned_items=12,
        counts=counts,
        totals=Totals(items=12, scored=12, calls=12),
        orchestrator="inline",
        baseline=(
            BaselineRecord(
                run_id=BASELINE,
                chosen_by="the last finished run of panel 'p'",
                started_at=started - timedelta(days=1),
                code_version="0.1.0",
            )
            if options.baseline
            else None
        ),
        status="finished",
    )


def _event(options: Options) -> RunEventRow:
    return event_row(manifest(options), 1, 10.0)


def report_store(root: Path, options: Options = Options()) -> Store:
    """The store at `root` with the run `RUN`, landed as a run lands its parts."""
    store = open_store(str(root))
    parts = list(_per_item())
    metrics = _metrics(options)
    for suite in ("trip", "v2xqa"):
        for model in MODELS:
            rows = [m for m in metrics if m.suite == suite and m.model == model]
            parts.append(Part("metrics", rows, suite=suite, model=model))
    if options.pairs:
        parts.append(Part("metric_pairs", _pairs(), suite="trip"))
    if options.baseline:
        parts.extend(_changes())
    land(store, f"{RUN}-rows", parts)
    land(store, f"{RUN}-event-001", [Part("run_events", [_event(options)])])
    return store
