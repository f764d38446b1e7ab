"""The report page over a small store (tests/support/report_store.py): each section appears
where the run has its data and only there; intervals, not-significant pairs, the blind ablation
and what changed since the baseline run render as the store has them; and the page needs no
network (no external script, style, font or image)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from roadeval.tasks.report.build import build_report, report_key
from roadeval.tasks.report.reading import read_report
from roadeval.tasks.report.run_reads import ReportError

from support.html_tables import Page, read_page
from support.report_store import ACCURACY, BLIND, ECE, INTERVAL, RUN, Options, report_store
from support.trip_panel import invoke


def _page(tmp_path: Path, options: Options | None = None) -> tuple[str, Page]:
    store = report_store(tmp_path / "store", options or Options())
    built = build_report(store, RUN)
    html = store.get(built.key).decode()
    assert built.key == report_key(RUN) == f"reports/{RUN}.html"
    return html, read_page(html)


def test_the_leaderboard_has_headlines_intervals_ties_and_health(tmp_path: Path) -> None:
    html, page = _page(tmp_path)
    board = page.table("trip: leaderboard")
    assert board.headers[:3] == ["model", "accuracy ↑", "modality penalty ↓"]
    assert board.headers[-3:] == ["unread answers", "abnormal answers", "items in error"]
    assert board.column("model") == ["model-a", "model-b", "random baseline"]
    cells = {row[0].text.split()[0]: row[1] for row in board.rows}
    for model, cell in cells.items():
        low, high = INTERVAL[model]
        assert cell.attrs["data-value"] == repr(ACCURACY[model])
        assert cell.text.startswith(f"{ACCURACY[model]:.3f}")
        assert f"[{low:.3f}, {high:.3f}]" in cell.text
    # model-a and model-b: their paired interval covers 0. model-a, ranked just above model-b,
    # is marked; each one's hover names the other; random is told apart from both.
    assert "≈" in cells["model-a"].text and "model-b" in cells["model-a"].attrs["title"]
    assert "≈" not in cells["model-b"].text and "model-a" in cells["model-b"].attrs["title"]
    assert (
        "≈" not in cells["random"].text
        and "not significantly" not in cells["random"].attrs["title"]
    )
    assert "≈: not significantly different from the model ranked next" in html
    # Each value's rank in its column: the ranking is stated, not left to the first column.
    assert [cells[m].attrs["data-rank"] for m in ("model-a", "model-b", "random")] == [
        "1",
        "2",
        "3",
    ]
    assert "rows: by rank in the first column" in html
    # A legend line per column: what it is and which way is better.
    assert "modality penalty ↓: text accuracy minus the accuracy of the worst" in html
    # model-b: one answer not read, one item whose answer was an error (from the store).
    assert board.row("model-b")[-3:] == ["1", "0", "1"]
    assert board.row("model-a")[-3:] == ["0", "0", "0"]
    pairs = page.table("trip: paired differences")
    assert pairs.row("accuracy")[:3] == ["accuracy", "model-a", "model-b"]
    assert pairs.row("accuracy")[-1] == "no (≈)"


def test_the_blind_ablation_sits_beside_the_baselines(tmp_path: Path) -> None:
    _, page = _page(tmp_path)
    assert "blind" in page.sections
    table = page.table("trip: with vision and blind")
    rows = {row[0].text.split()[0]: [c.text for c in row] for row in table.rows}
    assert set(rows) == {"model-a", "model-b", "random"}
    assert rows["random"][0] == "random baseline"
    for model, row in rows.items():
        if row[1] == "accuracy":
            assert row[2:] == [
                f"{ACCURACY[model]:.3f}",
                f"{BLIND[model]:.3f}",
                f"{ACCURACY[model] - BLIND[model]:+.3f}",
            ]


def test_what_changed_since_the_baseline_run(tmp_path: Path) -> None:
    _, page = _page(tmp_path)
    items = page.table("items against the baseline run")
    assert items.headers == [
        "suite",
        "added",
        "removed",
        "changed:prompt",
        "changed:reference",
        "unchanged",
    ]
    assert items.row("trip") == ["trip", "0", "0", "0", "1", "1"]
    flips = page.table("scores that changed")
    assert flips.row("trip")[:4] == ["trip", "model-a", "as released", "1"]
    assert flips.row("trip")[4:7] == ["1", "1", "0"]  # flipped, 1 to 0, 0 to 1
    changed = page.table("items that changed: 1")
    assert changed.row("trip") == ["trip", "trip-0", "changed:reference (answer)"]
    # Each metric once (TRIP's task rows repeat its suite-wide ones), slices counted too, and
    # each move marked by what it means for the model: modality penalty is better lower, so
    # its rise is worse.
    moved = page.table("metrics that moved: 4")
    marks = {
        (row[2].text, row[3].text, row[4].text): (row[8].text, row[8].attrs["data-verdict"])
        for row in moved.rows
    }
    assert marks == {
        ("model-a", "accuracy", "all items"): ("-0.025 ▼", "worse"),
        ("model-b", "accuracy", "all items"): ("+0.05 ▲", "better"),
        ("model-a", "modality penalty", "all items"): ("+0.038 ▲", "worse"),
        ("model-b", "accuracy", "role = vehicle"): ("+0.1 ▲", "better"),
    }


def test_the_moved_count_is_the_one_roadeval_changes_prints(tmp_path: Path) -> None:
    _, page = _page(tmp_path)
    [caption] = [c for c in page.captions() if c.startswith("metrics that moved: ")]
    result = invoke("changes", RUN, "--store", str(tmp_path / "store"))
    assert result.exit_code == 0, result.output
    assert re.search(r"^metrics moved: (\d+)", result.output, re.M).group(1) == caption.split()[-1]


def test_suite_figures_and_calibration(tmp_path: Path) -> None:
    html, page = _page(tmp_path)
    table = page.table("v2xqa: calibration per model (all views)")
    # In the leaderboard's order (by v2xqa's accuracy).
    assert table.column("model") == ["model-a", "model-b", "random"]
    assert table.column("ece") == [f"{ECE[m]:.3f}" for m in ("model-a", "model-b", "random")]
    # Heatmaps of model x slice, inline SVG.
    assert "trip: accuracy by role" in html
    assert html.count("<svg") >= 2
    # No reliability bins: no answer came with probabilities.
    assert "no answer came with letter probabilities" in html


def test_sections_appear_only_with_their_data(tmp_path: Path) -> None:
    _, page = _page(tmp_path, Options(pairs=False, blind=False, baseline=False))
    assert page.sections == ["leaderboards", "slices", "suites", "cost", "run"]
    assert not any("paired differences" in c for c in page.captions())
    cell = page.table("trip: leaderboard").rows[0][2]
    assert "≈" not in cell.text


def test_the_page_needs_no_network(tmp_path: Path) -> None:
    html, page = _page(tmp_path)
    assert page.scripts == 1
    # No external script, style, font or image: no src or href to anything but the page.
    assert not re.search(r"""\b(?:src|href)\s*=\s*["'](?!#|data:)""", html)
    assert "@import" not in html and "url(http" not in html
    # Addresses only as names: SVG's namespaces, and the models' endpoint in the identity.
    named = html.replace("http://127.0.0.1:1/v1", "")
    assert not re.search(r"https?://(?!www\.w3\.org/)", named)


def test_an_unknown_run_and_a_run_without_scores(tmp_path: Path) -> None:
    store = report_store(tmp_path / "store")
    with pytest.raises(ReportError, match="no run 'nope' in the store"):
        read_report(store, "nope")
    assert not store.exists(report_key("nope"))
