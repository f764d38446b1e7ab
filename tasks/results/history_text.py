"""A panel's history as the terminal shows it (`roadeval history`): rows of text for its tables,
narrow enough for 120 columns: the runs, each suite x model x headline over the latest runs
(value and interval, moves beyond noise marked), and the drift flags."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from roadeval.tasks.results.compare_text import LEVEL_TEXT, difference_text, items_text, verdict
from roadeval.tasks.results.formats import SuiteRules
from roadeval.tasks.results.history import SUITE_WIDE, History, Point, shown_scopes

# Latest runs shown as columns by default: each cell is about 18 characters wide, and two
# keep the table within 120 columns beside the names.
SHOWN_RUNS = 2
# The widest a history table is printed (rich wraps a cell's text to keep within it).
WIDTH = 120
MARKS = {"better": "▲", "worse": "▼", "moved": "◆"}


@dataclass(frozen=True)
class TrendRow:
    """One suite x task x model x headline: its cells over the runs shown, and its moves;
    `scope`, the suite ('trip') or the suite and task ('roadbench 3')."""

    scope: str
    model: str
    metric: str
    items: str
    cells: tuple[str, ...]
    moves: str
    drift: str


def point_text(point: Point | None, mark: str = "") -> str:
    """'0.625 [0.47–0.76]' (its interval), then the move's mark against the run before."""
    if point is None:
        return "-"
    if point.ci_low is None or point.ci_high is None:
        return f"{point.value:.3g}{mark}"
    return f"{point.value:.3g} [{point.ci_low:.2g}–{point.ci_high:.2g}]{mark}"


def scope_text(suite: str, task: str) -> str:
    return suite if task == SUITE_WIDE else f"{suite} {task}"


def trend_rows(history: History, shown: int = SHOWN_RUNS) -> tuple[list[int], list[TrendRow]]:
    """The run numbers shown (1 = oldest; the latest `shown`) and a row per suite x task x
    model x headline metric."""
    rules = SuiteRules({p.suite for p in history.points})
    number = {run.run_id: n for n, run in enumerate(history.runs, 1)}
    columns = list(range(max(1, len(history.runs) - shown + 1), len(history.runs) + 1))
    scopes = shown_scopes(history.points)
    by_key: dict[tuple[str, str, str, str], dict[int, Point]] = {}
    for p in history.points:
        if (p.suite, p.task) in scopes:
            by_key.setdefault((p.suite, p.task, p.model, p.metric), {})[number[p.run_id]] = p
    moves: dict[tuple[str, str, str, str], dict[int, str]] = {}
    drifts: dict[tuple[str, str, str, str], list[int]] = {}
    for step in history.steps:
        row = step.row
        key = (row.suite, row.task, row.model, row.metric)
        if row.significant:
            moves.setdefault(key, {})[number[row.run_id]] = MARKS.get(verdict(row, rules), "")
        if step.drift:
            drifts.setdefault(key, []).append(number[row.run_id])
    pairs = len(history.runs) - 1
    rows = []
    for key, points in sorted(by_key.items()):
        suite, task, model, metric = key
        marks = moves.get(key, {})
        latest = points[max(points)]
        drifted = drifts.get(key, [])
        rows.append(
            TrendRow(
                scope_text(suite, task),
                model,
                f"{metric} {rules.metric(suite, metric).arrow}".strip(),
                str(latest.n),
                tuple(point_text(points.get(n), marks.get(n, "")) for n in columns),
                f"{len(marks)} of {pairs}",
                _drift_text(drifted),
            )
        )
    return columns, rows


def _drift_text(runs: Sequence[int]) -> str:
    """The runs where a row drifted: 'run 3', or how many and the latest ('4, latest run 45')."""
    if not runs:
        return "-"
    return f"run {runs[0]}" if len(runs) == 1 else f"{len(runs)}, latest run {max(runs)}"


def drift_lines(history: History) -> list[tuple[str, ...]]:
    """Per drift flag: runs, suite, model, metric, the move, items, what served it before and
    after."""
    rules = SuiteRules({step.row.suite for step in history.steps})
    number = {run.run_id: n for n, run in enumerate(history.runs, 1)}
    lines: list[tuple[str, ...]] = []
    for step in history.drifts:
        row = step.row
        lines.append(
            (
                f"{number[row.baseline_run_id]} → {number[row.run_id]}",
                scope_text(row.suite, row.task),
                row.model,
                f"{row.metric} {rules.metric(row.suite, row.metric).arrow}".strip(),
                f"{difference_text(row)} {verdict(row, rules)}",
                items_text(row),
                f"{step.served_before} → {step.served_after}",
            )
        )
    return lines


def legend_lines(runs: int, columns: Sequence[int]) -> list[str]:
    first, last = columns[0], columns[-1]
    more = " (--runs N shows more)" if first > 1 else ""
    return [
        f"run k: the k-th of {runs} finished runs, oldest first; runs {first}-{last} shown{more}",
        f"cells: the headline over all the run's items [its {LEVEL_TEXT} interval]; ▲ better, "
        "▼ worse than the run before beyond noise (paired over the items both scored unchanged; "
        "↑ higher is better, ↓ lower); items: how many the latest run scored",
        "moves: consecutive pairs whose paired difference left out 0; drift: the runs where "
        "such a move came with the items and the model string unchanged, beyond noise after "
        "Holm's correction over the comparison's rows (at most 5% of comparisons flag a model "
        "that did not change)",
    ]
