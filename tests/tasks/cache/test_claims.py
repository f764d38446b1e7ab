"""Claims on batches of requests, in a folder and on S3: one holder per request however many
claim it at once, lower numbers first, answers kept since the run began found without a look-up,
lapsed and dead claims protecting nothing but what they kept, renewals while calls last, and a
handful of store requests per batch.

Books are claimers: two books are two processes (or runs) as far as the store can tell. Each
book runs on the gateway loop, as in a run."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import boto3
import pytest

from roadeval.benchmarks.messages import user_message
from roadeval.storage.store import Store, open_store
from roadeval.tasks.cache.claim_records import ClaimLog, ClaimRecord, ClaimState
from roadeval.tasks.cache.claims import ClaimBook, Kind, Verdict
from roadeval.tasks.cache.responses import ResponseCache
from roadeval.tasks.calls.gateway import CallOutcome, ModelClient, run_on_gateway
from roadeval.tasks.calls.stopping import StopSignal
from roadeval.tasks.requests.model_spec import ModelSpec
from roadeval.tasks.requests.request import ModelCall
from roadeval.tasks.shard.asking import Asker

from support.cli_process import wait_until
from support.model_server import ModelServer, Reply
from support.s3_calls import counted_s3_calls

FOLDER = "cache/claims/test/"
KEYS = [f"{n:02x}" + "c" * 62 for n in range(40)]


def book(store: Store, *, started: float | None = None, ttl: float = 30.0) -> ClaimBook:
    """A claimer on `store`; its run began `started` (now, unless given; None: unknown)."""
    begun = time.time() - 1 if started is None else started
    return ClaimBook(store, FOLDER, ResponseCache(store), StopSignal(), begun, ttl)


def answer(key: str) -> ModelCall:
    from roadeval.benchmarks.output import ModelOutput

    return ModelCall(request_key=key, model="m", attempt=1, output=ModelOutput(text="A"))


def records(store: Store) -> dict[int, ClaimRecord]:
    log = ClaimLog(store, FOLDER)
    found, _ = log.listing()
    out = {}
    for item in found:
        record = log.read(item.number)
        assert record is not None
        out[item.number] = record
    return out


@pytest.fixture(params=["folder", pytest.param("s3", marks=pytest.mark.s3)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    if request.param == "folder":
        return open_store(str(tmp_path / "store"))
    endpoint = request.getfixturevalue("s3_endpoint")
    bucket = f"claims-{uuid.uuid4().hex[:8]}"
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=bucket)
    return open_store(f"s3://{bucket}/x")


def test_two_claimers_at_once_hold_each_request_once_and_share_a_record_per_batch(
    store: Store,
) -> None:
    one, two = book(store), book(store)

    async def both() -> tuple[dict[str, Verdict], dict[str, Verdict]]:
        first, second = await asyncio.gather(one.claim_many(KEYS), two.claim_many(KEYS[10:]))
        return first, second

    first, second = run_on_gateway(both())
    leased = [k for k in KEYS if first[k].kind is Kind.LEASED]
    leased += [k for k in KEYS[10:] if second[k].kind is Kind.LEASED]
    assert sorted(leased) == sorted(KEYS), "a request held twice, or by nobody"
    # Each claimer's requests went into one record: two records in all. The lower number
    # holds all it claimed; the other narrowed its record to the rest (ended, if none).
    held = records(store)
    low, high = sorted(held)
    wanted = {one.owner: frozenset(KEYS), two.owner: frozenset(KEYS[10:])}
    assert (held[low].state, held[low].keys) == (ClaimState.HELD, wanted[held[low].owner])
    rest = wanted[held[high].owner] - held[low].keys
    assert held[high].keys == rest
    assert held[high].state is (ClaimState.HELD if rest else ClaimState.DONE)


def test_a_busy_request_is_waited_for_and_then_answered_from_the_finished_record(
    store: Store,
) -> None:
    holder, waiter = book(store), book(store)

    async def scenario() -> tuple[Verdict, Verdict, Verdict, float]:
        leases = [v.lease for v in (await holder.claim_many(KEYS[:3])).values() if v.lease]
        first = leases[0]
        busy = await waiter.claim(first.key)
        started = time.monotonic()

        async def answer_later() -> None:
            await asyncio.sleep(0.3)
            holder.cache.put(answer(first.key))
            # The claim ends once all its requests are asked: one answered, two not.
            for lease in leases:
                await holder.finish(lease, answered=lease == first)

        later = asyncio.ensure_future(answer_later())
        await waiter.wait(first.key)
        waited = time.monotonic() - started
        await later
        return busy, await waiter.claim(first.key), await waiter.claim(leases[1].key), waited

    busy, answered, unanswered, waited = run_on_gateway(scenario())
    assert busy.kind is Kind.BUSY
    assert answered.kind is Kind.ANSWERED and waited >= 0.3
    assert unanswered.kind is Kind.LEASED  # the holder could not answer it: now it is ours


def test_a_claim_that_ended_is_passed_at_the_next_listing_not_a_ttl_later(store: Store) -> None:
    """Another claimer's record read while it held requests, then ended: the next listing
    reads it again (it was rewritten), so the view knows it ended and lists past it. A view
    that trusted its first read would count it live for a whole TTL, and list (and scan) every
    claim taken since on each decision: the cost of a claim grew with the run's rate."""
    one, two = book(store), book(store)

    async def scenario() -> tuple[int, bool, int]:
        leases = [v.lease for v in (await one.claim_many(KEYS[:2])).values() if v.lease]
        await two.claim_many(KEYS[2:4])  # reads one's record while it holds KEYS[:2]
        number = leases[0].number
        held_then = bool(two.view.holders(KEYS[0]))
        for lease in leases:
            await one.finish(lease, answered=False)
        await two.claim(KEYS[4])  # its listing finds one's record rewritten
        return number, held_then, two.view.floor or 0

    number, held_then, floor = run_on_gateway(scenario())
    assert held_then
    assert floor >= number and number not in two.view.seen
    assert two.view.holders(KEYS[0]) == [] and not two.view.lapsed_on(KEYS[0])


