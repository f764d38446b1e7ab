"""Session-wide engines for the tests (one Prefect server, one model server, one S3 server), and
the orchestrator each run test names: `under_prefect` or `inline` (see support.orchestrators).
The engines that cost CPU while idle end after their last test (support.engine_lifetimes).

The README's command runs the suite on two pytest-xdist workers: each is a session of its own
with its own engines, on ports the system chose, in folders of its own (its basetemp, its Ray
temporary folder); a module's tests share a worker (`--dist loadfile`), so that its
module-scoped fixtures are made once."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import roadeval  # noqa: F401 - applies the offline defaults before anything else loads

sys.path.insert(0, str(Path(__file__).parent))

from support import clusters, orchestrators
from support.clusters import ExternalClusters
from support.engine_lifetimes import EngineLifetimes, module_of
from support.model_server import ModelServer
from support.prefect_server import PrefectServer, start_prefect_server

REPO = Path(__file__).resolve().parents[1]

_ENGINES = EngineLifetimes()


@pytest.fixture(autouse=True, scope="session")
def prefect_logging_on_the_sessions_stderr() -> None:
    """Prefect's logging configured once, now: its console handler (on the root logger) keeps
    the sys.stderr of the moment Prefect first configures logging. Left to the first run that
    imports Prefect (the run's background imports), that is a CliRunner invocation's stream:
    library lines landed in that command's output, and later tests' in a closed stream."""
    from prefect.logging.configuration import ensure_logging_setup

    ensure_logging_setup()


def pytest_collection_finish(session: pytest.Session) -> None:
    """The tests to run are known: note each idle-costly engine's last user (on an xdist
    worker, among the engines whose users are in one unit of work)."""
    on_worker = hasattr(session.config, "workerinput")
    _ENGINES.plan(session.items, module_of if on_worker else None)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """An engine whose last user this test was ends now (see support.engine_lifetimes)."""
    try:
        return (yield)
    finally:
        _ENGINES.end_after(item)


@pytest.fixture(scope="session", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Demo suites and extracted media go to a per-session folder, not the user's cache."""
    base = tmp_path_factory.mktemp("roadeval-home")
    old = {
        k: os.environ.get(k)
        for k in ("ROADEVAL_DEMO_DIR", "ROADEVAL_MEDIA_CACHE", "ROADEVAL_STORE")
    }
    os.environ["ROADEVAL_DEMO_DIR"] = str(base / "demo")
    os.environ["ROADEVAL_MEDIA_CACHE"] = str(base / "media")
    os.environ.pop("ROADEVAL_STORE", None)
    yield
    for key, value in old.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(scope="session")
def prefect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrefectServer]:
    """One real Prefect server for the whole session (migrations run once), on 127.0.0.1."""
    server = start_prefect_server(tmp_path_factory.mktemp("prefect-home"), _free_port())
    yield server
    server.stop()


@pytest.fixture
def under_prefect(prefect_server: PrefectServer) -> Iterator[None]:
    """This test's runs, in this process and in CLI processes it starts, are Prefect flows
    reporting to the session's Prefect server; PREFECT_API_URL is set for this test only."""
    with orchestrators.prefect_api(prefect_server.api_url):
        yield


@pytest.fixture
def inline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """This test's runs are inline: no Prefect API, neither in the environment nor in a
    Prefect profile of the developer's."""
    missing = tmp_path_factory.getbasetemp() / "no-prefect-profiles" / "profiles.toml"
    with orchestrators.no_prefect_api(missing):
        yield


@pytest.fixture(scope="session", autouse=True)
def _choices_are_watched() -> Iterator[None]:
    """Every run's choice of an orchestrator is checked against the one its test named."""
    with orchestrators.watch_choices():
        yield


@pytest.fixture(autouse=True)
def _runs_name_their_orchestrator() -> Iterator[None]:
    """A test that runs a panel without naming its orchestrator (or on another one) fails, even
    where a CLI runner turned the failure into an exit code; and no test leaves PREFECT_API_URL
    changed for the tests after it."""
    before = os.environ.get("PREFECT_API_URL")
    earlier = orchestrators.take_problems()
    if earlier:  # a fixture of wider scope ran a panel before this test began
        pytest.fail("\n".join(earlier), pytrace=False)
    yield
    problems = orchestrators.take_problems()
    after = os.environ.get("PREFECT_API_URL")
    if after != before:
        problems.append(f"PREFECT_API_URL was {before!r} before the test and {after!r} after it")
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


# What a terminal's size is read from (rich reads COLUMNS as a terminal's width).
_TERMINAL_SIZE = ("COLUMNS", "LINES")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """An xdist worker about to start (on the controller): the terminal size the session was
    started with goes with it (see `_terminal_size_as_started`)."""
    node.workerinput["terminal_size"] = {k: os.environ.get(k) for k in _TERMINAL_SIZE}


