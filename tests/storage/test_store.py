"""The store: atomic publishes, listing, Parquet parts and DuckDB views, local and on S3."""

from __future__ import annotations

import uuid
from pathlib import Path

import boto3
import pytest

from roadeval.storage.catalog import query
from roadeval.storage.landing import Part, land, read_table
from roadeval.storage.records import ScoreRow
from roadeval.storage.store import LocalStore, S3Store, open_store
from roadeval.storage.tables import to_parquet, write_part

from support.rows import record


def _score(item: str, value: float, model: str = "openai/m") -> ScoreRow:
    return record(
        "scores",
        run_id="r1",
        suite="s",
        task="t",
        item_id=item,
        model=model,
        metric="correct",
        value=value,
        status="scored",
    )


def test_local_put_is_atomic_and_leaves_no_partial_file(tmp_path: Path, monkeypatch) -> None:
    store = LocalStore(tmp_path)
    store.put("a/b.txt", b"one")

    class Boom(Exception):
        pass

    def explode(*args, **kwargs):
        raise Boom

    monkeypatch.setattr("os.replace", explode)
    with pytest.raises(Boom):
        store.put("a/b.txt", b"two")
    assert store.get("a/b.txt") == b"one"
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["b.txt"]


def test_a_row_of_another_record_is_rejected_before_anything_is_written(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    with pytest.raises(TypeError, match="takes ScoreRow rows"):
        write_part(store, "scores", "x", [{"run_id": "r1", "bogus": 1}])
    assert store.list("tables") == []


def test_parts_are_partitioned_and_queryable(tmp_path: Path) -> None:
    store = open_store(str(tmp_path))
    land(store, "p0", [Part("scores", [_score("a", 1.0)], suite="s", model="openai/m")])
    land(store, "p1", [Part("scores", [_score("b", 0.0)], suite="s", model="openai/m")])
    assert store.list("tables/scores/") == [
        "tables/scores/suite=s/model=openai%2Fm/p0.parquet",
        "tables/scores/suite=s/model=openai%2Fm/p1.parquet",
    ]
    assert read_table(store, "scores").num_rows == 2
    _columns, rows = query(store, "select model, avg(value) from scores group by model")
    assert rows == [("openai/m", 0.5)]
    # Every declared view exists even when its table has no parts yet.
    _, empty = query(store, "select count(*) from responses")
    assert empty == [(0,)]


def test_open_store_rejects_unknown_schemes() -> None:
    with pytest.raises(ValueError, match="only a folder or s3"):
        open_store("gs://bucket/x")


@pytest.mark.s3
def test_s3_store_round_trip_and_query(s3_endpoint: str) -> None:
    bucket = f"roadeval-{uuid.uuid4().hex[:8]}"
    boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket=bucket)
    store = open_store(f"s3://{bucket}/team/eval")
    assert isinstance(store, S3Store)
    store.put("x/y.json", b"{}")
    assert store.exists("x/y.json") and not store.exists("x/z.json")
    assert store.get("x/y.json") == b"{}"
    land(store, "p0", [Part("scores", [_score("a", 1.0), _score("b", 1.0)], suite="s", model="m")])
    assert store.list("tables/") == ["tables/scores/suite=s/model=m/p0.parquet"]
    _, rows = query(store, "select count(*), sum(value) from scores")
    assert rows == [(2, 2.0)]
    raw = (
        boto3.client("s3", endpoint_url=s3_endpoint)
        .get_object(Bucket=bucket, Key="team/eval/tables/scores/suite=s/model=m/p0.parquet")["Body"]
        .read()
    )
    assert raw[:4] == b"PAR1" and raw == to_parquet("scores", [_score("a", 1.0), _score("b", 1.0)])
