"""`mode: batch` through a shard against a real local files + batches server: same request keys
as online, batch prices, answers kept, error lines as errors, ended batches failing their
requests, re-asks in a later batch, and a stop while polling left for the next run to poll."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import pytest

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.messages import encode_messages
from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.suite import Suite
from roadeval.benchmarks.trip.suite import TripSuite
from roadeval.storage.store import LocalStore, Store
from roadeval.tasks.batch.records import BatchRecord, BatchRecords, BatchState
from roadeval.tasks.cache.responses import ResponseCache
from roadeval.tasks.calls.budget import Budget
from roadeval.tasks.calls.gateway import ModelClient
from roadeval.tasks.calls.stopping import StopReason
from roadeval.tasks.render.stage import render_items
from roadeval.tasks.requests.model_spec import CallMode, ModelSpec
from roadeval.tasks.shard.plan import Shard, ShardPlan, plan_shard
from roadeval.tasks.shard.stages import ShardResult, run_shard

from support.batch_server import BatchServer
from support.cli_process import wait_until
from support.model_server import Reply
from support.trip_panel import gold_rule, seen_by_model, trip_gold

IN, OUT = 1e-6, 2e-6  # batch prices per token (half the online ones)


@pytest.fixture
def batch_server() -> Iterator[BatchServer]:
    server = BatchServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def trip(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Item], Callable[..., Reply]]:
    source, gold = trip_gold(tmp_path_factory.mktemp("trip"))
    every = get_suite("trip").load(source).items
    # Three text items and three with an image, so that images travel in the batch too.
    items = [*every[:3], *[item for item in every if item.media][:3]]
    return items, gold_rule(gold)


def batch_spec(server: BatchServer, **extra: Any) -> ModelSpec:
    return ModelSpec(
        model="openai/batchy",
        api_base=server.api_base,
        mode=CallMode.BATCH,
        batch_poll_s=0.05,
        input_cost_per_token=2 * IN,
        output_cost_per_token=2 * OUT,
        batch_input_cost_per_token=IN,
        batch_output_cost_per_token=OUT,
        **extra,
    )


def plan_for(suite: Suite, items: list[Item], client: ModelClient, store: Store) -> ShardPlan:
    shard = Shard("run-1", 0, suite, client, items)
    return plan_shard(shard, render_items(suite, items).renders, ResponseCache(store))


def in_background(fn: Callable[[], ShardResult]) -> Future[ShardResult]:
    pool = ThreadPoolExecutor(1)
    future = pool.submit(fn)
    pool.shutdown(wait=False)
    return future


def test_a_batch_model_answers_with_the_online_keys_at_the_batch_price_and_is_reused(
    tmp_path: Path, batch_server: BatchServer, trip: tuple[list[Item], Any]
) -> None:
    items, rule = trip
    batch_server.rules["batchy"] = rule
    batch_server.polls_until_done = 2
    store = LocalStore(tmp_path / "store")
    spec = batch_spec(batch_server)
    suite = TripSuite()
    plan = plan_for(suite, items, ModelClient(spec), store)
    online = plan_for(suite, items, ModelClient(spec.model_copy(update={"mode": "online"})), store)
    keys = [p.requests[0].key for p in plan.items]
    assert keys == [p.requests[0].key for p in online.items]

    client = plan.shard.client
    result = run_shard(plan, store)
    assert result.counts["scored"] == len(items) and result.counts["errors"] == 0
    assert all(s.values["correct"] == 1.0 for s in result.scored)
    assert batch_server.files_created == 1 and batch_server.batches_created == 1
    assert batch_server.polls == 3  # in progress twice, then done
    # One line per request: its key, the body the online path would send (images as data URLs).
    lines = {line["custom_id"]: line for line in batch_server.lines_seen}
    assert sorted(lines) == sorted(keys)
    for planned in plan.items:
        request = planned.requests[0]
        body = lines[request.key]["body"]
        assert body == {
            "model": "batchy",
            "messages": encode_messages(request.messages),
            **request.params,
        }
    with_images = [line for line in lines.values() if seen_by_model(line["body"]["messages"])[1]]
    assert len(with_images) == 3 and all(
        url.startswith("data:image/png;base64,")
        for line in with_images
        for url in seen_by_model(line["body"]["messages"])[1]
    )
    # The mock's usage is 10 tokens in, 1 out: priced at the batch prices, not the online ones.
    assert result.cost_usd == pytest.approx(len(items) * (10 * IN + 1 * OUT))
    assert client.stats.snapshot().done == len(items)
    assert batch_server.auth_seen and set(batch_server.auth_seen) == {"Bearer no-key"}
    [record] = [BatchRecords(store, spec.model, client.api_base).read(k) for k in _records(store)]
    assert record.state is BatchState.DONE and sorted(record.request_keys) == sorted(keys)

    # A second run finds every answer in the store: no file, batch or poll request at all.
    before = batch_server.requests_made
    again = plan_for(suite, items, ModelClient(spec), store)
    assert all(p.answered(0) for p in again.items)
    rerun = run_shard(again, store)
    assert rerun.counts["cached"] == len(items) and rerun.cost_usd == 0.0
    assert batch_server.requests_made == before


def test_failed_lines_are_errors_never_answers_and_are_asked_again_next_run(
    tmp_path: Path, batch_server: BatchServer, trip: tuple[list[Item], Any]
) -> None:
    items, rule = trip
    statuses = {1: 429, 2: 500, 3: 400}

    def some_fail(body: dict[str, Any], hit: int) -> Reply:
        status = statuses.get(hit)
        return Reply("nope", status=status) if status else rule(body, hit)

    batch_server.rules["batchy"] = some_fail
    batch_server.polls_until_done = 0
    store = LocalStore(tmp_path / "store")
    spec = batch_spec(batch_server)
    result = run_shard(plan_for(TripSuite(), items, ModelClient(spec), store), store)
    assert result.errors == {"rate_limit": 1, "server_error": 1, "bad_request": 1}
    assert result.counts["errors"] == 3 and result.counts["scored"] == len(items) - 3
    assert "status 429" in (result.first_error or "")
    # Only the answers were kept: the failed three are asked again, in one new batch.
    again = plan_for(TripSuite(), items, ModelClient(spec), store)
    assert sum(not p.answered(0) for p in again.items) == 3
    rerun = run_shard(again, store)
    assert rerun.counts["errors"] == 0 and rerun.counts["calls"] == 3
    assert batch_server.batches_created == 2


@pytest.mark.parametrize("ending", ["failed", "expired", "cancelled"])
def test_a_batch_that_ends_badly_fails_all_its_requests_and_a_rerun_submits_again(
    tmp_path: Path, batch_server: BatchServer, trip: tuple[list[Item], Any], ending: str
) -> None:
    items, rule = trip
    batch_server.rules["batchy"] = rule
    store = LocalStore(tmp_path / "store")
    spec = batch_spec(batch_server)
    plan = plan_for(TripSuite(), items, ModelClient(spec), store)
    running = in_background(lambda: run_shard(plan, store))
    wait_until(lambda: bool(batch_server.pending()), timeout=30, what="a pending batch")
    batch_server.release(ending)
    result = running.result(timeout=30)
    assert result.counts["errors"] == len(items) and result.counts["scored"] == 0
    assert result.errors == {"other": len(items)}
    assert f"ended {ending}" in (result.first_error or "")
    [key] = _records(store)
    record = BatchRecords(store, spec.model, plan.shard.client.api_base).read(key)
    assert record.state is BatchState.FAILED and record.reason == ending

    batch_server.polls_until_done = 0
    rerun = run_shard(plan_for(TripSuite(), items, ModelClient(spec), store), store)
    assert rerun.counts["scored"] == len(items)
    assert batch_server.batches_created == 2


class TwiceTrip(TripSuite):
    """TRIP with one re-ask of an answer that does not read."""

    max_attempts: ClassVar[int] = 2


def test_re_asks_form_a_second_batch(
    tmp_path: Path, batch_server: BatchServer, trip: tuple[list[Item], Any]
) -> None:
    items, rule = trip
    seen: dict[str, int] = {}
    lock = threading.Lock()

    def second_time(body: dict[str, Any], hit: int) -> Reply:
        key = json.dumps(body["messages"], sort_keys=True)
        with lock:
            seen[key] = seen.get(key, 0) + 1
        return rule(body, hit) if seen[key] > 1 else Reply("hmm")

    batch_server.rules["batchy"] = second_time
    batch_server.polls_until_done = 0
    store = LocalStore(tmp_path / "store")
    plan = plan_for(TwiceTrip(), items, ModelClient(batch_spec(batch_server)), store)
    result = run_shard(plan, store)
    assert result.counts["reasks"] == len(items) and result.counts["scored"] == len(items)
    assert all(s.values["correct"] == 1.0 for s in result.scored)
    assert batch_server.batches_created == 2
    attempt_keys = [{p.requests[n].key for p in plan.items} for n in (0, 1)]
    ids = [line["custom_id"] for line in batch_server.lines_seen]
    assert set(ids[: len(items)]) == attempt_keys[0] and set(ids[len(items) :]) == attempt_keys[1]


def test_a_stop_while_polling_leaves_the_batch_pending_and_the_next_run_polls_it(
    tmp_path: Path, batch_server: BatchServer, trip: tuple[list[Item], Any]
) -> None:
    items, rule = trip
    batch_server.rules["batchy"] = rule
    store = LocalStore(tmp_path / "store")
    spec = batch_spec(batch_server)
    plan = plan_for(TripSuite(), items, ModelClient(spec), store)
    running = in_background(lambda: run_shard(plan, store))
    wait_until(lambda: batch_server.polls >= 2, timeout=30, what="a batch being polled")
    plan.shard.client.stop.request(StopReason("stopped by SIGINT", 130, "interrupted"))
    stopped = running.result(timeout=30)
    assert stopped.counts["interrupted"] == len(items) and stopped.counts["errors"] == 0
    [key] = _records(store)
    records = BatchRecords(store, spec.model, plan.shard.client.api_base)
    assert records.read(key).state is BatchState.PENDING

    # The next run submits nothing: it polls the pending batch and lands its answers.
    batch_server.release()
    resumed = run_shard(plan_for(TripSuite(), items, ModelClient(spec), store), store)
    assert resumed.counts["scored"] == len(items) and resumed.counts["errors"] == 0
    assert batch_server.batches_created == 1 and batch_server.files_created == 1
    assert records.read(key).state is BatchState.DONE
    assert resumed.cost_usd == pytest.approx(len(items) * (10 * IN + 1 * OUT))


def test_batches_hold_at_most_batch_size_requests(
    tmp_path: Path, batch_server: BatchServer, trip: tuple[list[Item], Any]
) -> None:
    items, rule = trip
    batch_server.rules["batchy"] = rule
    batch_server.polls_until_done = 0
    store = LocalStore(tmp_path / "store")
    plan = plan_for(TripSuite(), items, ModelClient(batch_spec(batch_server, batch_size=4)), store)
    result = run_shard(plan, store)
    assert result.counts["scored"] == len(items)
    assert batch_server.batches_created == 2  # 4 + 2
    sizes = sorted(b.counts["total"] for b in batch_server.batches.values())
    assert sizes == [2, 4]


def test_a_budget_submits_only_what_it_can_pay_for_and_waits_for_those_answers(
    tmp_path: Path, batch_server: BatchServer, trip: tuple[list[Item], Any]
) -> None:
    items, rule = trip
    batch_server.rules["batchy"] = rule
    batch_server.polls_until_done = 2
    store = LocalStore(tmp_path / "store")
    spec = batch_spec(batch_server, params={"max_tokens": 5})
    probe = ModelClient(spec, budget=Budget(1.0))
    planned = plan_for(TripSuite(), items, probe, store)
    worst = [probe.gate.cost_of(p.requests[0]).usd or 0.0 for p in planned.items]
    # Room for the worst case of the first four requests (at the batch price), not five:
    # requests join the batch in plan order.
    limit = sum(worst[:4]) + worst[4] / 2
    budget = Budget(limit)
    client = ModelClient(spec, budget=budget)
    result = run_shard(plan_for(TripSuite(), items, client, store), store)
    assert batch_server.batches_created == 1
    sent = len(batch_server.lines_seen)
    assert sent == 4
    # The stop is the budget's: what was submitted is still polled to its end and landed.
    assert client.stop.reason is not None and client.stop.reason.status == "out_of_budget"
    assert result.counts["scored"] == sent and result.counts["not_run"] == len(items) - sent
    assert budget.held_usd == pytest.approx(0.0)
    assert budget.spent_usd == pytest.approx(result.cost_usd) and budget.spent_usd <= limit
    assert result.cost_usd == pytest.approx(sent * (10 * IN + 1 * OUT))


def _records(store: Store) -> list[str]:
    return [k for k in store.list("batches/") if k.endswith(".json")]


def test_a_create_whose_reply_was_lost_is_found_at_the_provider_and_never_paid_for_again(
    tmp_path: Path, batch_server: BatchServer, trip: tuple[list[Item], Any]
) -> None:
    """The provider made the batch but its reply never came back: the run cannot know, so its
    requests end in errors that may be billed, and its `submitting` record stays. The next run
    asks the provider for the batch made from that record's file and polls it."""
    items, rule = trip
    batch_server.rules["batchy"] = rule
    batch_server.lose_create_replies = 1
    batch_server.polls_until_done = 0  # a batch that is polled is done
    store = LocalStore(tmp_path / "store")
    spec = batch_spec(batch_server)
    lost = run_shard(plan_for(TripSuite(), items, ModelClient(spec), store), store)
    assert lost.counts["errors"] == len(items) and lost.counts["may_be_billed"] == len(items)
    assert batch_server.batches_created == 1
    records = BatchRecords(store, spec.model, ModelClient(spec).api_base)
    [left] = [records.read(key) for key in _records(store)]
    assert left is not None and left.state is BatchState.SUBMITTING and not left.batch_id

    resumed = run_shard(plan_for(TripSuite(), items, ModelClient(spec), store), store)
    assert resumed.counts["scored"] == len(items) and resumed.counts["errors"] == 0
    assert batch_server.batches_created == 1 and batch_server.files_created == 1
    assert batch_server.lists >= 1
    [done] = [records.read(key) for key in _records(store)]
    assert done is not None and done.state is BatchState.DONE and done.batch_id == "batch-2"


