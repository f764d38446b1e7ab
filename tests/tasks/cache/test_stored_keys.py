"""A run's plans on a remote store answer look-ups from a listing of the cache where it reaches:
a page of it at once, another for every ten look-ups past it, an answer kept by the run itself
known at once; a look-up past the listing reads the store; a new run lists afresh."""

from __future__ import annotations

import uuid
from pathlib import Path

import boto3
import pytest

from roadeval.benchmarks.output import ModelOutput
from roadeval.storage.store import Listing, LocalStore, open_store
from roadeval.tasks.cache.responses import LOOKUPS_PER_PAGE, ResponseCache, StoredKeys
from roadeval.tasks.requests.request import ModelCall


class CountingStore(LocalStore):
    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.listings = 0

    def list_entries(
        self, prefix: str, start_after: str | None = None, limit: int | None = None
    ) -> Listing:
        self.listings += 1
        return super().list_entries(prefix, start_after, limit)


def key(n: int) -> str:
    return f"{n:064x}"


def answer(n: int) -> ModelCall:
    return ModelCall(request_key=key(n), model="m", attempt=1, output=ModelOutput(text="A"))


def test_the_listing_goes_a_page_at_a_time_as_look_ups_need_it(tmp_path: Path) -> None:
    store = CountingStore(tmp_path)
    cache = ResponseCache(store)
    for n in range(0, 5000, 2):  # 2,500 answers: even numbers
        cache.put(answer(n))
    listed = StoredKeys(store)
    # The first look-up lists the first page (1,000 keys: up to number 1998).
    assert listed.knows(ResponseCache.key(key(10))) is True
    assert listed.knows(ResponseCache.key(key(11))) is False
    assert store.listings == 1
    past = ResponseCache.key(key(4001))
    for _ in range(LOOKUPS_PER_PAGE):
        assert listed.knows(past) is None  # past the listing: the store is asked
    assert store.listings == 1
    listed.knows(past)  # owed a page: the next one is listed
    assert store.listings == 2 and not listed.complete
    listed.add(past)  # kept by the run itself
    assert listed.knows(past) is True


@pytest.mark.s3
def test_a_plan_on_s3_reads_only_what_the_listing_says_is_there(s3_endpoint: str) -> None:
    bucket = f"listing-{uuid.uuid4().hex[:8]}"
    boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket=bucket)
    store = open_store(f"s3://{bucket}/x")
    ResponseCache(store).put(answer(1))
    calls: list[str] = []
    store._client.meta.events.register(  # type: ignore[attr-defined]
        "before-call.s3", lambda model, **_: calls.append(model.name)
    )
    plan = ResponseCache(store, run_id="20260101T000000Z-aaaaaaaa")
    from roadeval.tasks.requests.request import ModelRequest

    def request(n: int) -> ModelRequest:
        req = ModelRequest(model="m", params={}, messages=[], attempt=1)
        req.__dict__["_key"] = key(n)  # a request known by its key alone (computed once)
        return req

    found = [plan.lookup(request(n)).answer for n in range(50)]
    assert [n for n, f in enumerate(found) if f is not None] == [1]
    # One listing of the journals (their packs), one of the entries, one read of the hit.
    assert calls == ["ListObjectsV2", "ListObjectsV2", "GetObject"]
    # Another run lists afresh (what was kept since is no older than its claims' reach).
    ResponseCache(store, run_id="20260101T000001Z-bbbbbbbb").lookup(request(2))
    assert calls.count("ListObjectsV2") == 4


class ReadCountingStore(LocalStore):
    """A folder that counts the reads of its objects and its listings."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.reads = 0
        self.lists = 0

    def get(self, key: str) -> bytes:
        self.reads += 1
        return super().get(key)

    def list(self, prefix: str) -> list[str]:
        self.lists += 1
        return super().list(prefix)


def test_a_dry_runs_look_ups_on_a_folder_read_only_the_answers_its_one_listing_holds(
    tmp_path: Path,
) -> None:
    """A dry run's plans (`counted`) list the cache once and read a key only when it is there:
    no missing file looked for per sample. An entry listed but unreadable is still a miss,
    reported, as the run would find it."""
    store = ReadCountingStore(tmp_path)
    writer = ResponseCache(store)
    writer.put(answer(1))
    writer.put(answer(2))
    (tmp_path / ResponseCache.key(key(2))).write_text("{truncated")
    run = "20260101T000000Z-aaaaaaaa"
    plans = [ResponseCache(store, run_id=run, counted=True) for _ in range(3)]
    lists = store.lists
    found = [plans[n % 3].lookup_key(key(n)).answer for n in range(1000)]
    assert [n for n, f in enumerate(found) if f is not None] == [1]
    assert store.reads == 2  # the two keys listed, nothing else
    assert store.lists - lists <= 2  # one listing of entries (and the journals) for all plans
    assert [c.request_key for c in plans[2].corrupt] == [key(2)]
    assert not plans[0].holds_none()
    # A store with no answer at all says so: a dry run then makes no key per sample.
    assert ResponseCache(LocalStore(tmp_path / "empty"), run_id=run, counted=True).holds_none()
    # A run's plans (not counted) keep a look-up per key on a folder.
    assert not ResponseCache(store, run_id=run).holds_none()
