"""`roadeval run` given a service that does not answer: an S3 endpoint that refuses connections,
credentials it refuses, a missing bucket, a Dask scheduler or Ray cluster address nobody listens
on, a Prefect API URL that does not answer. Each is exit 2 with one line naming what and where,
in seconds, before any model is called (the model server gets no request)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from support.model_server import ModelServer
from support.trip_panel import invoke

pytestmark = pytest.mark.usefixtures("inline")


def _dead_port() -> int:
    """A port nobody listens on (bound for a moment, then let go)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _panel(tmp_path: Path, server: ModelServer, **extra: object) -> Path:
    panel = {
        "name": "bad-engines",
        "suites": [{"name": "trip", "demo": True}],
        "models": [{"name": "answerer", "model": "openai/answerer", "api_base": server.api_base}],
        **extra,
    }
    path = tmp_path / "panel.yaml"
    path.write_text(yaml.safe_dump(panel))
    return path


def _refused(server: ModelServer, *args: str) -> str:
    """Run with `args`; the one error message (the terminal wraps it: joined again), after
    checking exit 2, no traceback and no call."""
    started = time.monotonic()
    result = invoke("run", *args)
    took = time.monotonic() - started
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    message = " ".join(result.output.split())
    assert message.startswith("error: ") and message.count("error:") == 1, result.output
    assert server.hits == []
    assert took < 20, f"refused only after {took:.1f} s"
    return message


@pytest.fixture
def folder_store(tmp_path: Path) -> str:
    return str(tmp_path / "store")


def test_a_dask_address_nobody_listens_on(
    tmp_path: Path, server: ModelServer, folder_store: str
) -> None:
    address = f"tcp://127.0.0.1:{_dead_port()}"
    panel = _panel(tmp_path, server)
    line = _refused(
        server, "--panel", str(panel), "--store", folder_store, "--dask-address", address
    )
    assert line == (
        f"error: Dask scheduler {address} (render.address, --dask-address): nobody listens "
        "there (connection refused); start it or fix the address"
    )
    # The same from the panel file.
    panel = _panel(tmp_path, server, render={"address": address})
    line = _refused(server, "--panel", str(panel), "--store", folder_store)
    assert line.startswith(f"error: Dask scheduler {address} (render.address")


def test_a_ray_address_nobody_listens_on(
    tmp_path: Path, server: ModelServer, folder_store: str
) -> None:
    address = f"127.0.0.1:{_dead_port()}"
    panel = _panel(tmp_path, server)
    line = _refused(
        server, "--panel", str(panel), "--store", folder_store, "--ray-address", address
    )
    assert line == (
        f"error: Ray cluster {address} (scoring.address, --ray-address): nobody listens there "
        "(connection refused); start it or fix the address"
    )
    panel = _panel(tmp_path, server, scoring={"address": "ray://127.0.0.1:10001"})
    line = _refused(server, "--panel", str(panel), "--store", folder_store)
    assert "through Ray Client the cluster cannot reach the store, a folder here" in line


def test_addresses_that_name_no_cluster(
    tmp_path: Path, server: ModelServer, folder_store: str
) -> None:
    panel = _panel(tmp_path, server)
    line = _refused(server, "--panel", str(panel), "--store", folder_store, "--dask-address", "x")
    assert line == (
        "error: --dask-address: Dask scheduler address 'x' names no host:port (e.g. "
        "tcp://10.0.0.5:8786)"
    )
    panel = _panel(tmp_path, server, scoring={"address": "http://head:6379"})
    line = _refused(server, "--panel", str(panel), "--store", folder_store)
    assert line.startswith(f"error: {panel}: scoring.address: Ray cluster address 'http://head")


def test_render_refuses_a_bad_or_dead_dask_address_in_one_line(tmp_path: Path) -> None:
    from roadeval.benchmarks.registry import get_suite

    source = get_suite("trip").generate_demo(tmp_path / "trip")
    dead = f"tcp://127.0.0.1:{_dead_port()}"
    expected = {
        "x": "error: --dask-address: Dask scheduler address 'x' names no host:port (e.g. "
        "tcp://10.0.0.5:8786)",
        "http://x:1": "error: --dask-address: Dask scheduler address 'http://x:1': use "
        "tcp://host:port (or tls://host:port)",
        dead: f"error: Dask scheduler {dead} (--dask-address): nobody listens there "
        "(connection refused); start it or fix the address",
    }
    for address, line in expected.items():
        started = time.monotonic()
        args = ["trip", "--source", str(source), "--store", str(tmp_path / "store")]
        result = invoke("render", *args, "--dask-address", address)
        assert result.exit_code == 2 and "Traceback" not in result.output, result.output
        assert " ".join(result.output.split()) == line
        assert time.monotonic() - started < 5
    assert not (tmp_path / "store" / "renders").exists()