def test_an_answer_kept_after_the_plan_looked_is_found_without_looking_again(
    tmp_path: Path,
) -> None:
    """The claim ended before the second claimer ever saw it: its record says what it
    answered, so the second claimer sends nothing (and reads no cache entry to know it)."""
    store = open_store(str(tmp_path / "store"))
    plan_time = time.time() - 1
    first, second = book(store), book(store, started=plan_time)

    async def scenario() -> Verdict:
        [lease] = [v.lease for v in (await first.claim_many(KEYS[:1])).values() if v.lease]
        first.cache.put(answer(lease.key))
        await first.finish(lease, answered=True)
        return await second.claim(KEYS[0])

    verdict = run_on_gateway(scenario())
    assert verdict.kind is Kind.ANSWERED and verdict.answer is None  # known from the record


def test_a_run_that_cannot_say_when_it_began_looks_each_request_up_before_sending(
    tmp_path: Path,
) -> None:
    store = open_store(str(tmp_path / "store"))
    ResponseCache(store).put(answer(KEYS[0]))
    unknown = ClaimBook(store, FOLDER, ResponseCache(store), StopSignal(), None)
    verdicts = run_on_gateway(unknown.claim_many(KEYS[:2]))
    assert verdicts[KEYS[0]].kind is Kind.ANSWERED and verdicts[KEYS[0]].answer is not None
    assert verdicts[KEYS[1]].kind is Kind.LEASED


