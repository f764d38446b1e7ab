"""A panel answered on a two-node Ray cluster given by address (`--answer-ray-address`), through
the real command, with an S3 store (moto) and the test model server: both nodes answer, every
request is sent once, one model's rpm and the run's budget hold over both nodes, a node killed
mid-run costs only what it had in flight, and a cluster that cannot answer is refused before
any call. The worker node hides the test's folders (support.clusters): its shards reached it
with the bytes of every image they show."""

from __future__ import annotations

import json
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml

from roadeval.benchmarks.registry import get_suite
from roadeval.storage.store import open_store

from support.cli_process import CliProcess, start_cli, wait_until
from support.clusters import RayCluster, free_port
from support.model_server import ModelServer, Reply, ServerLimits
from support.trip_panel import invoke, query_csv, trip_with_text_items

pytestmark = [pytest.mark.s3, pytest.mark.usefixtures("inline")]

# The TRIP demo's 43 items and this many text items more, per model.
EXTRA = 200
ITEMS = 43 + EXTRA
# The first model's limit: a request every 20 ms at most, over both nodes.
RPM = 3000
PRICED = {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}


@pytest.fixture
def bucket(s3_endpoint: str) -> str:
    name = f"cluster-{uuid.uuid4().hex[:8]}"
    boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket=name)
    return name


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return trip_with_text_items(tmp_path_factory.mktemp("trip-src"), EXTRA)


def _panel(tmp_path: Path, source: Path, server: ModelServer, **model: Any) -> Path:
    common = {"api_base": server.api_base, "max_concurrency": 4, **model}
    panel = {
        "name": "cluster",
        "suites": [{"name": "trip", "source": str(source)}],
        "models": [
            {"model": "openai/first", "name": "first", "rpm": RPM, **common},
            {"model": "openai/second", "name": "second", **common},
        ],
        "chunk_size": 20,
        "scoring": {"engine": "local"},
        "render": {"engine": "local"},
    }
    path = tmp_path / "panel.yaml"
    path.write_text(yaml.safe_dump(panel))
    return path


def _answer_every_item(server: ModelServer, delay_s: float = 0.0) -> None:
    for name in ("first", "second"):
        server.rules[name] = lambda body, hit: Reply("A", prompt_tokens=40, delay_s=delay_s)


def _run(tmp_path: Path, name: str, panel: Path, store: str, *extra: str) -> CliProcess:
    args = ["run", "--panel", str(panel), "--store", store, "--no-report", *extra]
    # A claim of a node killed mid-call holds its requests for 2 s, not 30.
    env = {"ROADEVAL_PROGRESS": "1", "ROADEVAL_CLAIM_TTL_S": "2"}
    return start_cli(args, tmp_path / name, env)


def _manifest(store: str) -> dict[str, Any]:
    opened = open_store(store)
    [key] = [k for k in opened.list("runs/") if k.endswith("manifest.json")]
    return json.loads(opened.get(key))


def _sent(server: ModelServer, model: str) -> Counter[str]:
    """How often each distinct request (its messages, images included) reached the server."""
    return Counter(json.dumps(hit["messages"], sort_keys=True) for hit in server.hits_for(model))


def _most_in_a_second(arrivals: list[float]) -> int:
    start, most = 0, 0
    for end, at in enumerate(arrivals):
        while at - arrivals[start] >= 1.0:
            start += 1
        most = max(most, end - start + 1)
    return most


def _ready(cluster: RayCluster) -> RayCluster:
    cluster.wait_ready()
    return cluster


SCORES = "select suite, model, task, metric, value from metrics order by all"


@pytest.mark.cluster
def test_a_panel_on_two_nodes_sends_each_request_once_under_one_rpm(
    answering_cluster: RayCluster, server: ModelServer, tmp_path: Path, bucket: str, source: Path
) -> None:
    _answer_every_item(server)
    # The server logs when each request arrives (and refuses none).
    server.limits["first"] = ServerLimits(rpm=RPM, enforce=False)
    panel = _panel(tmp_path, source, server)
    cluster = _ready(answering_cluster)
    store = f"s3://{bucket}/run"
    cli = _run(tmp_path, "cluster", panel, store, "--answer-ray-address", cluster.address)
    assert cli.wait(timeout=300) == 0, cli.stdout + cli.stderr

    for model in ("first", "second"):
        sent = _sent(server, model)
        assert len(sent) == ITEMS and set(sent.values()) == {1}, model  # each once
    # The rpm held over both nodes: 20 ms apart at the authority (two nodes each keeping it
    # alone would send twice as many a second), a few bunched on the wire.
    arrivals = server.admission_times("first")
    assert arrivals[-1] - arrivals[0] >= 0.9 * (ITEMS - 1) * 60 / RPM
    assert _most_in_a_second(arrivals) <= RPM / 60 + 5

    answering = _manifest(store)["engines"]["answering"]
    assert answering["engine"] == "ray" and answering["address"] == cluster.address
    nodes = answering["nodes"]
    assert len(nodes) == 2 and all(node["shards"] > 0 and node["calls"] > 0 for node in nodes)
    assert sum(node["calls"] for node in nodes) == 2 * ITEMS
    [row] = query_csv(
        store, "select answering_engine, answering_address, answering_nodes, n_calls from runs"
    )[1:]
    assert row == f"ray,{cluster.address},2,{2 * ITEMS}"
    assert "calls per node (2 nodes):" in cli.stderr


