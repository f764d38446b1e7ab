"""`roadeval compare`, `roadeval history` and the store's site pages over five runs of one TRIP
panel against the tests' HTTP model server: `steady` answers the same every run, `drifter`
answers every item right in runs 1-2 and half of them wrong from run 3 on (same items, same
model string), `switcher` changes its model string at run 3 and answers worse. Every run sends
each model a new `seed`, so each run asks every model again (as a panel whose answers may not be
reused would) rather than reusing the stored answers."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from support.model_server import ModelServer, Reply
from support.orchestrators import no_prefect_api
from support.trip_panel import invoke, query_csv, seen_by_model, trip_gold

PANEL = "watch"
RUNS = 5
DRIFT_FROM = 3  # the first run in which drifter answers differently


@dataclass(frozen=True)
class Runs:
    store: Path
    panel: Path
    ids: list[str]  # oldest first


def _wrong(letter: str) -> str:
    return "B" if letter == "A" else "A"


def _half(seen: tuple[str, tuple[str, ...]]) -> bool:
    return hashlib.sha256(repr(seen).encode()).digest()[0] % 2 == 0


def _panel(path: Path, source: Path, server: ModelServer, run: int) -> Path:
    switcher = "openai/switcher-old" if run < DRIFT_FROM else "openai/switcher-new"
    models = [
        {"name": "steady", "model": "openai/steady"},
        {"name": "drifter", "model": "openai/drifter"},
        {"name": "switcher", "model": switcher},
    ]
    panel = {
        "name": PANEL,
        "scoring": {"engine": "local"},
        "suites": [{"name": "trip", "source": str(source)}],
        "models": [{**m, "api_base": server.api_base, "params": {"seed": run}} for m in models],
    }
    path.write_text(yaml.safe_dump(panel), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, model_server: ModelServer) -> Iterator[Runs]:
    model_server.reset()
    root = tmp_path_factory.mktemp("history")
    source, gold = trip_gold(root)
    store = root / "store"
    run = {"number": 1}

    def steady(body: dict[str, Any], hit: int) -> Reply:
        seen = seen_by_model(body["messages"])
        return Reply(gold[seen] if _half(seen) else _wrong(gold[seen]))

    def drifter(body: dict[str, Any], hit: int) -> Reply:
        seen = seen_by_model(body["messages"])
        changed = run["number"] >= DRIFT_FROM and _half(seen)
        return Reply(_wrong(gold[seen]) if changed else gold[seen])

    def switcher(body: dict[str, Any], hit: int) -> Reply:
        seen = seen_by_model(body["messages"])
        return Reply(_wrong(gold[seen]) if "new" in body["model"] else gold[seen])

    model_server.rules.update(
        {
            "steady": steady,
            "drifter": drifter,
            "switcher-old": switcher,
            "switcher-new": switcher,
        }
    )
    panel = root / "panel.yaml"
    third = ""
    with no_prefect_api(root / "no-prefect-profiles" / "profiles.toml"):
        for number in range(1, RUNS + 1):
            run["number"] = number
            _panel(panel, source, model_server, number)
            # The last run is compared with the third, not the one before it: history then
            # compares runs 4 and 5 itself, from their items.
            against = ["--against", third] if number == RUNS else []
            result = invoke("run", "--panel", str(panel), "--store", str(store), *against)
            assert result.exit_code == 0, result.output
            if number == DRIFT_FROM:
                third = _latest(store)
    ids = [
        line.strip()
        for line in query_csv(str(store), "select run_id from runs order by started_at")[1:]
    ]
    assert len(ids) == RUNS
    yield Runs(store, panel, ids)
    model_server.reset()


def _latest(store: Path) -> str:
    return query_csv(str(store), "select run_id from runs order by started_at desc")[1].strip()


def _headline(out: str, model: str) -> str:
    """The line of the compare table for trip x `model` x accuracy (suite-wide)."""
    found = re.search(rf"│\s*trip\s*│\s*\*\s*│\s*{model}\s*│\s*accuracy ↑\s*│[^\n]*", out)
    assert found, out
    return found.group(0)


def test_compare_pairs_the_unchanged_items_and_says_which_moves_are_beyond_noise(
    runs: Runs,
) -> None:
    before, after = runs.ids[DRIFT_FROM - 2], runs.ids[DRIFT_FROM - 1]
    result = invoke("compare", before, after, "--store", str(runs.store))
    assert result.exit_code == 0, result.output
    out = result.output
    assert "headline metrics, paired over the items both runs scored unchanged" in out
    drifter = _headline(out, "drifter")
    # Every item right before, about half after: worse, beyond noise, items listed.
    assert re.search(r"│\s*1\s*│\s*0\.\d+\s*│\s*-0\.\d+ \[-0\.\d+, -0\.\d+\]", drifter), drifter
    assert "worse" in drifter
    assert "noise" in _headline(out, "steady")
    assert re.search(r"trip x drifter: \d+ items regressed: ", out), out
    # The diff it grew from follows, unchanged: its items table.
    assert "metrics moved: " in out
    # `diff` is the same command.
    same = invoke("diff", before, after, "--store", str(runs.store))
    assert same.exit_code == 0 and same.output == out
    # `changes RUN` prints what `compare BASELINE RUN` does.
    landed = invoke("changes", after, "--store", str(runs.store))
    assert landed.output == out


def test_compare_as_json_agrees_with_the_landed_comparisons(runs: Runs) -> None:
    before, after = runs.ids[DRIFT_FROM - 2], runs.ids[DRIFT_FROM - 1]
    result = invoke("compare", before, after, "--store", str(runs.store), "--format", "json")
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    assert (found["run_a"], found["run_b"], found["panel"]) == (before, after, PANEL)
    rows = {(r["model"], r["task"], r["metric"]): r for r in found["headlines"]}
    drifter = rows[("drifter", "*", "accuracy")]
    assert drifter["significant"] and drifter["verdict"] == "worse"
    assert drifter["baseline_value"] == 1.0 and drifter["ci_high"] < 0
    assert drifter["regressed"] == len(found["regressed"]["trip x drifter"]) > 0
    assert rows[("steady", "*", "accuracy")]["difference"] == 0.0
    assert not rows[("steady", "*", "accuracy")]["significant"]
    # The run landed the same rows against its baseline.
    landed = query_csv(
        str(runs.store),
        f"select model, difference, ci_low, ci_high, significant from comparisons "
        f"where run_id = '{after}' and task = '*' and metric = 'accuracy' order by model",
    )
    by_model = {line.split(",")[0]: line.split(",")[1:] for line in landed[1:]}
    assert float(by_model["drifter"][0]) == pytest.approx(drifter["difference"])
    assert float(by_model["drifter"][1]) == pytest.approx(drifter["ci_low"])
    assert by_model["steady"][3] == "False"


def test_history_flags_the_drifting_model_and_only_it(runs: Runs) -> None:
    result = invoke("history", "--panel", str(runs.panel), "--store", str(runs.store))
    assert result.exit_code == 0, result.output
    out = result.output
    assert f"panel {PANEL}: {RUNS} finished runs, oldest first" in out
    # Run 5 landed its comparisons against run 3: runs 4 and 5 were compared now.
    assert "1 consecutive pair had no comparison landed and was compared now" in out
    table = re.search(r"drift: 1\s*\n(.*?)(?:\nhistory page|\Z)", out, re.S)
    assert table, out
    flagged = table.group(1)
    assert re.search(rf"│\s*{DRIFT_FROM - 1} → {DRIFT_FROM}\s*│\s*trip\s*│\s*drifter\s*│", flagged)
    assert "steady" not in flagged and "switcher" not in flagged
    assert max(len(line) for line in out.splitlines()) <= 120

    def trend(model: str) -> str:
        found = re.search(rf"│\s*trip\s*│\s*{model}\s*│\s*accuracy ↑[^\n]*", out)
        assert found, out
        return found.group(0)

    # The switcher moved too, beyond noise, but its model string changed: a move, no drift.
    assert re.search(r"1 of 4\s*│\s*-\s*│", trend("switcher")), out
    assert re.search(r"0 of 4\s*│\s*-\s*│", trend("steady")), out
    assert re.search(rf"1 of 4\s*│\s*run {DRIFT_FROM}\s*│", trend("drifter")), out
    # Every run shown with --runs 5: the drifter's move marked worse in run 3's column only.
    every = invoke("history", "--panel", PANEL, "--store", str(runs.store), "--runs", "5")
    assert every.exit_code == 0, every.output
    line = re.search(r"│\s*trip\s*│\s*drifter\s*│\s*accuracy ↑[^\n]*", every.output)
    assert line and line.group(0).count("▼") == 1, every.output
    assert (runs.store / "reports" / "panels" / f"{PANEL}.html").exists()


def test_history_of_an_unknown_panel_is_bad_input(runs: Runs, tmp_path: Path) -> None:
    result = invoke("history", "--panel", "nope", "--store", str(runs.store))
    assert result.exit_code == 2
    assert "panel 'nope' has no finished run in the store" in result.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [\n", encoding="utf-8")
    result = invoke("history", "--panel", str(bad), "--store", str(runs.store))
    assert result.exit_code == 2
    assert f"{bad}: line 2, column 1: not valid YAML" in result.output
    assert "Traceback" not in result.output


@contextmanager
def _chromium() -> Iterator[Any]:
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("no chromium on this machine: `apt-get install -y chromium` (.ci/run does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            yield browser.new_page(viewport={"width": 1300, "height": 900})
        finally:
            browser.close()


def test_the_index_and_history_pages_link_to_each_other_and_to_the_reports(
    runs: Runs, tmp_path: Path
) -> None:
    reports = runs.store / "reports"
    # Copied elsewhere: the links are relative, so the folder is a site wherever it is.
    site = tmp_path / "site"
    shutil.copytree(reports, site)
    errors: list[str] = []
    with _chromium() as page:
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto((site / "index.html").as_uri(), wait_until="load")
        page.screenshot(path=str(tmp_path / "index.png"), full_page=True)
        listed = page.locator("table[data-kind='runs'] tbody tr").count()
        page.get_by_role("link", name=PANEL, exact=True).first.click()
        page.wait_for_load_state("load")
        assert page.url == (site / "panels" / f"{PANEL}.html").as_uri()
        page.screenshot(path=str(tmp_path / "history.png"), full_page=True)
        notes = page.locator("section#drift p.note").all_inner_texts()
        flags = page.locator("section#drift table[data-kind='steps'] tbody tr").all_inner_texts()
        figures = page.locator("section#trends figure svg").count()
        page.get_by_role("link", name=runs.ids[-1]).click()
        page.wait_for_load_state("load")
        assert page.url == (site / f"{runs.ids[-1]}.html").as_uri()
        assert runs.ids[-1] in page.title()
        page.go_back()
        page.get_by_role("link", name="all runs").click()
        page.wait_for_load_state("load")
        assert page.url == (site / "index.html").as_uri()
    assert listed == RUNS
    # The drift was between runs 2 and 3, not in the latest run: a flag in the table only.
    assert notes == ["no drift in the latest run"], notes
    assert len(flags) == 1 and "drifter" in flags[0], flags
    assert figures >= 1
    assert errors == []
