"""A dry run's shard counts every sample of its items (`Shard.samples`) instead of a shard, a
planned item and a plan row per sample: its plan rows, expanded, and its estimate are exactly
those of the plans a shard per sample makes, whatever the store answers of which samples and
attempts (re-asks and judge calls included)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.registry import get_suite
from roadeval.storage.records import EstimateRow
from roadeval.storage.store import LocalStore
from roadeval.tasks.cache.responses import ResponseCache
from roadeval.tasks.calls.gateway import ModelClient
from roadeval.tasks.render.stage import render_items
from roadeval.tasks.requests.model_spec import ModelSpec
from roadeval.tasks.requests.request import ModelCall
from roadeval.tasks.results.estimate import Estimate, estimate_plans
from roadeval.tasks.shard.plan import Shard, ShardPlan, plan_shard
from roadeval.tasks.shard.plan_table import plan_table

NOW = datetime(2026, 12, 7, tzinfo=UTC)
SAMPLES = 5
PRICES = {"input_cost_per_token": 1e-6, "output_cost_per_token": 4e-6}
# (sample, attempt) answered in the store for every other item: samples apart (2 and 4, not 3),
# a re-ask answered after its first attempt (sample 4), and the last sample.
STORED = {(2, 1), (4, 1), (4, 2), (5, 1)}


def _answer(key: str, attempt: int) -> ModelCall:
    return ModelCall(key, "openai/gpt-4o", attempt, output=ModelOutput("- 1\n", tokens_out=3))


@pytest.mark.parametrize(("suite_name", "n"), [("roadbench", 4), ("stride", 12)])
def test_a_counted_shard_plans_and_estimates_as_a_shard_per_sample(
    tmp_path: Path, suite_name: str, n: int
) -> None:
    store = LocalStore(tmp_path / "store")
    suite = get_suite(suite_name)
    items = suite.load(suite.generate_demo(tmp_path / suite_name)).items[:n]
    renders = render_items(suite, items).renders
    spec = ModelSpec(model="openai/gpt-4o", params={"max_tokens": 40}, samples=SAMPLES, **PRICES)
    judge = ModelSpec(model="openai/gpt-4.1", name="judge", params={"max_tokens": 30}, **PRICES)
    client, judge_client = ModelClient(spec), ModelClient(judge)

    def materialised() -> list[ShardPlan]:
        cache = ResponseCache(store)
        return [
            plan_shard(Shard("run", s, suite, client, items, sample=s), renders, cache)
            for s in range(1, SAMPLES + 1)
        ]

    cache = ResponseCache(store)
    for plan in materialised():
        for k, planned in enumerate(plan.items[::2]):
            for request in planned.requests:
                if (plan.shard.sample, request.attempt) in STORED or k == 0:
                    cache.put(_answer(request.key, request.attempt))
    per_sample = materialised()
    counted = plan_shard(
        Shard("run", 0, suite, client, items, sample=1, samples=SAMPLES),
        renders,
        ResponseCache(store),
    )
    # Every sample's answers are counted, runs apart where the store answers them apart.
    assert max(len(runs) for planned in counted.items for runs in planned.samples) >= 3

    expected = estimate_plans(per_sample, judge, "run", NOW)
    found = estimate_plans([counted], judge, "run", NOW)
    _same_estimate(found, expected)
    assert {r.role for r in found} == ({"answer", "judge"} if suite.uses_judge else {"answer"})
    answers = next(r for r in found if r.role == "answer")
    assert 0 < answers.answered < n * SAMPLES and answers.requests > 0
    if suite.max_attempts > 1:
        assert answers.requests_worst > answers.requests  # re-asks, some answered already

    # The plan rows: a row per run of samples, which expanded are the rows of every sample's
    # plan, each run's key that of its first sample.
    rows = plan_table(counted, judge_client, NOW).to_pylist()
    assert len(rows) < sum(plan_table(p, judge_client, NOW).num_rows for p in per_sample)
    materialised_rows = {
        (r["item_id"], r["role"], r["attempt"], r["sample"]): (r["answered"], r["request_key"])
        for p in per_sample
        for r in plan_table(p, judge_client, NOW).to_pylist()
    }
    expanded = {}
    for r in rows:
        first = (r["item_id"], r["role"], r["attempt"], r["sample"])
        assert materialised_rows[first][1] == r["request_key"]
        for s in range(r["sample"], r["sample"] + r["samples"]):
            expanded[(r["item_id"], r["role"], r["attempt"], s)] = r["answered"]
    assert expanded == {key: answered for key, (answered, _) in materialised_rows.items()}


def _same_estimate(found: list[EstimateRow], expected: list[EstimateRow]) -> None:
    """The same counts, and costs but for the order of their sums."""
    assert [r.role for r in found] == [r.role for r in expected]
    for row, want in zip(found, expected, strict=True):
        counts = ("requests", "requests_worst", "answered", "tokens_in", "tokens_in_worst")
        more = ("tokens_out_max", "tokens_out_worst")
        for name in (*counts, *more):
            assert getattr(row, name) == getattr(want, name), (row.role, name)
        for name in ("expected_usd", "worst_usd", "retry_bound_usd"):
            assert getattr(row, name) == pytest.approx(getattr(want, name)), (row.role, name)


def test_an_estimate_summed_plan_by_plan_is_the_estimate_of_all_of_them(tmp_path: Path) -> None:
    """A dry run adds each shard's plan and drops it: the rows are the whole plan's."""
    store = LocalStore(tmp_path / "store")
    suite = get_suite("roadbench")
    items = suite.load(suite.generate_demo(tmp_path / "rb")).items[:6]
    renders = render_items(suite, items).renders
    client = ModelClient(ModelSpec(model="openai/gpt-4o", params={"max_tokens": 40}, **PRICES))
    plans = [
        plan_shard(Shard("run", i, suite, client, items[i::3]), renders, ResponseCache(store))
        for i in range(3)
    ]
    estimate = Estimate(None)
    for plan in plans:
        estimate.add(plan)
    assert estimate.rows("run", NOW) == estimate_plans(plans, None, "run", NOW)


class ReadCountingStore(LocalStore):
    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.reads = 0

    def get(self, key: str) -> bytes:
        self.reads += 1
        return super().get(key)


@pytest.mark.parametrize("stored", [False, True])
def test_a_dry_runs_shard_reads_only_stored_answers_and_counts_as_a_shard_per_sample(
    tmp_path: Path, stored: bool
) -> None:
    """A dry run's counted shard, planned from one listing of the store (`counted`), plans as
    a shard per sample does with a look-up per key, and reads the store only for what it
    holds: in an empty store, not one read for its 40 samples of every item."""
    store = ReadCountingStore(tmp_path / "store")
    suite = get_suite("roadbench")
    items = suite.load(suite.generate_demo(tmp_path / "rb")).items[:4]
    renders = render_items(suite, items).renders
    samples = 40
    spec = ModelSpec(model="openai/gpt-4o", params={"max_tokens": 40}, samples=samples, **PRICES)
    client = ModelClient(spec)
    per_sample = [
        plan_shard(Shard("run", s, suite, client, items, sample=s), renders, ResponseCache(store))
        for s in range(1, samples + 1)
    ]
    if stored:  # the first attempt of samples 7 to 9 of the first item
        for plan in per_sample[6:9]:
            request = plan.items[0].requests[0]
            ResponseCache(store).put(_answer(request.key, request.attempt))
        per_sample = [plan_shard(p.shard, renders, ResponseCache(store)) for p in per_sample]
    store.reads = 0
    shard = Shard("run-dry", 0, suite, client, items, samples=samples, counted=True)
    counted = plan_shard(shard, renders, ResponseCache(store, run_id="run-dry", counted=True))
    assert store.reads == (3 if stored else 0)
    _same_estimate(
        estimate_plans([counted], None, "run", NOW), estimate_plans(per_sample, None, "run", NOW)
    )
    first = counted.items[0].samples[0]
    assert [(r.first, r.count, r.answered) for r in first] == (
        [(1, 6, False), (7, 3, True), (10, 31, False)] if stored else [(1, 40, False)]
    )
    assert [r.request_key for r in first] == [
        per_sample[r.first - 1].items[0].requests[0].key for r in first
    ]


@pytest.mark.parametrize("listed", [False, True])
def test_a_counted_shard_asks_a_stale_sample_again_as_its_own_plan_would(
    tmp_path: Path, listed: bool
) -> None:
    """Under `reuse_for`, each sample is fresh or stale by its own stored answer: a dry run's
    runs of samples part where their freshness does, and its counts (asked, answered, stale)
    and rows are those of the plans a shard per sample makes, which are what the run sends;
    looked up in one listing of the store (`listed`, a dry run's) as one by one."""
    store = LocalStore(tmp_path / "store")
    suite = get_suite("roadbench")
    items = suite.load(suite.generate_demo(tmp_path / "rb")).items[:4]
    renders = render_items(suite, items).renders
    spec = ModelSpec(
        model="openai/gpt-4o", params={"max_tokens": 40}, samples=SAMPLES, reuse_for="1d", **PRICES
    )
    client = ModelClient(spec, fresh_from=NOW)
    old, recent = NOW - timedelta(days=3), NOW - timedelta(hours=1)
    # Per sample, when its first attempt's answer was bought: stale, stale, fresh, none, stale.
    bought = {1: old, 2: old, 3: recent, 5: old}

    def per_sample() -> list[ShardPlan]:
        return [
            plan_shard(Shard("run", s, suite, client, items, sample=s), renders, cache)
            for s in range(1, SAMPLES + 1)
        ]

    cache = ResponseCache(store)
    for plan in per_sample():
        when = bought.get(plan.shard.sample)
        for planned in plan.items[1:]:  # the first item: no sample answered at all
            if when is not None:
                key = planned.requests[0].key
                cache.put(replace(_answer(key, 1), answered_at=when))
    asked = per_sample()
    counted = plan_shard(
        Shard("run-dry", 0, suite, client, items, sample=1, samples=SAMPLES, counted=listed),
        renders,
        ResponseCache(store, run_id="run-dry", counted=True) if listed else cache,
    )
    runs = [
        [(run.first, run.count, run.answered, run.stale) for run in planned.samples[0]]
        for planned in counted.items
    ]
    answered_some = [(1, 2, False, True), (3, 1, True, False), (4, 1, False, False)]
    assert runs == [[(1, SAMPLES, False, False)]] + [[*answered_some, (5, 1, False, True)]] * 3

    (row,) = estimate_plans([counted], None, "run", NOW)
    (want,) = estimate_plans(asked, None, "run", NOW)
    for name in ("requests", "requests_worst", "answered", "stale", "tokens_in", "tokens_in_worst"):
        assert getattr(row, name) == getattr(want, name), name
    assert row.worst_usd == pytest.approx(want.worst_usd)
    # Of 4 items x 5 samples: 3 answered fresh (sample 3 of three items), 9 stale, asked again.
    assert (row.requests, row.answered, row.stale) == (4 * SAMPLES - 3, 3, 9)
    # What a run sends: the first attempts its plans do not find answered.
    sent = sum(not p.answered(0) for plan in asked for p in plan.items)
    assert row.requests == sent
    assert sum(p.was_stale(0) for plan in asked for p in plan.items) == row.stale

    shown = {
        (r["item_id"], r["attempt"], r["sample"]): (r["answered"], r["stale"])
        for plan in asked
        for r in plan_table(plan, None, NOW).to_pylist()
    }
    expanded = {}
    for r in plan_table(counted, None, NOW).to_pylist():
        for s in range(r["sample"], r["sample"] + r["samples"]):
            expanded[(r["item_id"], r["attempt"], s)] = (r["answered"], r["stale"])
    assert expanded == shown
