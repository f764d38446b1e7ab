"""`roadeval report` and `roadeval show` over the demo run: the run ends with its leaderboards and
its report; the report opens in headless Chromium with no console error and no request but its
own file, and its leaderboard numbers are the store's; `show` prints the run's summary again,
counts as integers; bad input is one line and exit 2."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from roadeval.benchmarks.registry import load_suite
from roadeval.storage.catalog import query
from roadeval.storage.store import open_store

from support.cli_process import ROADEVAL
from support.html_tables import read_page
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


def test_a_run_leads_with_its_leaderboards_and_ends_with_its_report(demo: Demo) -> None:
    out = demo.output
    first = out.index("roadbench: leaderboard")
    assert first < out.index("trip: leaderboard") < out.index("run health")
    # The per-task detail is `show --detail`'s.
    assert "metrics per task" not in out and "per slice" not in out
    # Counts print as integers: the health table's and the leaderboards' item counts.
    health = _between(out, "run health", "cost per model").splitlines()
    rows = [line.split("│")[3:-2] for line in health if line.startswith("│")]
    assert len(rows) == 10 and all(cell.strip().isdigit() for row in rows for cell in row)
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


def test_the_report_opens_offline_in_chromium_and_shows_the_stores_numbers(
    demo: Demo, tmp_path: Path
) -> None:
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("no chromium on this machine: `apt-get install -y chromium` (.ci/run does)")
    from playwright.sync_api import sync_playwright

    page_file = demo.store / "reports" / f"{demo.run_id}.html"
    url = page_file.resolve().as_uri()
    errors: list[str] = []
    requests: list[str] = []
    shot = tmp_path / "report.png"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: requests.append(r.url))
            page.goto(url, wait_until="load")
            page.screenshot(path=str(shot), full_page=True)
            html = page.content()
            # The one script sorts: a click on trip's accuracy orders its rows ascending.
            heading = page.locator("table.leaderboard", has_text="trip: leaderboard").locator(
                "th", has_text="accuracy"
            )
            heading.first.click()
            order = page.locator(
                "table.leaderboard:has(caption:text-is('trip: leaderboard')) "
                "td[data-metric='accuracy']"
            ).evaluate_all("cells => cells.map(c => parseFloat(c.dataset.value))")
        finally:
            browser.close()
    assert errors == []
    assert requests == [url]  # the page itself, nothing else
    assert shot.stat().st_size > 10_000
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


def test_under_prefect_the_report_is_a_task_and_a_link_artifact(
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
    # Prefect keeps a link as markdown: [text](address).
    [link] = [a for a in artifacts if a.key == "report-test"]
    assert link.data == f"[report of run {run_id}]({report.resolve().as_uri()})"


def test_show_prints_intervals_ties_health_and_the_blind_ablation(tmp_path: Path) -> None:
    from support.report_store import RUN, report_store

    store = tmp_path / "store"
    report_store(store)
    result = invoke("show", RUN, "--store", str(store))
    assert result.exit_code == 0, result.output
    out = result.output
    row = next(line for line in out.splitlines() if line.startswith("│ model-b"))
    # Its value with its interval, and beside it (from the store) 1 unparsed, 0 abnormal, 1 error.
    assert re.search(r"│\s+0\.580 \[0\.470, 0\.680\] │.*│\s+1 │\s+0 │\s+1 │$", row), row
    caption = " ".join(out.split())
    assert "from the next model: model-a ≈ model-b on accuracy; 1 such pairs in all" in caption
    assert "trip: with vision and blind" in out
    assert re.search(r"│ model-a\s+│ accuracy │\s+0\.620 │\s+0\.410 │\s+\+0\.210 │", out), out
    assert "modality_penalty │       0.100 │     — │" not in out  # not measured blind
    assert "no report yet: roadeval report " + RUN in out
