"""`roadeval report` and `roadeval show` over the demo run: the run ends with its leaderboards and
its report; the report opens in headless Chromium with no console error and no request but its
own file, and its leaderboard numbers are the store's; `show` prints the run's summary again,
counts as integers; bad input is one line and exit 2."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from roadeval.benchmarks.registry import get_suite, load_suite
from roadeval.storage.catalog import query
from roadeval.storage.store import open_store
from roadeval.tasks.results.formats import SuiteRules

from support.cli_process import ROADEVAL
from support.html_tables import Page, read_page
from support.orchestrators import no_prefect_api
from support.trip_panel import invoke, query_csv, trip_gold, write_panel


@dataclass(frozen=True)
class Demo:
    store: Path
    run_id: str
    output: str


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    root = tmp_path_factory.mktemp("report-demo")
    store = root / "store"
    with no_prefect_api(root / "no-prefect-profiles" / "profiles.toml"):
        result = invoke("demo", "--store", str(store))
    assert result.exit_code == 0, result.output
    [run_id] = query_csv(str(store), "select run_id from runs")[1:]
    return Demo(store, run_id, result.output)


def _between(text: str, start: str, end: str) -> str:
    return text[text.index(start) : text.index(end)]


def _table_rows(text: str, title: str) -> list[list[str]]:
    """The cells of the table under `title` (from its title to its bottom rule), row by
    printed line."""
    lines = text.splitlines()
    lines = lines[next(i for i, line in enumerate(lines) if line.rstrip() == title) :]
    end = next(i for i, line in enumerate(lines) if line.startswith("└"))
    return [
        [cell.strip() for cell in line.split("│")[1:-1]]
        for line in lines[:end]
        if line.startswith("│")
    ]


def _count_or_cost(cell: str) -> bool:
    return cell.replace(",", "").isdigit() or re.fullmatch(r"\$\d+(\.\d+)?", cell) is not None


# Every suite x model the demo runs (its panel's models that answer the suite).
DEMO_PAIRS = {
    ("trip", "random"),
    ("trip", "always-a"),
    ("roadbench", "random"),
    ("roadbench", "lane-rule"),
    ("roadbench", "always-2"),
    ("roadbench", "do-nothing"),
    ("tbbench", "random"),
    ("v2xqa", "random"),
    ("v2xqa", "always-a"),
    ("stride", "random"),
}


def test_a_run_leads_with_its_leaderboards_and_ends_with_its_report(demo: Demo) -> None:
    out = demo.output
    first = out.index("roadbench: leaderboard")
    assert first < out.index("trip: leaderboard") < out.index("run health")
    # The per-task detail is `show --detail`'s.
    assert "metrics per task" not in out and "per slice" not in out
    # The health table, read by its own bounds (the left-out table follows it): each row's
    # suite and model whole, its counts integers, its cost in dollars.
    rows = _table_rows(out, "run health")
    assert {(row[0], row[1]) for row in rows} == DEMO_PAIRS
    assert all(_count_or_cost(cell) for row in rows for cell in row[2:]), rows
    boards = _between(out, "roadbench: leaderboard", "run health").splitlines()
    counted = [line.split("│")[-4:-1] for line in boards if line.startswith("│")]
    # A row wraps where intervals are long: its second line has no counts.
    counted = [row for row in counted if any(cell.strip() for cell in row)]
    assert counted and all(cell.strip().isdigit() for row in counted for cell in row)
    report = demo.store / "reports" / f"{demo.run_id}.html"
    assert f"report: {report}" in out
    assert report.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def _leaderboard_cells(html: str) -> dict[tuple[str, str, str, str], tuple[str, float]]:
    page = read_page(html)
    cells = {}
    for table in page.tables:
        if table.kind != "leaderboard":
            continue
        for row in table.rows:
            for cell in row:
                a = cell.attrs
                if "data-metric" in a:
                    key = (a["data-suite"], a["data-model"], a["data-task"], a["data-metric"])
                    cells[key] = (cell.text, float(a["data-value"]))
    return cells


@contextmanager
def _chromium(page_file: Path, width: int = 1280) -> Iterator[tuple[Any, list[str], list[str]]]:
    """The report opened in headless Chromium: the page, its console errors, its requests."""
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("no chromium on this machine: `apt-get install -y chromium` (.ci/run does)")
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    requests: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: requests.append(r.url))
            page.goto(page_file.resolve().as_uri(), wait_until="load")
            yield page, errors, requests
        finally:
            browser.close()


def test_the_report_opens_offline_in_chromium_and_shows_the_stores_numbers(
    demo: Demo, tmp_path: Path
) -> None:
    page_file = demo.store / "reports" / f"{demo.run_id}.html"
    url = page_file.resolve().as_uri()
    shot = tmp_path / "report.png"
    with _chromium(page_file) as (page, errors, requests):
        page.screenshot(path=str(shot), full_page=True)
        html = page.content()
        # The one script sorts: a click on trip's accuracy orders its rows ascending.
        heading = page.locator("table.leaderboard", has_text="trip: leaderboard").locator(
            "th", has_text="accuracy"
        )
        heading.first.click()
        order = page.locator(
            "table.leaderboard:has(caption:text-is('trip: leaderboard')) td[data-metric='accuracy']"
        ).evaluate_all("cells => cells.map(c => parseFloat(c.dataset.value))")
        # RoadBench's wide board scrolls inside the page, its model column stays in view.
        wrap = page.locator(
            ".table-wrap", has=page.locator("caption", has_text="roadbench: leaderboard")
        )
        wrap.evaluate("w => { w.scrollLeft = w.scrollWidth; }")
        model = wrap.locator("tbody tr td").first.bounding_box()
        box = wrap.bounding_box()
    assert errors == []
    assert requests == [url]  # the page itself, nothing else
    assert shot.stat().st_size > 10_000
    assert model is not None and box is not None and abs(model["x"] - box["x"]) < 2
    assert order == sorted(order) and len(order) == 2

    shown = _leaderboard_cells(html)
    _, rows = query(
        open_store(str(demo.store)),
        "select suite, model, task, metric, value from metrics where run_id = "
        f"'{demo.run_id}' and slice = '' and coalesce(variant, '') = ''",
    )
    stored = {(s, m, t, k): v for s, m, t, k, v in rows}
    # Every headline metric the store has for a model is on the page, with its value.
    expected = set()
    for suite, model, task, metric in stored:
        suite_class = load_suite(suite)
        assert suite_class is not None
        for headline in suite_class.headline:
            wide = headline.task == "*" and task == "*"
            per_task = headline.task == "" and task != "*"
            if headline.metric == metric and (wide or per_task):
                expected.add((suite, model, task, metric))
    lead = {k for k in expected if k[2] == "*" or k[0] == "roadbench"}
    assert set(shown) == lead and len(lead) > 10
    for key, (text, value) in shown.items():
        assert value == stored[key], key
        printed = float(text.split()[0])
        decimals = len(text.split()[0].partition(".")[2])
        assert abs(printed - stored[key]) <= 0.5 * 10**-decimals + 1e-12, (key, text)


def test_show_prints_the_runs_summary_again(demo: Demo) -> None:
    result = invoke("show", "--store", str(demo.store))
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.startswith(f"run {demo.run_id} of panel demo: finished")
    # The same leaderboards, health and cost as the run printed at its end.
    summary = _between(demo.output, "roadbench: leaderboard", "run ")
    assert _between(out, "roadbench: leaderboard", "report: ").startswith(summary)
    assert f"report: {demo.store / 'reports' / demo.run_id}.html" in out


@pytest.mark.parametrize("columns", [80, 120])
def test_show_fits_a_terminal_with_names_and_numbers_whole(demo: Demo, columns: int) -> None:
    # Before: at 80 columns the health table cut every column to `su…`, `tr…`, `ra…` and
    # the leaderboards their values to `0.1…`; at 120 suite and model names were still cut.
    result = runner_at(columns, "show", "--store", str(demo.store))
    assert result.exit_code == 0, result.output
    out = result.output
    assert "…" not in out
    # Tables fit; the report's path prints whole on one line (soft wrap) so it can be pasted.
    lines = [line for line in out.splitlines() if not line.startswith("report: ")]
    assert all(len(line) <= columns for line in lines), out
    rows = _table_rows(out, "run health")
    assert {(row[0], row[1]) for row in rows} == DEMO_PAIRS
    assert all(_count_or_cost(cell) for row in rows for cell in row[2:]), rows
    # The counts that did not fit are named under the table, with where to see them.
    if columns == 80:
        health = out[out.index("run health") :]
        note = " ".join(_between(health, "not shown at 80 columns:", "left out of").split())
        assert "abnormal answers, HTTP requests" in note and "(`roadeval report`)" in note
    # Each value of a leaderboard whole: a number, its rank, an interval's bounds.
    number = re.compile(r"^(—|-?\d+\.\d+|#\d+|\[-?\d+\.\d+,|-?\d+\.\d+\]|\d+)$")
    for suite in ("roadbench", "trip", "v2xqa", "tbbench", "stride"):
        board = _table_rows(out, f"{suite}: leaderboard")
        names = {row[0] for row in board} - {"", "(baseline)"}
        assert names == {model for s, model in DEMO_PAIRS if s == suite}, board
        words = [word for row in board for cell in row[1:] for word in cell.split()]
        assert words and all(number.match(word) for word in words), board
    costs = _table_rows(out, "cost per model, suite and role")
    assert {(row[1], row[0]) for row in costs if row[0] != "total"} <= DEMO_PAIRS


def runner_at(columns: int, *args: str) -> Any:
    """The CLI at a terminal `columns` wide (rich reads COLUMNS as a terminal's width)."""
    from typer.testing import CliRunner

    from roadeval.flows.cli.main import app

    return CliRunner().invoke(app, list(args), env={"COLUMNS": str(columns)})


def test_show_detail_prints_counts_as_integers(demo: Demo) -> None:
    result = invoke("show", demo.run_id, "--store", str(demo.store), "--detail")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "roadbench: metrics per task" in out and "trip: per slice" in out
    counted = [line for line in out.splitlines() if re.search(r"│ (items|errors|lanes)\s+│", line)]
    assert len(counted) >= 12
    for line in counted:
        values = [cell.strip() for cell in line.split("│")[3:-1]]
        assert all(v == "—" or v.isdigit() for v in values), line
    assert re.search(r"│ 2\s+│ lanes\s+│\s+10 │.*│\s+35 │", out), out
    # Rates keep their decimals.
    assert re.search(r"│ 1\s+│ f1\s+│\s+10 │\s+0\.\d{3} │", out), out


def test_report_writes_where_out_says_and_keeps_its_copy(demo: Demo, tmp_path: Path) -> None:
    out = tmp_path / "pages" / "run.html"
    result = invoke("report", demo.run_id, "--store", str(demo.store), "--out", str(out))
    assert result.exit_code == 0, result.output
    kept = demo.store / "reports" / f"{demo.run_id}.html"
    assert f"report of run {demo.run_id}: {kept}" in result.output
    assert out.read_bytes() == kept.read_bytes()
    assert f"run <code>{demo.run_id}</code>" in out.read_text(encoding="utf-8")


def _show_into(way: str, args: list[str]) -> subprocess.CompletedProcess[str]:
    """`roadeval ARGS` (the console script, as a user runs it) with its stdout closed, a pipe
    whose reader is gone, or the full device."""
    env = {**os.environ, "COLUMNS": "200"}
    if way == "closed":  # roadeval ... >&-
        command = ["sh", "-c", 'exec "$0" "$@" >&-', str(ROADEVAL), *args]
        return subprocess.run(command, stderr=subprocess.PIPE, text=True, env=env, timeout=120)
    if way == "no reader":  # roadeval ... | head -0
        read, write = os.pipe()
        os.close(read)
        try:
            return subprocess.run(
                [str(ROADEVAL), *args],
                stdout=write,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                timeout=120,
            )
        finally:
            os.close(write)
    with open("/dev/full", "w") as full:  # roadeval ... > /dev/full
        return subprocess.run(
            [str(ROADEVAL), *args], stdout=full, stderr=subprocess.PIPE, text=True, env=env
        )


@pytest.mark.parametrize(
    ("way", "said"),
    [
        ("closed", "error: the output could not be written: standard output is closed\n"),
        ("no reader", ""),  # a pipe's ordinary end: nothing to say
        ("full device", "error: the output could not be written: No space left on device\n"),
    ],
    ids=["closed", "no-reader", "full-device"],
)
@pytest.mark.parametrize("command", [["show"], ["runs", "--format", "csv"]], ids=["show", "runs"])
def test_output_that_cannot_be_written_exits_non_zero(
    demo: Demo, way: str, said: str, command: list[str]
) -> None:
    if way == "full device" and not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    done = _show_into(way, [*command, "--store", str(demo.store)])
    assert done.returncode == 1, done.stderr
    assert done.stderr == said


@pytest.mark.parametrize(
    ("store_flag", "from_env", "out"),
    [
        ("roadeval-data", False, "roadeval-data/runs/{run}/manifest.json"),
        (None, False, "./roadeval-data/../roadeval-data/runs/{run}/manifest.json"),  # default
        (None, True, "tables-link/{part}"),  # ROADEVAL_STORE; the path through a symlink
        ("linked", False, "roadeval-data/tables/{part}"),  # the store named by a symlink
    ],
)
def test_report_out_inside_the_store_is_refused(
    demo: Demo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    store_flag: str | None,
    from_env: bool,
    out: str,
) -> None:
    """`--out` over the run's manifest or a landed Parquet part would break the store: refused
    (one line, exit 2) however the store and the path are named, and nothing is touched."""
    work = tmp_path / "work"
    store = work / "roadeval-data"
    shutil.copytree(demo.store, store)
    (work / "linked").symlink_to(store)
    (work / "tables-link").symlink_to(store / "tables")
    monkeypatch.chdir(work)
    monkeypatch.delenv("ROADEVAL_STORE", raising=False)
    if from_env:
        monkeypatch.setenv("ROADEVAL_STORE", str(store))
    part = next((store / "tables" / "scores").rglob("*.parquet")).relative_to(store / "tables")
    named = out.format(run=demo.run_id, part=part)
    target = (work / named).resolve()
    before = target.read_bytes()
    flags = ["--store", store_flag] if store_flag is not None else []
    result = invoke("report", demo.run_id, *flags, "--out", named)
    assert result.exit_code == 2, result.output
    message = " ".join(result.output.split())
    assert message.startswith(f"error: --out {Path(named)}"), message
    assert message.endswith(
        f"inside the store {store}, where only roadeval writes; give a path outside it"
    ), message
    assert len(result.output.splitlines()) == 1, result.output
    assert target.read_bytes() == before
    assert int(query_csv(str(store), "select count(*) from scores")[1]) > 0


@pytest.mark.parametrize("command", ["report", "show"])
def test_bad_input_is_one_line_and_exit_2(
    command: str, demo: Demo, tmp_path: Path, inline: None
) -> None:
    unknown = invoke(command, "nope", "--store", str(demo.store))
    assert unknown.exit_code == 2
    assert "no run 'nope' in the store" in unknown.output
    missing = invoke(command, "--store", str(tmp_path / "nowhere"))
    assert missing.exit_code == 2
    assert f"no roadeval store at {tmp_path / 'nowhere'}" in missing.output
    # A dry run has no scores.
    source, _ = trip_gold(tmp_path)
    panel = write_panel(tmp_path / "panel.yaml", source, [{"model": "roadeval/random"}])
    store = str(tmp_path / "planned")
    planned = invoke("campaign", "--panel", str(panel), "--store", store, "--dry-run")
    assert planned.exit_code == 0, planned.output
    empty = invoke(command, "--store", store)
    assert empty.exit_code == 2
    assert re.search(
        r"error: run \S+ has no scores \(planned\): nothing to (report|show)", empty.output
    )
    for result in (unknown, missing, empty):
        assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1


def test_no_report_skips_it(tmp_path: Path, inline: None) -> None:
    source, _ = trip_gold(tmp_path)
    panel = write_panel(tmp_path / "panel.yaml", source, [{"model": "roadeval/random"}])
    store = tmp_path / "store"
    result = invoke("run", "--panel", str(panel), "--store", str(store), "--no-report")
    assert result.exit_code == 0, result.output
    assert "report:" not in result.output
    assert not (store / "reports").exists()


def test_under_prefect_the_report_is_a_task_and_a_markdown_artifact(
    tmp_path: Path, under_prefect: None
) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        ArtifactFilter,
        ArtifactFilterFlowRunId,
        FlowRunFilter,
        FlowRunFilterId,
    )

    source, _ = trip_gold(tmp_path)
    models = [{"model": "roadeval/random", "name": "random"}]
    panel = write_panel(tmp_path / "panel.yaml", source, models, scoring={"engine": "local"})
    store = tmp_path / "store"
    result = invoke("run", "--panel", str(panel), "--store", str(store))
    assert result.exit_code == 0, result.output
    [line] = query_csv(str(store), "select run_id, flow_run_id from runs")[1:]
    run_id, flow_run_id = line.split(",")
    report = store / "reports" / f"{run_id}.html"
    assert report.is_file()
    with get_client(sync_client=True) as client:
        this_run = FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id]))
        tasks = {t.name for t in client.read_task_runs(flow_run_filter=this_run)}
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id]))
        )
    assert f"report/{run_id}" in tasks
    # A folder store gives no address the UI could open: the artifact is markdown that names the
    # report's path as text (not a dead file:// link) and holds the leaderboard.
    [artifact] = [a for a in artifacts if a.key == "report-test"]
    assert artifact.type == "markdown"
    assert f"`{report}`" in artifact.data and "file://" not in artifact.data
    assert "## trip: leaderboard" in artifact.data


