"""What a run left out of its results is part of them: RoadBench rows skipped at load for a
missing image (`on_bad_item: skip`) and the items its lane-rule baseline has no rule for are
counted per suite, with the first reasons, in `show`, in the HTML report and in `runs` (before,
only the manifest had them: `show` said "items planned 14" and nothing more)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from roadeval.benchmarks.errors import BadItemPolicy
from roadeval.benchmarks.registry import get_suite
from roadeval.flows.cli.main import app

from support.html_tables import read_page

pytestmark = pytest.mark.usefixtures("inline")

runner = CliRunner()
TITLE = "left out of these results (not asked, not scored)"
# RoadBench's lane rule answers tasks 2 and 5 only.
LANE_RULE_TASKS = {"2", "5"}


def _cli(*args: str) -> Any:
    # Wide enough that no cell wraps: each reason reads on one line.
    return runner.invoke(app, list(args), env={"COLUMNS": "1000"}, catch_exceptions=False)


def _without_images(source: Path, folder: str, count: int) -> list[str]:
    """Delete the images of the first `count` rows of a task folder; their ids, in order."""
    rows = [
        json.loads(line) for line in (source / folder / "labels.jsonl").read_text().splitlines()
    ]
    ids = [str(row["id"]) for row in rows[:count]]
    for item_id in ids:
        (source / folder / f"{item_id}.png").unlink()
    return ids


@pytest.fixture
def run(tmp_path: Path) -> dict[str, Any]:
    """A run of RoadBench's demo with 2 + 4 rows' images missing, against the lane rule."""
    source = get_suite("roadbench").generate_demo(tmp_path / "rb")
    gone = [*_without_images(source, "task_1_2", 2), *_without_images(source, "task_3", 4)]
    panel = {
        "name": "skipping",
        "suites": [{"name": "roadbench", "source": str(source), "on_bad_item": "skip"}],
        "models": [{"model": "roadeval/lane-rule"}],
        "scoring": {"engine": "local"},
        "render": {"engine": "local"},
    }
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(panel))
    store = tmp_path / "store"
    result = _cli("run", "--panel", str(tmp_path / "p.yaml"), "--store", str(store))
    assert result.exit_code == 0, result.output
    kept = get_suite("roadbench").load(source, on_bad_item=BadItemPolicy.SKIP).items
    asked = [item for item in kept if item.task in LANE_RULE_TASKS]
    return {
        "store": store,
        "gone": gone,
        "kept": len(kept),
        "not_asked": len(kept) - len(asked),
        "tmp": tmp_path,
    }


def test_show_the_report_and_runs_count_what_was_left_out(run: dict[str, Any]) -> None:
    store, gone = str(run["store"]), run["gone"]
    skipped = f"{len(gone)} rows skipped at load (on_bad_item: skip), {run['kept']} items kept"
    not_asked = f"{run['not_asked']} items not asked"
    tasks = "the baseline has no rule for those tasks (tasks 1, 3, 4, 6)"

    shown = _cli("show", "--store", store)
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.stdout.split())
    assert TITLE in text
    assert skipped in text and f"{len(gone)} of them on field 'image'" in text
    # The first reason: the first row skipped, its file, line, item and why.
    assert f"first: {run['tmp']}/rb" in text and f"item '{gone[0]}'" in text
    assert "does not exist" in text
    assert not_asked in text and tasks in text

    out = run["tmp"] / "report.html"
    assert _cli("report", "--store", store, "--out", str(out)).exit_code == 0
    table = read_page(out.read_text()).table(TITLE)
    rows = [[cell.text for cell in row] for row in table.rows]
    assert ["roadbench", "every model", skipped, ""] in rows
    [reason] = [row for row in rows if row[2] == f"{len(gone)} of them on field 'image'"]
    assert f"item '{gone[0]}'" in reason[3] and "does not exist" in reason[3]
    assert ["roadbench", "roadeval/lane-rule", not_asked, tasks] in rows

    listed = _cli("runs", "--store", store, "--format", "csv")
    [row] = list(csv.DictReader(io.StringIO(listed.stdout)))
    assert (int(row["n_skipped"]), int(row["n_not_covered"])) == (len(gone), run["not_asked"])
    brief = f"roadbench: {len(gone)} rows skipped, {run['not_asked']} items not asked"
    assert row["left_out"].startswith(f"{brief} (first: ") and gone[0] in row["left_out"]
    table_text = " ".join(_cli("runs", "--store", store).stdout.split())
    assert brief in table_text