def test_a_claim_whose_holder_died_holds_nothing_and_what_it_kept_is_reused(
    tmp_path: Path,
) -> None:
    """A process killed mid-batch: its claim is free at once on its machine; the answers it
    kept before it died are found in the cache, the rest are claimed and asked."""
    store = open_store(str(tmp_path / "store"))
    script = (
        "import sys, time\n"
        "from roadeval.storage.store import open_store\n"
        "from roadeval.tasks.cache.claim_records import ClaimLog, ClaimRecord\n"
        "from roadeval.tasks.cache.responses import ResponseCache\n"
        "from roadeval.benchmarks.output import ModelOutput\n"
        "from roadeval.tasks.requests.request import ModelCall\n"
        "import os, socket\n"
        "store = open_store(sys.argv[1])\n"
        "keys = sys.argv[2:]\n"
        "record = ClaimRecord('dead', socket.gethostname(), os.getpid(), frozenset(keys))\n"
        f"assert ClaimLog(store, {FOLDER!r}).create(1, record)\n"
        "ResponseCache(store).put(ModelCall(request_key=keys[0], model='m', attempt=1,"
        " output=ModelOutput(text='A')))\n"
    )
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "store"), *KEYS[:3]], check=True)
    taker = book(store, ttl=600)
    verdicts = run_on_gateway(taker.claim_many(KEYS[:3]))
    assert verdicts[KEYS[0]].kind is Kind.ANSWERED and verdicts[KEYS[0]].answer is not None
    assert [verdicts[k].kind for k in KEYS[1:3]] == [Kind.LEASED, Kind.LEASED]


def test_a_claim_not_renewed_lapses_after_its_ttl(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "store"))
    record = ClaimRecord("elsewhere", "another-host", 1, frozenset(KEYS[:1]))
    assert ClaimLog(store, FOLDER).create(1, record)
    early = run_on_gateway(book(store, ttl=1.0).claim(KEYS[0]))
    assert early.kind is Kind.BUSY
    time.sleep(1.2)
    late = run_on_gateway(book(store, ttl=1.0).claim(KEYS[0]))
    assert late.kind is Kind.LEASED


