"""The render stage on Dask: point-cloud views drawn on workers are the bytes drawn here, kept
in the media cache and the store and never drawn twice; a scan that cannot be drawn fails its
own item, named, while every other view is drawn; `roadeval render` draws ahead of a run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.suite import Suite
from roadeval.storage.store import open_store
from roadeval.tasks.render.cluster import RenderConfig
from roadeval.tasks.render.stage import render_items

from support.trip_panel import invoke

pytestmark = pytest.mark.usefixtures("under_prefect")


@pytest.fixture
def trip_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # A media cache of the test's own, so that every view starts undrawn.
    monkeypatch.setenv("ROADEVAL_MEDIA_CACHE", str(tmp_path / "media"))
    return get_suite("trip").generate_demo(tmp_path / "trip")


def _scan_items(suite: Suite, source: Path) -> list[Item]:
    items = suite.load(source).items
    scans = [item for item in items if suite.draw_job(item) is not None]
    assert len(scans) == 3
    return scans


def test_views_drawn_on_dask_are_kept_and_never_drawn_twice(
    trip_source: Path, tmp_path: Path, dask_address: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = get_suite("trip")
    items = _scan_items(suite, trip_source)
    store = open_store(str(tmp_path / "store"))
    config = RenderConfig(address=dask_address)
    first = render_items(suite, items, store, config)
    assert (first.drawn, first.from_cache, first.from_store, first.failed) == (3, 0, 0, [])
    for item in items:
        job = suite.draw_job(item)
        assert job is not None
        drawn_here = job.draw()  # in this process: the same bytes as on the workers
        images = first.renders[item.item_id]
        assert tuple(Path(ref.path).read_bytes() for ref in images) == drawn_here
        assert [store.get(job.store_key(view)) for view in job.views] == list(drawn_here)
    again = render_items(suite, items, store, config)
    assert (again.drawn, again.from_cache) == (0, 3)
    # Another machine (a fresh media cache) sharing the store takes the views from it.
    monkeypatch.setenv("ROADEVAL_MEDIA_CACHE", str(tmp_path / "other-media"))
    elsewhere = render_items(suite, items, store, config)
    assert (elsewhere.drawn, elsewhere.from_store) == (0, 3)
    assert elsewhere.renders == {
        item_id: tuple(
            ref.__class__(ref.path.replace("/media/", "/other-media/"), ref.sha256, ref.mime)
            for ref in refs
        )
        for item_id, refs in first.renders.items()
    }


def _break_scan(source: Path) -> Path:
    scan = sorted((source / "scans").glob("*.bin"))[1]
    scan.write_bytes(scan.read_bytes()[:-5])
    return scan


def test_a_scan_that_cannot_be_drawn_fails_only_its_item(
    trip_source: Path, tmp_path: Path, dask_address: str
) -> None:
    bad = _break_scan(trip_source)
    suite = get_suite("trip")
    items = suite.load(trip_source).items
    report = render_items(
        suite, items, open_store(str(tmp_path / "s")), RenderConfig(address=dask_address)
    )
    assert report.drawn == 2
    (problem,) = report.failed
    assert (problem.file, problem.field, problem.item_id) == (str(bad), "point_cloud", bad.stem)
    assert "multiple of 16" in problem.message
    assert len(report.renders) == len(items) - 1 and bad.stem not in report.renders


def _panel(tmp_path: Path, source: Path, dask_address: str, **entry: object) -> Path:
    panel = {
        "suites": [{"name": "trip", "source": str(source), **entry}],
        "models": [{"model": "roadeval/always-a"}],
        "render": {"address": dask_address},
    }
    path = tmp_path / "panel.yaml"
    path.write_text(yaml.safe_dump(panel))
    return path


def test_a_run_names_the_scan_it_cannot_draw_and_skip_runs_the_rest(
    trip_source: Path, tmp_path: Path, dask_address: str
) -> None:
    bad = _break_scan(trip_source)
    store = tmp_path / "store"
    result = invoke(
        "run", "--panel", str(_panel(tmp_path, trip_source, dask_address)), "--store", str(store)
    )
    message = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert message.startswith(f"error: {bad}, item '{bad.stem}', field 'point_cloud': ")
    assert "Traceback" not in result.output and not (store / "tables").exists()
    # The views that could be drawn were kept: the run with `skip` draws nothing again.
    panel = _panel(tmp_path, trip_source, dask_address, on_bad_item="skip")
    result = invoke("run", "--panel", str(panel), "--store", str(store))
    assert result.exit_code == 0, result.output
    manifest = json.loads(next(store.glob("runs/*/manifest.json")).read_text())
    (suite,) = manifest["suites"]
    assert suite["drawings"] == {
        "drawn": 0,
        "from_cache": 2,
        "from_store": 0,
        "failed": 1,
        "on_cluster": 0,
    }
    assert [entry.split(",")[0] for entry in suite["skipped_items"]] == [str(bad)]


def test_render_ahead_then_run_draws_nothing(
    trip_source: Path, tmp_path: Path, dask_address: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "store"
    result = invoke(
        "render", "trip", "--source", str(trip_source), "--store", str(store),
        "--dask-address", dask_address,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "views drawn for 3 inputs" in result.output
    shutil.rmtree(tmp_path / "media")
    monkeypatch.setenv("ROADEVAL_MEDIA_CACHE", str(tmp_path / "media"))
    panel = _panel(tmp_path, trip_source, dask_address)
    result = invoke("run", "--panel", str(panel), "--store", str(store))
    assert result.exit_code == 0, result.output
    manifest = json.loads(next(store.glob("runs/*/manifest.json")).read_text())
    assert manifest["suites"][0]["drawings"]["from_store"] == 3


def test_no_cluster_is_reached_when_nothing_is_to_be_drawn(tmp_path: Path) -> None:
    suite = get_suite("tbbench")
    items = suite.load(suite.generate_demo(tmp_path / "tb")).items[:4]
    # Nothing listens there: reaching for it would fail the stage.
    report = render_items(suite, items, None, RenderConfig(address="tcp://127.0.0.1:9"))
    assert len(report.renders) == 4 and report.drawn == 0


def test_a_local_cluster_starts_only_for_enough_drawings(
    trip_source: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import distributed

    started: list[int] = []

    class CountedCluster(distributed.LocalCluster):  # type: ignore[misc]
        def __init__(self, *args: object, **kwargs: object) -> None:
            started.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(distributed, "LocalCluster", CountedCluster)
    suite = get_suite("trip")
    items = _scan_items(suite, trip_source)
    few = render_items(suite, items, None, RenderConfig(n_workers=1))
    assert few.drawn == 3 and started == []  # three drawings: not worth a cluster's start
    shutil.rmtree(Path(str(trip_source)).parent / "media")
    many = render_items(suite, items, None, RenderConfig(n_workers=1, local_below=3))
    assert many.drawn == 3 and started == [1]
    assert {k: [r.sha256 for r in v] for k, v in many.renders.items()} == {
        k: [r.sha256 for r in v] for k, v in few.renders.items()
    }
