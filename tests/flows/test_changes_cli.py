"""`roadeval changes` and `roadeval diff` over two runs of a TRIP demo panel (offline baselines,
scored in process) between which one gold answer and one question changed and one item went:
what they print, that `changes RUN` and `diff BASELINE RUN` agree, and exit 2 on bad input."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from roadeval.benchmarks.registry import get_suite
from roadeval.flows.rerun import diff as run_diff
from roadeval.storage.store import open_store

from support.orchestrators import no_prefect_api
from support.trip_panel import invoke, query_csv

PANEL = "changes-test"


@dataclass(frozen=True)
class Runs:
    store: str
    panel: Path  # the panel of `first` and `second`
    other: str  # a run of another panel, first in the store
    first: str
    second: str
    items: int  # items of the first run


def _panel(path: Path, name: str, source: Path, models: list[dict[str, object]]) -> Path:
    panel = {
        "name": name,
        "scoring": {"engine": "local"},
        "suites": [{"name": "trip", "source": str(source)}],
        "models": models,
    }
    path.write_text(yaml.safe_dump(panel), encoding="utf-8")
    return path


def _edit(items: Path) -> None:
    """One gold answer changed (an item `always-a` had right), one question, one item gone."""
    rows = [json.loads(line) for line in items.read_text(encoding="utf-8").splitlines()]
    gold = next(n for n, row in enumerate(rows) if row["answer"] == "A")
    rows[gold]["answer"] = "B"
    asked = next(n for n in range(len(rows)) if n != gold)
    rows[asked]["question"] += " (to the nearest metre)"
    del rows[next(n for n in range(len(rows)) if n not in (gold, asked))]
    items.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    root = tmp_path_factory.mktemp("changes")
    source = get_suite("trip").generate_demo(root / "trip")
    n_items = len((source / "items.jsonl").read_text(encoding="utf-8").splitlines())
    store = str(root / "store")
    models: list[dict[str, object]] = [
        {"name": "random", "model": "roadeval/random", "params": {"seed": 0}},
        {"name": "always-a", "model": "roadeval/always-a"},
    ]
    other = _panel(root / "other.yaml", "other", source, models[1:])
    panel = _panel(root / "panel.yaml", PANEL, source, models)
    with no_prefect_api(root / "no-prefect-profiles" / "profiles.toml"):
        for path in (other, panel):
            result = invoke("run", "--panel", str(path), "--store", store)
            assert result.exit_code == 0, result.output
        _edit(source / "items.jsonl")
        result = invoke("run", "--panel", str(panel), "--store", store)
        assert result.exit_code == 0, result.output
    ids = [line.strip() for line in query_csv(store, "select run_id from runs order by started_at")]
    return Runs(store, panel, ids[1], ids[2], ids[3], n_items)


def _items_row(output: str, *counts: int) -> bool:
    """Whether the items table has trip's row with these counts (added, removed, changed:prompt,
    changed:reference, unchanged)."""
    cells = r"\s*│\s*".join(str(n) for n in counts)
    return re.search(rf"│\s*trip\s*│\s*{cells}\s*│", output) is not None


def test_changes_prints_what_the_rerun_landed(runs: Runs) -> None:
    # No RUN: the latest run in the store, the rerun.
    result = invoke("changes", "--store", runs.store)
    assert result.exit_code == 0, result.output
    out = result.output
    assert f"run {runs.second} against {runs.first} (panel {PANEL})" in out
    assert _items_row(out, 0, 1, 1, 1, runs.items - 3), out
    # always-a had the changed gold answer right: its verdict turned over, 1 to 0.
    assert re.search(r"│\s*trip\s*│\s*always-a\s*│\s*1\s*│\s*1\s*│\s*0\s*│", out), out
    assert re.search(r"│\s*trip\s*│\s*\*\s*│\s*always-a\s*│\s*accuracy\s*│\s*all\s*│", out), out
    assert "metrics moved: " in out


def test_changes_of_a_run_and_diff_with_its_baseline_agree(runs: Runs) -> None:
    for flag in ([], ["--all"]):
        changes = invoke("changes", runs.second, "--store", runs.store, *flag)
        diff = invoke("diff", runs.first, runs.second, "--store", runs.store, *flag)
        assert changes.exit_code == diff.exit_code == 0, changes.output + diff.output
        assert changes.output == diff.output
    store = open_store(runs.store)
    landed = run_diff.landed(store, runs.second)
    computed = run_diff.between(store, runs.first, runs.second)
    for rows in ("changes", "score_changes", "metric_deltas"):
        assert set(getattr(landed, rows)) == set(getattr(computed, rows)), rows
    lines = run_diff.summary_lines(landed)
    assert lines == run_diff.summary_lines(computed)
    assert "  trip: added 0, removed 1, changed:prompt 1, changed:reference 1, " in "\n".join(lines)


def test_diff_the_other_way_round(runs: Runs) -> None:
    result = invoke("diff", runs.second, runs.first, "--store", runs.store, "--all")
    assert result.exit_code == 0, result.output
    out = result.output
    assert f"run {runs.first} against {runs.second} (panel {PANEL})" in out
    # The removed item is back (added); the changed ones changed back.
    assert _items_row(out, 1, 0, 1, 1, runs.items - 3), out
    assert re.search(r"│\s*trip\s*│\s*always-a\s*│\s*1\s*│\s*0\s*│\s*1\s*│", out), out
    assert "... and" not in out


def test_the_metric_list_is_capped_unless_all(runs: Runs, monkeypatch: pytest.MonkeyPatch) -> None:
    moved = len(run_diff.moved_metrics(run_diff.landed(open_store(runs.store), runs.second)))
    assert moved > 3
    monkeypatch.setattr(run_diff, "METRIC_LIMIT", 3)
    capped = invoke("changes", runs.second, "--store", runs.store)
    assert f"metrics moved: {moved}" in capped.output
    assert f"... and {moved - 3} more (--all shows every one)" in capped.output
    every = invoke("changes", runs.second, "--store", runs.store, "--all")
    assert "... and" not in every.output
    assert len(every.output.splitlines()) == len(capped.output.splitlines()) + moved - 3 - 1


def test_a_run_without_a_baseline_says_so(runs: Runs) -> None:
    result = invoke("changes", runs.first, "--store", runs.store)
    assert result.exit_code == 0, result.output
    assert f"run {runs.first} has no baseline run" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["changes", "20990101T000000Z-nope"], "no run 20990101T000000Z-nope in the store"),
        (["diff", "nope", "{first}"], "no run nope in the store"),
        (["diff", "{first}", "nope"], "no run nope in the store"),
        (["diff", "{other}", "{second}"], "are of different panels"),
    ],
)
def test_bad_runs_exit_2_with_one_line(runs: Runs, args: list[str], message: str) -> None:
    named = [a.format(first=runs.first, second=runs.second, other=runs.other) for a in args]
    result = invoke(*named, "--store", runs.store)
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: ") and message in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output


def test_a_run_with_no_scores_is_refused_as_show_refuses_it(
    runs: Runs, tmp_path: Path, inline: None
) -> None:
    """A dry run (compared with its baseline, scored nothing) is not a run in which nothing
    changed: `changes` and `diff` either way round refuse it in one line, exit 2."""
    store = str(tmp_path / "store")
    shutil.copytree(runs.store, store)
    planned = invoke("campaign", "--panel", str(runs.panel), "--store", store, "--dry-run")
    assert planned.exit_code == 0, planned.output
    dry = query_csv(store, "select run_id from runs where status = 'planned'")[1]
    shown = invoke("show", dry, "--store", store)
    assert shown.exit_code == 2
    assert f"run {dry} has no scores (planned): nothing to show" in shown.output
    for args in (["changes", dry], ["diff", runs.second, dry], ["diff", dry, runs.second]):
        result = invoke(*args, "--store", store)
        assert result.exit_code == 2, (args, result.output)
        assert result.output == f"error: run {dry} has no scores (planned): nothing to compare\n"


def test_no_store_exits_2(tmp_path: Path) -> None:
    for args in (["changes"], ["diff", "a", "b"]):
        result = invoke(*args, "--store", str(tmp_path / "empty"))
        assert result.exit_code == 2, result.output
        assert "no roadeval store at" in result.output