def test_show_prints_intervals_ties_health_and_the_blind_ablation(tmp_path: Path) -> None:
    from support.report_store import RUN, report_store

    store = tmp_path / "store"
    report_store(store)
    result = invoke("show", RUN, "--store", str(store))
    assert result.exit_code == 0, result.output
    out = result.output
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("│ model-b"))
    # Its value and rank, its interval under it, and beside it (from the store) 1 unparsed,
    # 0 abnormal, 1 error.
    assert re.search(r"│\s+0\.580 #2 │.*│\s+1 │\s+0 │\s+1 │$", lines[at]), lines[at]
    assert "[0.470, 0.680]" in lines[at + 1]
    caption = " ".join(out.split())
    assert "from the next model: model-a ≈ model-b on accuracy; 1 such pairs in all" in caption
    assert "trip: with vision and blind" in out
    assert re.search(r"│ model-a\s+│ accuracy │\s+0\.620 │\s+0\.410 │\s+\+0\.210 │", out), out
    assert "modality penalty │       0.100 │     — │" not in out  # not measured blind
    assert "no report yet: roadeval report " + RUN in out


def _page(store: Path, run_id: str) -> tuple[str, Page]:
    html = (store / "reports" / f"{run_id}.html").read_text(encoding="utf-8")
    return html, read_page(html)


