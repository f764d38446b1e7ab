"""Where a run's heavy items are scored, through the command: a small run scores them in its own
process without starting Ray, and says why in its manifest and `runs` row; a Ray that is not
the run's never breaks it (with no address given, the run starts its own local Ray even where
Ray's address file names a cluster a crashed or stopped `ray start` left behind)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
import yaml

from support.cli_process import run_cli
from support.clusters import free_port, loopback_only
from support.trip_panel import query_csv


def _task3_panel(tmp_path: Path, **scoring: object) -> Path:
    panel = tmp_path / "panel.yaml"
    body: dict[str, object] = {
        "suites": [{"name": "roadbench", "demo": True, "tasks": ["3"]}],
        "models": [{"model": "roadeval/do-nothing"}],
    }
    if scoring:
        body["scoring"] = scoring
    panel.write_text(yaml.safe_dump(body))
    return panel


@pytest.mark.usefixtures("inline")
def test_a_small_run_scores_its_heavy_items_without_starting_ray(tmp_path: Path) -> None:
    store = tmp_path / "store"
    cli = run_cli(
        ["run", "--panel", str(_task3_panel(tmp_path)), "--store", str(store)], tmp_path / "cli"
    )
    assert cli.process.returncode == 0, cli.stdout + cli.stderr
    assert "Failed to determine local IP" not in cli.stdout + cli.stderr  # Ray's, at its start
    [manifest] = (store / "runs").glob("*/manifest.json")
    scoring = json.loads(manifest.read_text())["engines"]["scoring"]
    assert (scoring["engine"], scoring["on_cluster"]) == ("local", 0)
    # The demo's ten task-3 items: milliseconds each, far from paying for a Ray's start.
    assert scoring["reason"].startswith("10 heavy items, about 0.0 CPU s to score: a local Ray")
    row = query_csv(str(store), "select scoring_engine, scoring_reason from runs")[1]
    assert row.startswith("local,") and "not the 7 s it takes to start and stop" in row


@pytest.mark.usefixtures("inline")
def test_a_stale_ray_address_file_does_not_fail_a_run_without_an_address(tmp_path: Path) -> None:
    if not loopback_only():
        pytest.skip("Ray starts only in a loopback-only network namespace (.ci/run)")
    # Ray asked for by name: a run this small would score in process by itself.
    panel = _task3_panel(tmp_path, engine="ray", num_cpus=1)
    # Ray's temporary folder, where `ray start` leaves `ray_current_cluster`: a short path of
    # the test's own (Ray's socket paths must stay under 108 characters).
    with tempfile.TemporaryDirectory(prefix="ray") as ray_tmp:
        # Ray's folder is `ray` in RAY_TMPDIR (/tmp/ray by default).
        (Path(ray_tmp) / "ray").mkdir()
        (Path(ray_tmp) / "ray" / "ray_current_cluster").write_text(f"127.0.0.1:{free_port()}\n")
        store = tmp_path / "store"
        cli = run_cli(
            ["run", "--panel", str(panel), "--store", str(store)],
            tmp_path / "cli",
            env={"RAY_TMPDIR": ray_tmp, "RAY_USAGE_STATS_ENABLED": "0"},
        )
    assert cli.process.returncode == 0, cli.stdout + cli.stderr
    assert "num_cpus and num_gpus must not be provided" not in cli.stdout + cli.stderr
    [manifest] = (store / "runs").glob("*/manifest.json")
    scoring = json.loads(manifest.read_text())["engines"]["scoring"]
    assert scoring["engine"] == "ray" and scoring["on_cluster"] > 0