@pytest.fixture(scope="session", autouse=True)
def _terminal_size_as_started(request: pytest.FixtureRequest) -> None:
    """On an xdist worker, COLUMNS and LINES as the session was started with: a worker starts
    with COLUMNS=80 LINES=24 set where the command had neither, and the CLI's tables (200
    columns wide when piped) then wrapped at 80, failing the tests that read them."""
    started = getattr(request.config, "workerinput", {}).get("terminal_size")
    for key, value in (started or {}).items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(scope="session", autouse=True)
def _ray_temp_folder() -> Iterator[None]:
    """Every Ray this session starts (its own, a run's, a CLI process's) keeps its files in a
    folder of this session's: not /tmp/ray, which every Ray on the machine shares (another
    xdist worker's, another session's), with the address file a `ray start` left there."""
    saved = os.environ.get("RAY_TMPDIR")
    # Short: Ray's socket paths live below it, and a socket path has at most 107 bytes.
    folder = tempfile.mkdtemp(prefix="ray-", dir="/tmp")
    os.environ["RAY_TMPDIR"] = folder
    yield
    if saved is None:
        os.environ.pop("RAY_TMPDIR", None)
    else:
        os.environ["RAY_TMPDIR"] = saved
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def ray_session() -> Iterator[None]:
    """Local Ray for the whole session (runs reuse it rather than starting their own); its
    workers import the test support modules too (test-only suites travel to them). A Ray of
    its own ("local"), never one found on the machine."""
    import ray

    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        object_store_memory=256 * 2**20,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": str(Path(__file__).parent)}},
    )
    yield
    ray.shutdown()


@pytest.fixture(scope="session")
def dask_address() -> Iterator[str]:
    """A Dask LocalCluster for the session (two worker processes on 127.0.0.1): runs and the
    render stage reach it by address instead of starting their own."""
    from roadeval.tasks.render.cluster import local_cluster

    cluster = local_cluster(2)
    yield cluster.scheduler_address
    cluster.close()


@pytest.fixture(scope="session")
def external_clusters(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExternalClusters]:
    """A `dask scheduler` with two `dask worker` processes, and a Ray head (`ray start --head`)
    with a worker node, as separate processes in working directories of their own, started
    together and left coming up (`ready()` waits); every worker hides the session's folder
    (see support.clusters). Ray needs the loopback-only namespace (skipped outside it)."""
    if not clusters.loopback_only():
        pytest.skip("Ray clusters start only in a loopback-only network namespace (.ci/run)")
    if not clusters.can_hide():
        pytest.skip("workers that hide the session's folder need root (unshare -m)")
    root = tmp_path_factory.mktemp("clusters")
    hidden = tmp_path_factory.getbasetemp()
    ray = clusters.RayCluster.start(root / "ray", cpus=2, hiding=hidden)
    try:
        dask = clusters.DaskCluster.start(root / "dask", workers=2, hiding=hidden)
    except BaseException:
        ray.stop()
        raise
    started = ExternalClusters(dask, ray, workers=2)
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="session")
def answering_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[clusters.RayCluster]:
    """A Ray head and a worker node with one CPU each (`ray start` twice), where a run answers
    its shards; the worker node hides the session's folder (see support.clusters) and may be
    killed and restarted by a test. Needs the loopback-only namespace (skipped outside it)."""
    if not clusters.loopback_only():
        pytest.skip("Ray clusters start only in a loopback-only network namespace (.ci/run)")
    if not clusters.can_hide():
        pytest.skip("workers that hide the session's folder need root (unshare -m)")
    root = tmp_path_factory.mktemp("answering-cluster")
    hidden = tmp_path_factory.getbasetemp()
    cluster = clusters.RayCluster.start(root, cpus=1, hiding=hidden, head_cpus=1)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def model_server() -> Iterator[ModelServer]:
    server = ModelServer().start()
    yield server
    server.stop()


@pytest.fixture
def server(model_server: ModelServer) -> ModelServer:
    """The session's model server with no rules and no hits recorded."""
    model_server.reset()
    return model_server


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """An S3-compatible server (moto) on 127.0.0.1, with credentials in the standard variables."""
    executable = shutil.which("moto_server") or str(Path(sys.executable).parent / "moto_server")
    if not Path(executable).exists():
        pytest.skip("moto_server is not installed (pip install -e '.[dev]')")
    port = _free_port()
    process = subprocess.Popen(
        [executable, "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError:
            time.sleep(0.1)
    else:
        process.kill()
        pytest.fail("moto_server did not start")
    saved = {
        k: os.environ.get(k)
        for k in (
            "AWS_ENDPOINT_URL",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_DEFAULT_REGION",
        )
    }
    os.environ.update(
        AWS_ENDPOINT_URL=endpoint,
        AWS_ACCESS_KEY_ID="test",
        AWS_SECRET_ACCESS_KEY="test",
        AWS_DEFAULT_REGION="us-east-1",
    )
    yield endpoint
    process.terminate()
    process.wait(timeout=10)
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