def test_heatmaps_show_n_natural_orders_full_names_and_scales_that_cover_them(demo: Demo) -> None:
    _, page = _page(demo.store, demo.run_id)
    maps = [f for f in page.figures if "data-columns" in f.attrs]
    assert len(maps) >= 10
    for figure in maps:
        # The colour scale covers every value it colours, and its top end is labelled.
        low, high = float(figure.attrs["data-scale-low"]), float(figure.attrs["data-scale-high"])
        assert low <= float(figure.attrs["data-values-low"]), figure.caption
        assert float(figure.attrs["data-values-high"]) <= high, figure.caption
        assert any(t and float(t.replace("−", "-")) == high for t in figure.texts if _number(t))
    # Each cell names the items it is over: TRIP by difficulty, as the store has them.
    difficulty = page.figure("trip: accuracy by difficulty")
    _, rows = query(
        open_store(str(demo.store)),
        "select n from metrics where run_id = "
        f"'{demo.run_id}' and suite = 'trip' and slice = 'difficulty' and metric = 'correct'",
    )
    assert sorted(t for t in difficulty.texts if t.startswith("n=")) == sorted(
        f"n={n}" for (n,) in rows
    )
    # Ordered categories in their natural order, not alphabetically.
    assert json.loads(difficulty.attrs["data-columns"]) == ["easy", "medium", "hard"]
    modality = page.figure("trip: accuracy by modality")
    assert json.loads(modality.attrs["data-columns"]) == ["text", "image", "point cloud"]
    assert json.loads(page.figure("v2xqa: accuracy by view").attrs["data-columns"]) == [
        "VS",
        "IS",
        "CO",
    ]
    # Codes spelled out from the suite.
    assert "VS1 Ego Static Scene" in page.figure("v2xqa: accuracy by task").texts
    assert "EGO-TRA ego traverse distance" in page.figure("tbbench: accuracy (%) by task").texts
    assert "VS vehicle side" in page.figure("v2xqa: accuracy by view").texts
    # STRIDE's ADE (metres, lower is better): its bar reaches past its largest cell.
    ade = page.figure("stride: trajectory ADE by task family")
    assert float(ade.attrs["data-values-high"]) > 5 and "metres" in ade.texts
    # RoadBench's F1, exact match, buffer F1 and accuracy: never on one colour scale.
    roadbench = [f.attrs["data-metric"] for f in maps if f.attrs["data-suite"] == "roadbench"]
    assert sorted(roadbench) == sorted({"f1", "exact_match", "buffer_f1@0.2", "accuracy"})