@pytest.mark.cluster
def test_a_budget_holds_over_both_nodes_and_a_resume_pays_nothing_twice(
    answering_cluster: RayCluster, server: ModelServer, tmp_path: Path, bucket: str, source: Path
) -> None:
    _answer_every_item(server)
    # The TRIP demo alone (43 items a model, three shards each): enough to spread.
    small = get_suite("trip").generate_demo(tmp_path / "trip-src")
    panel = _panel(tmp_path, small, server, params={"max_tokens": 8}, **PRICED)
    store = f"s3://{bucket}/budget"
    # The 86 answers cost $0.0036 (40 tokens in, 1 out): $0.0025 cannot pay them all, and fits
    # the largest request's worst case (a point cloud's views, about $0.0018) when empty.
    budget = "0.0025"
    cluster = _ready(answering_cluster)
    flags = ["--answer-ray-address", cluster.address]
    capped = start_cli(
        ["campaign", "--panel", str(panel), "--store", store, "--budget-usd", budget, *flags],
        tmp_path / "capped",
        {"ROADEVAL_PROGRESS": "0"},
    )
    assert capped.wait(timeout=300) == 3, capped.stdout + capped.stderr
    paid = len(server.hits_for("first")) + len(server.hits_for("second"))
    assert 0 < paid < 2 * 43
    [spent] = query_csv(store, "select sum(cost_usd) from costs")[1:]
    assert 0 < float(spent) <= float(budget)
    resumed = _run(tmp_path, "resumed", panel, store, *flags)
    assert resumed.wait(timeout=300) == 0, resumed.stdout + resumed.stderr
    for model in ("first", "second"):
        sent = _sent(server, model)
        assert len(sent) == 43 and set(sent.values()) == {1}, model


@pytest.mark.cluster
def test_a_node_killed_mid_run_loses_only_what_it_had_in_flight(
    answering_cluster: RayCluster, server: ModelServer, tmp_path: Path, bucket: str, source: Path
) -> None:
    _answer_every_item(server, delay_s=0.02)
    panel = _panel(tmp_path, source, server)
    local = str(tmp_path / "undisturbed")
    undisturbed = invoke("run", "--panel", str(panel), "--store", local, "--no-report")
    assert undisturbed.exit_code == 0, undisturbed.output
    local_engine = _manifest(local)["engines"]["answering"]
    assert local_engine == {"engine": "local", "address": None, "nodes": []}
    server.hits.clear()

    cluster = _ready(answering_cluster)
    store = f"s3://{bucket}/killed"
    flags = ["--answer-ray-address", cluster.address]
    cli = _run(tmp_path, "killed", panel, store, *flags)
    try:
        wait_until(lambda: len(server.hits) >= ITEMS // 2, timeout=120, what="a third answered")
        cluster.kill_worker()
        code = cli.wait(timeout=300)
        if code != 0:  # every shard could not go elsewhere: the same command resumes it
            assert code == 1, cli.stdout + cli.stderr
            again = _run(tmp_path, "resumed", panel, store, *flags)
            assert again.wait(timeout=300) == 0, again.stdout + again.stderr
    finally:
        cluster.restart_worker()
    assert query_csv(store, SCORES) == query_csv(local, SCORES)
    # Sent twice: at most what the killed node had in flight (4 per model at once, over the
    # whole cluster: the authority's concurrency).
    for model in ("first", "second"):
        sent = _sent(server, model)
        assert len(sent) == ITEMS, model
        assert sum(sent.values()) - ITEMS <= 4, (model, sum(sent.values()))
    cluster.wait_ready()


def test_a_dead_cluster_address_is_refused_before_any_call(
    server: ModelServer, tmp_path: Path, bucket: str, source: Path
) -> None:
    _answer_every_item(server)
    panel = _panel(tmp_path, source, server)
    dead = f"127.0.0.1:{free_port()}"
    result = invoke(
        "run", "--panel", str(panel), "--store", f"s3://{bucket}/dead", "--answer-ray-address", dead
    )
    assert result.exit_code == 2, result.output
    assert (
        f"Ray cluster {dead} (answering.address, --answer-ray-address): nobody listens there"
        in " ".join(result.output.split())
    )
    assert server.hits == []


def test_a_folder_store_with_a_cluster_is_refused_before_any_call(
    server: ModelServer, tmp_path: Path, source: Path
) -> None:
    _answer_every_item(server)
    panel = _panel(tmp_path, source, server)
    store = tmp_path / "store"
    result = invoke(
        "run", "--panel", str(panel), "--store", str(store), "--answer-ray-address", "10.0.0.9:6379"
    )
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert "Ray cluster 10.0.0.9:6379 (answering.address, --answer-ray-address)" in said
    assert "is not theirs to write: use an s3:// store" in said
    assert server.hits == [] and not (store / "runs").exists()


def test_an_answering_address_with_engine_local_is_refused_naming_the_field(
    server: ModelServer, tmp_path: Path, source: Path
) -> None:
    panel = yaml.safe_load(_panel(tmp_path, source, server).read_text())
    panel["answering"] = {"engine": "local", "address": "127.0.0.1:6379"}
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(panel))
    result = invoke("run", "--panel", str(path), "--store", str(tmp_path / "store"))
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert str(path) in said and "answering" in said and "engine: ray" in said
