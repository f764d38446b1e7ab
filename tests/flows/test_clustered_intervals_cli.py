"""A run of the V2X-QA demo (4 scenes, 12 questions each) draws its suite-wide intervals and
paired differences by scene: the manifest records the method and the number of scenes, and
the run's summary, `roadeval show` and the HTML report say in one line what an interval is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from roadeval.benchmarks.registry import get_suite

from support.trip_panel import invoke, query_csv

pytestmark = pytest.mark.usefixtures("inline")

LEGEND = (
    "[a, b]: 95% interval. accuracy, ece, brier: percentile bootstrap over 4 scenes (48 items, "
    "each scene's drawn together); accuracy per task: Wilson score interval (items "
    "independent). Bootstrap: 400 resamples, seed 5."
)


def _flat(text: str) -> str:
    """Terminal output as one line: a rich caption wraps at the table's width."""
    return " ".join(text.split())


def test_a_v2xqa_run_draws_scenes_and_says_so(tmp_path: Path) -> None:
    source = get_suite("v2xqa").generate_demo(tmp_path / "v2x-src")
    panel = tmp_path / "panel.yaml"
    panel.write_text(
        yaml.safe_dump(
            {
                "name": "scenes",
                "suites": [{"name": "v2xqa", "source": str(source)}],
                "models": [
                    {"name": "random", "model": "roadeval/random", "params": {"seed": 0}},
                    {"name": "always-a", "model": "roadeval/always-a"},
                ],
                "scoring": {"engine": "local"},
                "render": {"engine": "local"},
                "intervals": {"resamples": 400, "seed": 5},
            }
        )
    )
    store = tmp_path / "store"
    result = invoke("run", "--panel", str(panel), "--store", str(store))
    assert result.exit_code == 0, result.output
    assert LEGEND in _flat(result.output)
    [run_id] = query_csv(str(store), "select run_id from runs")[1:]

    manifest = json.loads((store / "runs" / run_id / "manifest.json").read_text())
    record = manifest["intervals"]
    assert record["cluster_method"] == "cluster percentile bootstrap"
    wide = {h["metric"]: h for h in record["headlines"] if h["task"] == "*"}
    assert set(wide) == {"accuracy", "ece", "brier"}
    for method in wide.values():
        assert method["method"] == "cluster percentile bootstrap"
        assert (method["clusters"], method["items"], method["unit"]) == (4, 48, "scenes")
        # Every scene is asked in every task: one stratum.
        assert method["strata"] == []
    tasks = [h for h in record["headlines"] if h["task"] not in ("*", "")]
    assert len(tasks) == 12
    assert all((h["method"], h["clusters"], h["items"]) == ("wilson", None, 4) for h in tasks)

    pair = query_csv(
        str(store),
        "select n, ci_low, ci_high from metric_pairs where suite = 'v2xqa' and task = '*' "
        "and metric = 'accuracy'",
    )[1:]
    [line] = pair
    n, low, high = line.split(",")
    assert int(n) == 48 and float(low) < float(high)

    shown = invoke("show", run_id, "--store", str(store))
    assert shown.exit_code == 0, shown.output
    assert LEGEND in _flat(shown.output)

    page = tmp_path / "report.html"
    built = invoke("report", run_id, "--store", str(store), "--out", str(page))
    assert built.exit_code == 0, built.output
    assert LEGEND.replace("'", "&#39;") in page.read_text(encoding="utf-8")