def _number(text: str) -> bool:
    return re.fullmatch(r"[−-]?\d+(\.\d+)?", text) is not None


def test_the_placeholder_judge_is_marked_wherever_its_scores_show(demo: Demo) -> None:
    _, page = _page(demo.store, demo.run_id)
    board = page.table("stride: leaderboard")
    judged = [c for row in board.rows for c in row if c.attrs.get("data-metric") == "judge_score"]
    assert judged and all("placeholder judge" in c.text for c in judged)
    assert all("midpoint" in c.attrs["data-placeholder"] for c in judged)
    other = [c for row in board.rows for c in row if c.attrs.get("data-metric") == "traj_ade"]
    assert other and not any("data-placeholder" in c.attrs for c in other)
    assert "placeholder" in page.figure("stride: judge score by task family").caption
    assert "placeholder" in page.figure("stride: judge score per item").caption
    # The terminal: the run's own summary and `show`.
    shown = invoke("show", "--store", str(demo.store))
    for out in (demo.output, shown.output):
        text = " ".join(out.split())
        assert "judge score ↑ (placeholder judge)" in text
        assert "roadeval/midpoint-judge), an offline placeholder judge" in text


def test_counts_say_what_they_count(demo: Demo) -> None:
    _, page = _page(demo.store, demo.run_id)
    facts = {row[0].text: row[1].text for row in page.table("the run").rows}
    manifest = json.loads((demo.store / "runs" / demo.run_id / "manifest.json").read_text())
    items, scored = manifest["totals"]["items"], manifest["totals"]["scored"]
    _, [(rows,)] = query(
        open_store(str(demo.store)),
        f"select count(*) from scores where run_id = '{demo.run_id}' and status = 'scored'",
    )
    # On main "items scored" was the score rows (761 in the demo, of 323 items).
    assert facts["items scored"] == str(scored) and int(rows) > int(scored)
    assert facts["items planned (each suite's items x its models)"] == str(items)
    assert facts["score rows with a value (one per item, metric and sample)"] == str(rows)
    health = page.table("health per suite and model (the run's counts)")
    assert health.headers[2:6] == ["items planned", "items scored", "model calls", "answers reused"]
    shown = " ".join(invoke("show", "--store", str(demo.store)).output.split())
    for heading in ("items planned", "model calls", "unread answers"):
        assert heading in shown, heading


