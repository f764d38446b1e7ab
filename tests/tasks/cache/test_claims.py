"""Claims on requests, in a folder and on S3: one holder at a time, expiry, takeover by one.

Expiry is checked on a clock the test moves (claims read `time.time()`, patched for the test), so
that "still held" and "expired" are exact however loaded the machine is; the renewals of an
asker's leases, which are timed by the loop, are checked on the real clock with their margins
spelled out."""

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
from roadeval.tasks.cache import claims as claims_module
from roadeval.tasks.cache.claims import RequestClaims
from roadeval.tasks.cache.responses import ResponseCache
from roadeval.tasks.calls.gateway import CallOutcome, ModelClient, run_on_gateway
from roadeval.tasks.requests.model_spec import ModelSpec
from roadeval.tasks.shard.asking import Asker

from support.clock import ManualClock
from support.model_server import ModelServer, Reply

KEY = "ab" + "c" * 62


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> ManualClock:
    """The wall clock claims expire by, moved only by the test (from the real time of day)."""
    clock = ManualClock(start=float(int(time.time())))
    monkeypatch.setattr(claims_module, "time", clock)
    return clock


def _exclusive_and_expiring(store: Store, clock: ManualClock) -> None:
    first = RequestClaims(store, "run-1", ttl=30)
    second = RequestClaims(store, "run-2", ttl=30)
    lease = first.try_acquire(KEY)
    assert lease is not None and lease.generation == 1
    assert second.try_acquire(KEY) is None  # held
    clock.advance(20.0)
    first.renew(lease)  # now held until 50 s
    clock.advance(29.5)  # past the first 30 s, within the renewed ones
    assert second.try_acquire(KEY) is None
    clock.advance(0.5)  # the holder stopped renewing: its claim expires, to the second
    taken = second.try_acquire(KEY)
    assert taken is not None and taken.generation == 2
    assert first.try_acquire(KEY) is None
    second.release(taken)
    again = first.try_acquire(KEY)
    assert again is not None


def test_claims_in_a_folder(tmp_path: Path, clock: ManualClock) -> None:
    _exclusive_and_expiring(open_store(str(tmp_path)), clock)


@pytest.mark.s3
def test_claims_on_s3(s3_endpoint: str, clock: ManualClock) -> None:
    bucket = f"claims-{uuid.uuid4().hex[:8]}"
    boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket=bucket)
    _exclusive_and_expiring(open_store(f"s3://{bucket}/x"), clock)


def test_only_one_of_many_racing_takers_wins_an_expired_claim(tmp_path: Path) -> None:
    store = open_store(str(tmp_path))
    assert RequestClaims(store, "dead", ttl=0.01).try_acquire(KEY) is not None
    time.sleep(0.05)
    won: list[object] = []
    barrier = threading.Barrier(8)

    def take(n: int) -> None:
        claims = RequestClaims(store, f"taker-{n}", ttl=30)
        barrier.wait()
        lease = claims.try_acquire(KEY)
        if lease is not None:
            won.append(lease)

    threads = [threading.Thread(target=take, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == 1


def test_a_claim_whose_holder_died_on_this_machine_is_free_at_once(tmp_path: Path) -> None:
    store = open_store(str(tmp_path))
    holder = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from roadeval.storage.store import open_store; "
            "from roadeval.tasks.cache.claims import RequestClaims; "
            f"print(RequestClaims(open_store(sys.argv[1]), 'gone', ttl=600).try_acquire('{KEY}'))",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "generation=1" in holder.stdout
    [claim] = (tmp_path / "cache" / "claims").rglob("*.1")
    assert json.loads(claim.read_text())["expires_at"] > time.time() + 500
    assert RequestClaims(store, "next", ttl=30).try_acquire(KEY) is not None


def test_an_askers_leases_are_renewed_while_its_calls_last(
    tmp_path: Path, server: ModelServer
) -> None:
    """A call outlasting several TTLs keeps its claim (one renewal task for all the asker's
    leases); once the answer is kept, every claim is gone and no late renewal puts one back."""
    store = open_store(str(tmp_path))
    # The replies wait until the test has watched: the calls last as long as the watch, however
    # slowly a loaded machine runs it.
    answer = threading.Event()
    server.rules["slow"] = lambda body, hit: Reply("A") if answer.wait(60) else Reply("late")
    client = ModelClient(ModelSpec(model="openai/slow", api_base=server.api_base))
    # Renewed every TTL/3 = 0.5 s: a renewal may come a whole second late before a claim lapses.
    ttl = 1.5
    asker = Asker(client, ResponseCache(store), RequestClaims(store, "holder", ttl=ttl))
    requests = [client.request([user_message(f"Q{n}?")]) for n in range(3)]
    rival = RequestClaims(store, "rival", ttl=30)
    seen_held: list[tuple[float, bool]] = []

    async def ask_and_watch() -> list[CallOutcome]:
        started = time.monotonic()
        asking = asyncio.gather(*(asker.ask_unanswered(r) for r in requests))
        try:
            for _ in range(4):  # until two TTLs past the claims' taking (later under load)
                await asyncio.sleep(ttl / 2)
                # The rival finds every claim still held, though their first TTL ran out.
                held = all([rival.try_acquire(r.key) is None for r in requests])
                seen_held.append((time.monotonic() - started, held))
        finally:
            answer.set()
        return await asking

    outcomes = run_on_gateway(ask_and_watch())
    assert all(o.final is not None and o.final.ok and o.final.text == "A" for o in outcomes)
    assert all(held for _, held in seen_held), seen_held
    # Watched past the first TTL (a claim left unrenewed would have been free by then).
    assert len(seen_held) == 4 and seen_held[-1][0] >= 2 * ttl
    assert len(server.hits_for("slow")) == 3
    time.sleep(ttl / 3 + 0.3)  # a renewal landing after the release would show here
    assert store.list("cache/claims/") == []