def test_a_submitting_record_whose_writer_died_before_creating_frees_its_requests(
    tmp_path: Path, batch_server: BatchServer, trip: tuple[list[Item], Any]
) -> None:
    """No batch at the provider was made from the record's file and its writer is gone: the
    record is dropped and its requests are submitted, once."""
    items, rule = trip
    batch_server.rules["batchy"] = rule
    batch_server.polls_until_done = 0
    store = LocalStore(tmp_path / "store")
    spec = batch_spec(batch_server)
    plan = plan_for(TripSuite(), items, ModelClient(spec), store)
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    records = BatchRecords(store, spec.model, plan.shard.client.api_base)
    records.write(
        BatchRecord(
            batch_id="",
            input_file_id="file-never-made-into-a-batch",
            model=spec.model,
            api_base=plan.shard.client.api_base,
            run_id="crashed-run",
            request_keys=tuple(p.requests[0].key for p in plan.items),
            attempts=(1,) * len(plan.items),
            submitted_at=datetime.now(UTC).isoformat(),
            state=BatchState.SUBMITTING,
            host=socket.gethostname(),
            pid=int(gone.stdout),
        )
    )
    result = run_shard(plan, store)
    assert result.counts["scored"] == len(items) and result.counts["errors"] == 0
    assert batch_server.batches_created == 1 and batch_server.lists >= 1
    [done] = [records.read(key) for key in _records(store)]
    assert done is not None and done.state is BatchState.DONE