@dataclass(frozen=True)
class Rerun:
    store: Path
    run_id: str


@pytest.fixture(scope="module")
def rerun(tmp_path_factory: pytest.TempPathFactory) -> Rerun:
    """Two runs of a TRIP panel of two baselines; before the second, two image items whose gold
    was A become B and two text items become A, so always-a's modality penalty (better lower)
    rises: a worse model, though the number goes up."""
    root = tmp_path_factory.mktemp("report-rerun")
    source = get_suite("trip").generate_demo(root / "trip-src")
    models = [
        {"name": "always-a", "model": "roadeval/always-a"},
        {"name": "random", "model": "roadeval/random", "params": {"seed": 0}},
    ]
    engines = {"scoring": {"engine": "local"}, "render": {"engine": "local"}}
    panel = write_panel(root / "panel.yaml", source, models, **engines)
    store = root / "store"
    with no_prefect_api(root / "no-prefect-profiles" / "profiles.toml"):
        first = invoke("run", "--panel", str(panel), "--store", str(store))
        assert first.exit_code == 0, first.output
        items = source / "items.jsonl"
        rows = [json.loads(line) for line in items.read_text().splitlines()]
        images = [r for r in rows if r["modality"] != "text" and r["answer"] == "A"][:2]
        texts = [r for r in rows if r["modality"] == "text" and r["answer"] != "A"][:2]
        for row in images:
            row["answer"] = "B"
        for row in texts:
            row["answer"] = "A"
        items.write_text("".join(json.dumps(r) + "\n" for r in rows))
        second = invoke("run", "--panel", str(panel), "--store", str(store))
        assert second.exit_code == 0, second.output
    run_id = query_csv(str(store), "select run_id from runs order by started_at desc")[1]
    return Rerun(store, run_id)


