"""An S3 store's concurrency: however many threads call it, no more requests are in flight than
its connection pool holds, so urllib3 never discards a connection ("Connection pool is full");
a listing's entries carry their tags and write times on the server's clock; many keys go in one
DeleteObjects."""

from __future__ import annotations

import logging
import threading
import time
import uuid

import boto3
import pytest

from roadeval.storage.store import S3Store, open_store

pytestmark = pytest.mark.s3


@pytest.fixture
def bucket(s3_endpoint: str) -> str:
    name = f"pool-{uuid.uuid4().hex[:8]}"
    boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket=name)
    return name


def test_many_threads_never_overflow_the_connection_pool(
    bucket: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("ROADEVAL_S3_CONCURRENCY", "4")
    store = open_store(f"s3://{bucket}/p")
    assert isinstance(store, S3Store) and store.concurrency == 4
    caplog.set_level(logging.WARNING, logger="urllib3")

    def work(n: int) -> None:
        for i in range(10):
            store.put(f"k/{n}/{i}", b"x" * 100)
            store.get(f"k/{n}/{i}")

    threads = [threading.Thread(target=work, args=(n,)) for n in range(24)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(store.list("k/")) == 240
    assert "Connection pool is full" not in caplog.text


def test_a_bad_concurrency_is_refused_naming_the_variable(
    bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROADEVAL_S3_CONCURRENCY", "many")
    with pytest.raises(ValueError, match="ROADEVAL_S3_CONCURRENCY='many'"):
        open_store(f"s3://{bucket}/p")


def test_entries_carry_tags_and_server_times_and_many_keys_go_at_once(bucket: str) -> None:
    store = open_store(f"s3://{bucket}/p")
    for n in range(5):
        store.put(f"e/{n}", f"v{n}".encode())
    listed = store.list_entries("e/", start_after="e/1", limit=2)
    assert [e.key for e in listed.entries] == ["e/2", "e/3"] and listed.truncated
    assert abs(listed.now - time.time()) < 60
    assert all(abs(e.modified - listed.now) < 60 for e in listed.entries)
    again = store.list_entries("e/")
    assert not again.truncated and len(again.entries) == 5
    store.put("e/0", b"v0")  # the same bytes: the same tag
    store.put("e/1", b"other")
    after = {e.key: e.etag for e in store.list_entries("e/").entries}
    before = {e.key: e.etag for e in again.entries}
    assert after["e/0"] == before["e/0"] and after["e/1"] != before["e/1"]
    store.delete_many([f"e/{n}" for n in range(5)] + ["e/missing"])
    assert store.list("e/") == []
