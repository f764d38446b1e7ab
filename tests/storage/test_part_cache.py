"""Landed parts are read at most once per process from S3, and never when this process wrote
them: a run reads its parts back over several connections as it ends (counted at the client)."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterator

import boto3
import pytest

from roadeval.storage.catalog import connect
from roadeval.storage.landing import Part, land, read_table
from roadeval.storage.part_cache import forget_parts, keep_written_parts
from roadeval.storage.store import Store, open_store

from support.rows import record
from support.s3_calls import counted_s3_calls

pytestmark = pytest.mark.s3

RUN = "20260101T000000Z-00000000"


@pytest.fixture
def store(s3_endpoint: str) -> Iterator[Store]:
    bucket = f"parts-{uuid.uuid4().hex[:8]}"
    boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket=bucket)
    forget_parts()
    yield open_store(f"s3://{bucket}/x")
    forget_parts()


def _land(store: Store) -> None:
    for n in range(3):
        row = record("responses", run_id=RUN, request_key=f"{n:064x}", model=f"m{n}")
        land(store, f"{RUN}-shard-{n}", [Part("responses", [row], suite="s", model=f"m{n}")])


def _models(store: Store) -> list[str]:
    with connect(store, runs=[RUN], tables=["responses"]) as con:
        return [m for (m,) in con.execute("select model from responses order by model").fetchall()]


def _delete_parts(store: Store) -> None:
    """The parts' objects gone from the bucket, behind the store's back."""
    s3 = boto3.client("s3")
    bucket: str = store.bucket  # type: ignore[attr-defined]
    listed = s3.list_objects_v2(Bucket=bucket, Prefix="x/tables/responses/")
    keys = [item["Key"] for item in listed.get("Contents", [])]
    assert len(keys) == 3
    s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": key} for key in keys]})


def test_parts_this_process_wrote_are_read_back_without_a_request(store: Store) -> None:
    _land(store)
    seen = counted_s3_calls(store, "tables/")
    _delete_parts(store)  # read back from memory, or not at all
    assert _models(store) == ["m0", "m1", "m2"]
    assert read_table(store, "responses").num_rows == 3
    assert sum(seen.values()) == 0, seen


def test_a_part_is_fetched_once_whole_however_often_it_is_read(store: Store) -> None:
    _land(store)
    forget_parts()  # as a process that did not write them
    seen = counted_s3_calls(store, "tables/")
    assert _models(store) == ["m0", "m1", "m2"]
    assert seen == Counter({"GetObject": 3}), seen  # one per part, and no HEAD
    _delete_parts(store)  # later reads are from memory
    for _ in range(2):
        assert _models(store) == ["m0", "m1", "m2"]
    assert read_table(store, "responses").num_rows == 3
    assert seen == Counter({"GetObject": 3}), seen


def test_a_part_is_read_anew_once_the_cache_has_no_room(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    _land(store)
    monkeypatch.setenv("ROADEVAL_PART_CACHE_MB", "0")
    forget_parts()
    seen = counted_s3_calls(store, "tables/")
    for _ in range(2):
        assert _models(store) == ["m0", "m1", "m2"]
    assert seen == Counter({"GetObject": 6}), seen


def test_a_process_that_never_reads_its_parts_back_keeps_none(store: Store) -> None:
    """An answer worker lands its shards for the run's own process to read."""
    keep_written_parts(False)
    try:
        _land(store)
    finally:
        keep_written_parts(True)
    seen = counted_s3_calls(store, "tables/")
    assert _models(store) == ["m0", "m1", "m2"]
    assert seen == Counter({"GetObject": 3}), seen