def _moved_count(out: str) -> int:
    found = re.search(r"^metrics moved: (\d+)", out, re.M)
    assert found is not None, out
    return int(found.group(1))


def test_the_rerun_section_counts_as_changes_and_marks_each_move_by_its_direction(
    rerun: Rerun,
) -> None:
    _, page = _page(rerun.store, rerun.run_id)
    [caption] = [c for c in page.captions() if c.startswith("metrics that moved: ")]
    changes = invoke("changes", rerun.run_id, "--store", str(rerun.store), "--all")
    assert changes.exit_code == 0, changes.output
    # On main: 12 here against 28 there (slices left out, TRIP's metrics counted twice).
    assert int(caption.split()[-1]) == _moved_count(changes.output)
    moved = page.table(caption)
    rules = SuiteRules(["trip"])
    seen = set()
    for row in moved.rows:
        suite, _, model, _, where = (c.text for c in row[:5])
        metric = row[3].attrs["data-sort"]
        key = (model, metric, where)
        assert key not in seen, key  # each metric once, not under task '*' and 'mcq'
        seen.add(key)
        delta = row[8]
        if "data-verdict" in delta.attrs:
            expected = rules.metric(suite, metric).verdict(float(delta.attrs["data-sort"]))
            assert delta.attrs["data-verdict"] == expected.value, key
    penalty = next(
        r for r in moved.rows if r[2].text == "always-a" and r[3].text == "modality penalty"
    )
    assert float(penalty[8].attrs["data-sort"]) > 0 and penalty[8].attrs["data-verdict"] == "worse"
    assert "▲" in penalty[8].text and penalty[9].text == "worse"
    # The items that changed, by id.
    changed = page.table("items that changed: 4")
    assert {row[2].text for row in changed.rows} == {"changed:reference"}


