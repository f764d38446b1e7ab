"""Claims on requests, in a folder and on S3: one holder at a time, expiry, takeover by one."""

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
from roadeval.tasks.cache.claims import RequestClaims
from roadeval.tasks.cache.responses import ResponseCache
from roadeval.tasks.calls.gateway import CallOutcome, ModelClient, run_on_gateway
from roadeval.tasks.requests.model_spec import ModelSpec
from roadeval.tasks.shard.asking import Asker

from support.model_server import ModelServer, Reply

KEY = "ab" + "c" * 62


def _exclusive_and_expiring(store: Store) -> None:
    first = RequestClaims(store, "run-1", ttl=1.5)
    second = RequestClaims(store, "run-2", ttl=1.5)
    lease = first.try_acquire(KEY)
    assert lease is not None and lease.generation == 1
    assert second.try_acquire(KEY) is None  # held
    first.renew(lease)
    assert second.try_acquire(KEY) is None
    time.sleep(1.6)  # the holder stopped renewing: its claim expired
    taken = second.try_acquire(KEY)
    assert taken is not None and taken.generation == 2
    assert first.try_acquire(KEY) is None
    second.release(taken)
    again = first.try_acquire(KEY)
    assert again is not None


def test_claims_in_a_folder(tmp_path: Path) -> None:
    _exclusive_and_expiring(open_store(str(tmp_path)))


@pytest.mark.s3
def test_claims_on_s3(s3_endpoint: str) -> None:
    bucket = f"claims-{uuid.uuid4().hex[:8]}"
    boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket=bucket)
    _exclusive_and_expiring(open_store(f"s3://{bucket}/x"))


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
    server.rules["slow"] = lambda body, hit: Reply("A", delay_s=2.0)
    client = ModelClient(ModelSpec(model="openai/slow", api_base=server.api_base))
    asker = Asker(client, ResponseCache(store), RequestClaims(store, "holder", ttl=0.6))
    requests = [client.request([user_message(f"Q{n}?")]) for n in range(3)]
    rival = RequestClaims(store, "rival", ttl=30)
    seen_held: list[bool] = []

    async def ask_and_watch() -> list[CallOutcome]:
        asking = asyncio.gather(*(asker.ask_unanswered(r) for r in requests))
        for _ in range(6):  # 1.8 s: three TTLs past the claims' first expiry
            await asyncio.sleep(0.3)
            # The rival finds every claim still held, though 0.6 s TTLs ran out long ago.
            seen_held.extend(rival.try_acquire(r.key) is None for r in requests)
        return await asking

    outcomes = run_on_gateway(ask_and_watch())
    assert all(o.final is not None and o.final.ok for o in outcomes)
    assert seen_held and all(seen_held)
    assert len(server.hits_for("slow")) == 3
    time.sleep(0.5)  # a renewal landing after the release would show here
    assert store.list("cache/claims/") == []
