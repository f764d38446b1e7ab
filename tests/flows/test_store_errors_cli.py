"""A store that cannot be used, a query that would write, a run with nothing to do: each is one
clear error (exit 2), with no traceback and nothing written."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from support.trip_panel import invoke, trip_gold, write_panel

pytestmark = pytest.mark.usefixtures("under_prefect")


def _message(result: object) -> str:
    output = getattr(result, "output", "")
    assert "Traceback" not in output
    return " ".join(output.split())


def _baseline_panel(tmp_path: Path) -> Path:
    source, _ = trip_gold(tmp_path)
    return write_panel(tmp_path / "p.yaml", source, [{"model": "roadeval/always-a"}])


def test_a_store_that_is_a_file_is_refused(tmp_path: Path) -> None:
    panel = _baseline_panel(tmp_path)
    regular = tmp_path / "store.txt"
    regular.write_text("not a folder")
    for store in (regular, regular / "below"):
        result = invoke("run", "--panel", str(panel), "--store", str(store))
        assert result.exit_code == 2, result.output
        assert "is a file, not a folder" in _message(result)
    assert regular.read_text() == "not a folder"


def test_an_unreachable_s3_endpoint_fails_within_seconds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens here once the socket closes
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    panel = _baseline_panel(tmp_path)
    started = time.monotonic()
    result = invoke("run", "--panel", str(panel), "--store", "s3://nowhere/x")
    assert result.exit_code == 2
    assert f"store s3://nowhere/x at http://127.0.0.1:{port} (AWS_ENDPOINT_URL): nobody " in (
        _message(result)
    )
    assert time.monotonic() - started < 10


def test_a_panel_in_which_no_model_applies_is_an_error(tmp_path: Path) -> None:
    source, _ = trip_gold(tmp_path)
    models = [
        {"model": "roadeval/lane-rule"},  # a RoadBench baseline: no rule for TRIP
        {"model": "openai/x", "api_base": "http://127.0.0.1:9/v1", "suites": ["roadbench"]},
    ]
    store = tmp_path / "store"
    panel = write_panel(tmp_path / "p.yaml", source, models)
    result = invoke("run", "--panel", str(panel), "--store", str(store))
    assert result.exit_code == 2
    message = _message(result)
    assert "no model applies to any of its suites (trip)" in message
    assert "openai/x is limited to suites roadbench" in message
    assert not store.exists()


def test_query_on_a_missing_store_or_a_bad_uri_is_an_error(tmp_path: Path) -> None:
    missing = invoke("query", "--store", str(tmp_path / "nothing"), "select 1")
    assert missing.exit_code == 2 and "no roadeval store at" in _message(missing)
    assert not (tmp_path / "nothing").exists()
    bad = invoke("query", "--store", "gs://bucket/x", "select 1")
    assert bad.exit_code == 2 and "only a folder or s3://bucket/prefix" in _message(bad)


@pytest.mark.parametrize(
    "sql",
    [
        "copy (select * from scores) to '{out}'",
        "attach '{out}' as other",
        "create table t as select 1",
        "install httpfs",
        "set threads = 1",
        "export database '{out}'",
        "select 1; copy (select 1) to '{out}'",
    ],
)
def test_query_is_read_only(tmp_path: Path, sql: str) -> None:
    store = tmp_path / "store"
    assert (
        invoke("run", "--panel", str(_baseline_panel(tmp_path)), "--store", str(store)).exit_code
        == 0
    )
    out = tmp_path / "written.out"
    before = sorted(p.relative_to(store) for p in store.rglob("*"))
    result = invoke("query", "--store", str(store), sql.format(out=out))
    assert result.exit_code == 2
    assert "read-only" in _message(result)
    assert not out.exists()
    assert sorted(p.relative_to(store) for p in store.rglob("*")) == before


def test_file_functions_cannot_read_around_the_store(tmp_path: Path) -> None:
    store = tmp_path / "store"
    assert (
        invoke("run", "--panel", str(_baseline_panel(tmp_path)), "--store", str(store)).exit_code
        == 0
    )
    secret = tmp_path / "elsewhere.csv"
    secret.write_text("a\n1\n")
    result = invoke("query", "--store", str(store), f"select * from read_csv('{secret}')")
    assert result.exit_code == 2 and "file system operations are disabled" in _message(result)