def test_the_rerun_report_in_chromium_counts_as_changes_and_colours_by_direction(
    rerun: Rerun,
) -> None:
    changes = invoke("changes", rerun.run_id, "--store", str(rerun.store))
    page_file = rerun.store / "reports" / f"{rerun.run_id}.html"
    with _chromium(page_file) as (page, errors, _):
        section = page.locator("section#changes")
        caption = section.locator("table.metric-deltas caption").inner_text()
        rows = section.locator("table.metric-deltas tbody tr").count()
        marks = section.locator("table.metric-deltas td[data-verdict] .mark").evaluate_all(
            "marks => marks.map(m => [m.parentElement.dataset.verdict, getComputedStyle(m).color])"
        )
        penalty = (
            section.locator(
                "table.metric-deltas tr:has(td:text-is('always-a'))"
                ":has(td:text-is('modality penalty'))"
            )
            .first.locator("td[data-verdict]")
            .first
        )
        verdict = penalty.get_attribute("data-verdict")
        colour = penalty.locator(".mark").evaluate("m => getComputedStyle(m).color")
    assert errors == []
    count = int(caption.split(":")[1].split()[0])
    assert count == _moved_count(changes.output) == rows
    # Marks coloured by what the move means for the model: green better, red worse.
    colours = {v: {c for w, c in marks if w == v} for v in ("better", "worse")}
    assert colours["better"] == {"rgb(27, 122, 58)"} and colours["worse"] == {"rgb(179, 38, 30)"}
    # A penalty (better lower) that rose is marked worse, in red.
    assert verdict == "worse" and colour == "rgb(179, 38, 30)"