def test_many_claimers_in_their_own_threads_lease_a_request_once(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "store"))
    barrier = threading.Barrier(8)
    verdicts: list[Verdict] = []
    lock = threading.Lock()

    def take() -> None:
        claimer = book(store)
        barrier.wait()
        verdict = asyncio.run(claimer.claim(KEYS[0]))
        with lock:
            verdicts.append(verdict)

    threads = [threading.Thread(target=take) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(v.kind for v in verdicts) == [Kind.BUSY] * 7 + [Kind.LEASED]
    assert sorted(records(store)) == list(range(1, 9)), "a number taken twice"


def test_old_records_are_swept_but_the_highest_number_stays(tmp_path: Path) -> None:
    import os

    store = open_store(str(tmp_path / "store"))
    log = ClaimLog(store, FOLDER)
    done = ClaimRecord("old", "h", 1, frozenset(), ClaimState.DONE)
    for number in (1, 2, 3):
        assert log.create(number, done)
        path = tmp_path / "store" / log.key(number)
        os.utime(path, (time.time() - 7 * 3600,) * 2)
    verdict = run_on_gateway(book(store).claim(KEYS[0]))
    assert verdict.kind is Kind.LEASED
    # 1 and 2 swept, 3 kept: the next number was 4
    wait_until(lambda: sorted(records(store)) == [3, 4], 10, "the old records swept")


def test_a_claim_does_not_wait_for_old_records_to_be_swept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store left for a day holds thousands of old records: deleting them is not the
    first claim's business."""
    import os

    store = open_store(str(tmp_path / "store"))
    log = ClaimLog(store, FOLDER)
    done = ClaimRecord("old", "h", 1, frozenset(), ClaimState.DONE)
    for number in (1, 2, 3):
        assert log.create(number, done)
        os.utime(tmp_path / "store" / log.key(number), (time.time() - 7 * 3600,) * 2)
    release, swept = threading.Event(), threading.Event()
    sweep = ClaimLog.sweep

    def slow_sweep(self: ClaimLog, numbers: list[int]) -> None:
        release.wait(10)
        sweep(self, numbers)
        swept.set()

    monkeypatch.setattr(ClaimLog, "sweep", slow_sweep)
    verdict = run_on_gateway(book(store).claim(KEYS[0]))
    claimed_before_sweep = not swept.is_set()
    release.set()
    assert verdict.kind is Kind.LEASED
    assert claimed_before_sweep, "the claim waited for the old records to be deleted"
    assert swept.wait(10)
    assert sorted(records(store)) == [3, 4]


def test_an_askers_claims_are_renewed_while_its_calls_last(
    tmp_path: Path, server: ModelServer
) -> None:
    """A call outlasting several TTLs keeps its claim (one task renews every claim); once the
    answer is kept, the claim's record says so and no late renewal takes it back."""
    store = open_store(str(tmp_path / "store"))
    answered = threading.Event()
    server.rules["slow"] = lambda body, hit: Reply("A") if answered.wait(60) else Reply("late")
    client = ModelClient(ModelSpec(model="openai/slow", api_base=server.api_base))
    # Renewed every TTL/3 = 0.5 s: a renewal may come a whole second late before a claim lapses.
    ttl = 1.5
    claims = ClaimBook(store, FOLDER, ResponseCache(store), client.stop, time.time() - 1, ttl)
    asker = Asker(client, ResponseCache(store), claims)
    requests = [client.request([user_message(f"Q{n}?")]) for n in range(3)]
    seen_busy: list[tuple[float, bool]] = []

    async def ask_and_watch() -> list[CallOutcome]:
        started = time.monotonic()
        asking = asyncio.gather(*(asker.ask_unanswered(r) for r in requests))
        try:
            for _ in range(4):  # until two TTLs past the claims' taking (later under load)
                await asyncio.sleep(ttl / 2)
                rival = book(store, ttl=ttl)  # a claimer that lists afresh
                verdicts = await rival.claim_many([r.key for r in requests])
                seen_busy.append(
                    (
                        time.monotonic() - started,
                        all(v.kind is Kind.BUSY for v in verdicts.values()),
                    )
                )
        finally:
            answered.set()
        return await asking

    outcomes = run_on_gateway(ask_and_watch())
    assert all(o.final is not None and o.final.ok and o.final.text == "A" for o in outcomes)
    assert all(busy for _, busy in seen_busy), seen_busy
    assert len(seen_busy) == 4 and seen_busy[-1][0] >= 2 * ttl
    assert len(server.hits_for("slow")) == 3
    time.sleep(ttl / 3 + 0.3)  # a renewal landing after the end would show here
    mine = [r for r in records(store).values() if r.owner == claims.owner]
    assert [r.state for r in mine] == [ClaimState.DONE]
    assert mine[0].answered == {r.key for r in requests}


@pytest.mark.s3
def test_a_batch_of_claims_costs_a_few_requests_on_s3(s3_endpoint: str) -> None:
    """Counted at the client: a batch of 40 requests claimed, asked and ended in a handful of
    S3 requests (not several per request)."""
    bucket = f"claims-{uuid.uuid4().hex[:8]}"
    boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket=bucket)
    store = open_store(f"s3://{bucket}/x")
    calls = counted_s3_calls(store)
    claimer = book(store)

    async def batch() -> None:
        verdicts = await claimer.claim_many(KEYS)
        for verdict in verdicts.values():
            assert verdict.lease is not None
            await claimer.finish(verdict.lease, answered=True)

    run_on_gateway(batch())
    # Take a number (one create), list twice (before the first number, after it), end it.
    assert sum(calls.values()) <= 5, calls
    [record] = records(store).values()
    assert record.state is ClaimState.DONE and record.answered == set(KEYS)
    assert json.loads(json.dumps(sorted(record.answered))) == sorted(KEYS)
