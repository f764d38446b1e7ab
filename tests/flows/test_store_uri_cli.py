"""An S3 store URI whose prefix S3 would take literally (a `.` or `..` segment, an empty one), or
that URL parsing would cut (a query string, a fragment), or whose bucket name S3 does not take, is
refused when it is read, wherever it comes from (a panel's `store`, `--store` on every command):
exit 2, one line, and nothing lands in the bucket."""

from __future__ import annotations

import uuid
from pathlib import Path

import boto3
import pytest
import yaml
from typer.testing import CliRunner

from roadeval.benchmarks.registry import get_suite
from roadeval.flows.cli.main import app

pytestmark = [pytest.mark.s3, pytest.mark.usefixtures("inline")]

runner = CliRunner()


@pytest.fixture
def bucket(s3_endpoint: str) -> str:
    name = f"uris-{uuid.uuid4().hex[:8]}"
    boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket=name)
    return name


def keys_in(bucket: str, s3_endpoint: str) -> list[str]:
    page = boto3.client("s3", endpoint_url=s3_endpoint).list_objects_v2(Bucket=bucket)
    return [entry["Key"] for entry in page.get("Contents", [])]


def write_panel(path: Path, **extra: str) -> Path:
    body = {
        "name": "uris",
        "suites": [{"name": "trip", "demo": True}],
        "models": [{"model": "roadeval/random"}],
        "scoring": {"engine": "local"},
        "render": {"engine": "local"},
        **extra,
    }
    path.write_text(yaml.safe_dump(body), encoding="utf-8")
    return path


def run(*args: str) -> tuple[int, list[str]]:
    result = runner.invoke(app, list(args))
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.output.strip().splitlines()


ODD_PREFIXES = [
    ("/a/../b", "has a '..' segment: S3 keys are literal"),
    ("/./a", "has a '.' segment"),
    ("/a//c", "has an empty segment ('//')"),
    ("//a", "has an empty segment ('//')"),
    ("/a?versionId=1", "has a query string ('?'...)"),
    ("/a#frag", "has a fragment ('#'...)"),
]


@pytest.mark.parametrize(("tail", "why"), ODD_PREFIXES)
def test_an_odd_prefix_is_refused_and_nothing_lands(
    tmp_path: Path, bucket: str, s3_endpoint: str, tail: str, why: str
) -> None:
    uri = f"s3://{bucket}{tail}"
    from_panel = write_panel(tmp_path / "stored.yaml", store=uri)
    code, lines = run("run", "--panel", str(from_panel))
    # One message (rich wraps it past 200 columns), naming the file and the field.
    assert code == 2 and len(lines) <= 2, lines
    assert " ".join(lines).startswith(f"error: {from_panel}: store: store URI {uri!r} {why}")
    code, lines = run("run", "--panel", str(write_panel(tmp_path / "p.yaml")), "--store", uri)
    assert code == 2 and len(lines) <= 2, lines
    assert " ".join(lines).startswith(f"error: store URI {uri!r} {why}"), lines
    assert keys_in(bucket, s3_endpoint) == []


@pytest.fixture(scope="module")
def trip_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return get_suite("trip").generate_demo(tmp_path_factory.mktemp("trip") / "trip")


def test_every_command_refuses_it(
    tmp_path: Path, bucket: str, s3_endpoint: str, trip_source: Path
) -> None:
    uri = f"s3://{bucket}/a/../b"
    panel = str(write_panel(tmp_path / "p.yaml"))
    commands: list[list[str]] = [
        ["run", "--panel", panel],
        ["campaign", "--panel", panel, "--dry-run"],
        ["rescore", "--panel", panel],
        ["demo"],
        ["query", "select 1"],
        ["runs"],
        ["show"],
        ["report"],
        ["changes"],
        ["diff", "run-a", "run-b"],
        ["render", "trip", "--source", str(trip_source)],
        ["deploy", "--panel", panel],
    ]
    expected = f"store URI {uri!r} has a '..' segment"
    for args in commands:
        code, lines = run(*args, "--store", uri)
        assert code == 2, (args, lines)
        assert expected in " ".join(lines), (args, lines)
    assert keys_in(bucket, s3_endpoint) == []


def test_roadeval_store_is_held_to_the_same_check(
    bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROADEVAL_STORE", f"s3://{bucket}/a//b")
    code, lines = run("runs")
    assert code == 2, lines
    assert " ".join(lines).startswith("error: ROADEVAL_STORE: store URI"), lines


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("Bad_Bucket", "may hold only lowercase letters, digits, dots and hyphens"),
        ("192.168.0.1", "is an IP address"),
        ("ab", "is 2 characters long; a bucket name has 3 to 63"),
        ("-bucket", "must begin and end with a letter or a digit"),
        ("a..b", "may not hold two dots in a row"),
        ("b" * 64, "is 64 characters long"),
    ],
)
def test_a_malformed_bucket_name_is_one_line(
    tmp_path: Path, s3_endpoint: str, name: str, why: str
) -> None:
    """Before, the first request failed with four lines of botocore's regular expression."""
    panel = write_panel(tmp_path / "p.yaml")
    for args in (["run", "--panel", str(panel)], ["query", "select 1"]):
        code, lines = run(*args, "--store", f"s3://{name}/x")
        # One message (rich wraps it past 200 columns).
        assert code == 2 and len(lines) <= 2, lines
        message = " ".join(lines)
        assert message.startswith(f"error: store URI 's3://{name}/x': bucket {name!r} {why}")