def test_every_metric_the_demo_lands_is_described_by_its_suite(demo: Demo) -> None:
    _, rows = query(
        open_store(str(demo.store)),
        f"select distinct suite, metric from metrics where run_id = '{demo.run_id}'",
    )
    rules = SuiteRules({suite for suite, _ in rows})
    missing = sorted((s, m) for s, m in rows if not rules.metric(s, m).declared)
    assert missing == []
    # A share or a distance says which way is better; only counts say neither.
    for suite, metric in rows:
        info = rules.metric(suite, metric)
        assert info.better is not None or info.scale.unit in ("count", "share of items (0-1)"), (
            suite,
            metric,
        )


def test_trips_pareto_charts_count_errors_on_one_axis_and_add_up_their_share_on_another(
    demo: Demo,
) -> None:
    _, page = _page(demo.store, demo.run_id)
    charts = [f for f in page.figures if any("cumulative" in t for t in f.texts)]
    load_suite("trip")  # registers TRIP's own table, `pareto`
    _, rows = query(
        open_store(str(demo.store)),
        f"select model, max(errors) from pareto where run_id = '{demo.run_id}' group by model",
    )
    most = dict(rows)
    assert charts and len(charts) == len(most)
    for chart in charts:
        # On main: "errors (cumulative share)" under bars of counts, percentages beside them.
        assert "errors (cumulative share)" not in chart.texts
        assert "errors (items answered wrong)" in chart.texts
        assert "cumulative share of the group's errors" in chart.texts
        assert "100%" in chart.texts and "0%" in chart.texts
        model = chart.caption.split(":")[0].strip()
        counts = [int(t) for t in chart.texts if t.isdigit()]
        assert max(counts) >= most[model]  # the count axis reaches the model's longest bar