def test_a_prefect_api_that_does_not_answer(
    tmp_path: Path, server: ModelServer, folder_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"http://127.0.0.1:{_dead_port()}/api"
    monkeypatch.setenv("PREFECT_API_URL", url)
    line = _refused(server, "--panel", str(_panel(tmp_path, server)), "--store", folder_store)
    assert line == (
        f"error: Prefect API {url} (PREFECT_API_URL): nobody listens there (connection "
        "refused); start the server (prefect server start) or unset it"
    )
    # Something answers there, but not as a Prefect API does (the model server: 404).
    monkeypatch.setenv("PREFECT_API_URL", server.root)
    line = _refused(server, "--panel", str(_panel(tmp_path, server)), "--store", folder_store)
    assert line.startswith(f"error: Prefect API {server.root} (PREFECT_API_URL): GET /health")


def test_an_s3_endpoint_that_refuses_connections(
    tmp_path: Path, server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    endpoint = f"http://127.0.0.1:{_dead_port()}"
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    store = "s3://roadeval-runs/team"
    line = _refused(server, "--panel", str(_panel(tmp_path, server)), "--store", store)
    assert line == (
        f"error: store {store} at {endpoint} (AWS_ENDPOINT_URL): nobody listens there "
        "(connection refused)"
    )


def test_a_missing_bucket(tmp_path: Path, server: ModelServer, s3_endpoint: str) -> None:
    store = "s3://roadeval-no-such-bucket/team"
    line = _refused(server, "--panel", str(_panel(tmp_path, server)), "--store", store)
    assert line == (
        f"error: store {store} at {s3_endpoint} (AWS_ENDPOINT_URL): no bucket "
        "'roadeval-no-such-bucket' there: create it, or fix the store URI"
    )


@dataclass(frozen=True)
class AuthS3:
    """An S3 endpoint (moto) that checks credentials, and one key it knows."""

    endpoint: str
    key_id: str
    secret: str


@pytest.fixture(scope="module")
def auth_s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthS3]:
    executable = shutil.which("moto_server") or str(Path(sys.executable).parent / "moto_server")
    if not Path(executable).exists():
        pytest.skip("moto_server is not installed (pip install -e '.[dev]')")
    port = _dead_port()
    endpoint = f"http://127.0.0.1:{port}"
    # Two requests unchecked (making a user and its key), every one after checked.
    env = {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "2"}
    process = subprocess.Popen(
        [executable, "-H", "127.0.0.1", "-p", str(port)],
        env=env,
        cwd=tmp_path_factory.mktemp("auth-s3"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        import boto3

        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("moto_server did not start")
                time.sleep(0.1)
        iam = boto3.client(
            "iam",
            endpoint_url=endpoint,
            aws_access_key_id="admin",
            aws_secret_access_key="admin",
            region_name="us-east-1",
        )
        iam.create_user(UserName="roadeval")
        key = iam.create_access_key(UserName="roadeval")["AccessKey"]
        yield AuthS3(endpoint, key["AccessKeyId"], key["SecretAccessKey"])
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.parametrize(
    ("which", "code"),
    [("wrong-secret", "SignatureDoesNotMatch"), ("unknown-key", "InvalidAccessKeyId")],
)
def test_credentials_the_endpoint_refuses(
    tmp_path: Path,
    server: ModelServer,
    auth_s3: AuthS3,
    monkeypatch: pytest.MonkeyPatch,
    which: str,
    code: str,
) -> None:
    key_id = auth_s3.key_id if which == "wrong-secret" else "AKIAUNKNOWNKEY000000"
    monkeypatch.setenv("AWS_ENDPOINT_URL", auth_s3.endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", key_id)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-" + auth_s3.secret)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    store = "s3://roadeval-runs/team"
    line = _refused(server, "--panel", str(_panel(tmp_path, server)), "--store", store)
    assert line.startswith(
        f"error: store {store} at {auth_s3.endpoint} (AWS_ENDPOINT_URL): the endpoint refused "
        f"the credentials ({code}: "
    )
    assert line.endswith("check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
    # The secret itself is never printed.
    assert auth_s3.secret not in line
