"""A panel on the clusters a user already runs, given by address: point-cloud views drawn on a
`dask scheduler` with two `dask worker` processes, heavy scoring (the judge included) on a Ray
head with a worker node. Every worker hides the test's folders (support.clusters), so whatever
they drew or scored reached them as bytes. The renders are byte for byte a local run's, so are
the scores, the judge saw the same images and its rpm held, and the manifest and the `runs` row
say which engines and addresses the run used."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from roadeval.storage.store import open_store

from support.cli_process import CliProcess, start_cli
from support.clusters import ExternalClusters
from support.model_server import ModelServer, Reply, ServerLimits
from support.trip_panel import query_csv

pytestmark = pytest.mark.usefixtures("inline")

# The judge's limit: one request a second at most.
JUDGE_RPM = 60


def _panel(tmp_path: Path, server: ModelServer) -> Path:
    panel = {
        "name": "point-clouds",
        "suites": [{"name": "trip", "demo": True}, {"name": "stride", "demo": True}],
        "models": [{"name": "answerer", "model": "openai/answerer", "api_base": server.api_base}],
        "judge": {
            "name": "judge",
            "model": "openai/judge",
            "api_base": server.api_base,
            "rpm": JUDGE_RPM,
        },
        # Small batches: the scoring spreads over the worker node's two CPUs.
        "scoring": {"engine": "local", "batch_size": 2},
        "render": {"engine": "local"},
    }
    path = tmp_path / "panel.yaml"
    path.write_text(yaml.safe_dump(panel))
    return path


def _start(tmp_path: Path, name: str, panel: Path, *extra: str) -> tuple[CliProcess, Path]:
    store = tmp_path / name / "store"
    # A media cache of its own: every view is drawn by this run.
    env = {"ROADEVAL_MEDIA_CACHE": str(tmp_path / name / "media")}
    args = ["run", "--panel", str(panel), "--store", str(store), *extra, "--no-report"]
    return start_cli(args, tmp_path / name, env), store


def _finished(cli: CliProcess) -> None:
    assert cli.wait(timeout=300) == 0, cli.stdout + cli.stderr


def _renders(store: Path) -> dict[str, bytes]:
    opened = open_store(str(store))
    return {key: opened.get(key) for key in opened.list("renders/")}


def _judge_prompts(server: ModelServer) -> list[str]:
    return sorted(json.dumps(hit["messages"], sort_keys=True) for hit in server.hits_for("judge"))


def _manifest(store: Path) -> dict[str, Any]:
    return json.loads(next(store.glob("runs/*/manifest.json")).read_text())


def test_a_point_cloud_panel_on_clusters_by_address_is_a_local_runs_twin(
    external_clusters: ExternalClusters, server: ModelServer, tmp_path: Path
) -> None:
    server.rules["answerer"] = lambda body, hit: Reply("A")
    server.rules["judge"] = lambda body, hit: Reply('{"score": 7}')
    panel = _panel(tmp_path, server)
    # The local run goes while the clusters come up.
    cli, local = _start(tmp_path, "local", panel)
    clusters = external_clusters.ready()
    _finished(cli)
    local_prompts = _judge_prompts(server)
    server.hits.clear()
    server.limits["judge"] = ServerLimits(rpm=JUDGE_RPM, enforce=False)
    dask, ray = clusters.dask_address, clusters.ray_address
    cli, clustered = _start(
        tmp_path, "clusters", panel, "--dask-address", dask, "--ray-address", ray
    )
    _finished(cli)

    renders = _renders(clustered)
    assert len(renders) == 6 and renders == _renders(local)  # 3 scans, 2 views each
    query = "select suite, model, task, metric, value from metrics order by all"
    assert query_csv(str(clustered), query) == query_csv(str(local), query)
    # Six judged answers, judged again (another store) on the very images the model saw.
    assert len(local_prompts) == 6 and _judge_prompts(server) == local_prompts
    # Admitted 1 s apart (60 / rpm) whichever worker judged. On the wire one may arrive up to
    # a second late (the judge actor's first call sets up its client, on a loaded machine):
    # any three span one interval at least, and all six four (unlimited: milliseconds).
    arrivals = server.admission_times("judge")
    assert len(arrivals) == 6
    assert min(b - a for a, b in zip(arrivals, arrivals[2:], strict=False)) >= 1.0, arrivals
    assert arrivals[-1] - arrivals[0] >= 4.0, arrivals

    # The judge's answers were kept by the judge actor in the run's store (a folder here).
    judged = "select count(*) from responses where role = 'judge' and not cached"
    assert query_csv(str(clustered), judged)[1] == "6"
    engines = _manifest(clustered)["engines"]
    # Drawing's engine is the panel's (or the address's): no choice, so no reason recorded.
    assert engines["render"] == {"engine": "dask", "address": dask, "on_cluster": 3, "reason": None}
    # STRIDE's six judged and six trajectory items are the heavy ones.
    assert engines["scoring"] == {
        "engine": "ray",
        "address": ray,
        "on_cluster": 12,
        "reason": "a Ray cluster was given (scoring.address, --ray-address)",
    }
    assert engines["prefect_api_url"] is None  # inline
    assert _manifest(local)["engines"]["render"] == {
        "engine": "local",
        "address": None,
        "on_cluster": 0,
        "reason": None,
    }
    row = query_csv(
        str(clustered),
        "select render_engine, render_address, scoring_engine, scoring_address, "
        "prefect_api_url from runs",
    )
    assert row[1] == f"dask,{dask},ray,{ray},"
