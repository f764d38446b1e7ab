"""A panel's history page (`reports/panels/<panel>.html`): drift flags first, a trend figure per
suite x headline metric (a line per model, intervals, drifts ringed), every consecutive pair's
moves beyond noise, and the runs with links to their reports; built from `results.history`."""

from __future__ import annotations

from collections.abc import Sequence

from roadeval.storage.store import Store
from roadeval.tasks.report.blocks import Block, Cell, Figure, Header, Note, Section, Table, plain
from roadeval.tasks.report.build import report_key
from roadeval.tasks.report.drawing import draw
from roadeval.tasks.report.site import panel_key, render_site
from roadeval.tasks.report.trends import Series, trend
from roadeval.tasks.results.compare_text import (
    LEVEL_TEXT,
    difference_text,
    items_text,
    legend,
    metric_text,
    verdict,
)
from roadeval.tasks.results.formats import SuiteRules
from roadeval.tasks.results.history import History, Step, shown_scopes


def _report_link(store: Store, run_id: str) -> str:
    """The run's report, relative to a panel page; '' when the store keeps none."""
    return f"../{run_id}.html" if store.exists(report_key(run_id)) else ""


def _steps_table(history: History, steps: Sequence[Step], rules: SuiteRules, caption: str) -> Table:
    number = {run.run_id: n for n, run in enumerate(history.runs, 1)}
    headers = (
        Header("runs"),
        Header("suite"),
        Header("task"),
        Header("model"),
        Header("metric"),
        Header("before", True),
        Header("after", True),
        Header(f"after - before [{LEVEL_TEXT} CI]", True),
        Header("items", True),
        Header("beyond noise"),
        Header("regressed", True),
        Header("improved", True),
        Header("served before"),
        Header("served after"),
    )
    rows = []
    for step in steps:
        row = step.row
        a, b = number.get(row.baseline_run_id, 0), number.get(row.run_id, 0)
        rows.append(
            (
                Cell(f"{a} → {b}", b, title=f"{row.baseline_run_id} → {row.run_id}"),
                plain(row.suite),
                plain(row.task),
                plain(row.model),
                plain(metric_text(row, rules)),
                Cell(f"{row.baseline_value:.4g}", row.baseline_value),
                Cell(f"{row.new_value:.4g}", row.new_value),
                Cell(difference_text(row), row.difference),
                Cell(items_text(row), row.n),
                Cell(verdict(row, rules), emphasis=step.drift, data={"drift": str(step.drift)}),
                Cell(str(row.regressed), row.regressed),
                Cell(str(row.improved), row.improved),
                plain(step.served_before),
                plain(step.served_after),
            )
        )
    return Table(caption, headers, tuple(rows), kind="steps", legend=(legend("before", "after"),))


def _trends(history: History, rules: SuiteRules) -> list[Block]:
    number = {run.run_id: n for n, run in enumerate(history.runs, 1)}
    drifted: dict[tuple[str, str, str, str], list[int]] = {}
    for step in history.drifts:
        key = (step.row.suite, step.row.task, step.row.metric, step.row.model)
        drifted.setdefault(key, []).append(number[step.row.run_id])
    shown = shown_scopes(history.points)
    charts: dict[
        tuple[str, str, str], dict[str, list[tuple[int, float, float | None, float | None]]]
    ]
    charts = {}
    for p in history.points:
        if (p.suite, p.task) in shown:
            chart = charts.setdefault((p.suite, p.task, p.metric), {})
            chart.setdefault(p.model, []).append((number[p.run_id], p.value, p.ci_low, p.ci_high))
    blocks: list[Block] = []
    for (suite, task, metric), models in sorted(charts.items()):
        info = rules.metric(suite, metric)
        series: list[Series] = [
            (model, sorted(points), drifted.get((suite, task, metric, model), []))
            for model, points in sorted(models.items())
        ]
        where = "all items" if task == "*" else f"task {task}"
        caption = (
            f"{suite}, {metric} {info.arrow} ({info.direction}) over {where}, per run, with "
            f"{LEVEL_TEXT} intervals; drift ringed in red"
        )
        ylabel = f"{metric} {info.arrow}".strip()
        blocks.append(
            Figure(draw(trend, series, len(history.runs), ylabel), caption, {"metric": metric})
        )
    return blocks


def _runs_table(store: Store, history: History) -> Table:
    rows = []
    for n, run in enumerate(history.runs, 1):
        rows.append(
            (
                Cell(str(n), n),
                Cell(run.run_id, run.run_id, href=_report_link(store, run.run_id)),
                plain(run.started_at.isoformat(timespec="seconds")),
                plain(run.status),
                plain(", ".join(run.models)),
                Cell(f"${run.cost_usd:.4f}", run.cost_usd),
            )
        )
    headers = (
        Header("#", True),
        Header("run (its report)"),
        Header("started"),
        Header("status"),
        Header("models"),
        Header("cost (USD, lower is better)", True),
    )
    return Table(f"finished runs: {len(history.runs)}, oldest first", headers, tuple(rows))


def history_sections(store: Store, history: History) -> list[Section]:
    rules = SuiteRules({p.suite for p in history.points})
    drifts = history.drifts
    moved = [s for s in history.steps if s.row.significant]
    latest = history.runs[-1].run_id
    news = [s for s in drifts if s.row.run_id == latest]
    flags: list[Block] = [
        Note(
            f"drift in the latest run: {s.row.suite} x {s.row.model}, {s.row.metric} "
            f"({'all items' if s.row.task == '*' else 'task ' + s.row.task}) "
            f"{verdict(s.row, rules)} from run {s.row.baseline_run_id} to {s.row.run_id}: "
            f"{difference_text(s.row)} over {s.row.n} unchanged items, same model string; "
            f"served before: {s.served_before}; after: {s.served_after}",
            warning=True,
        )
        for s in news
    ]
    if not drifts:
        flags.append(Note("no drift: no model's headline moved beyond noise on unchanged items"))
    elif not news:
        flags.append(Note("no drift in the latest run"))
    if drifts:
        flags.append(_steps_table(history, drifts, rules, f"drift flags: {len(drifts)}"))
    found = [
        Section("drift", "Drift", tuple(flags)),
        Section("trends", "Trends", tuple(_trends(history, rules))),
        Section(
            "moves",
            "Moves beyond noise",
            (
                _steps_table(
                    history, moved, rules, f"consecutive runs: {len(moved)} moves beyond noise"
                ),
            )
            if moved
            else (Note("no headline moved beyond noise between consecutive runs"),),
        ),
        Section("runs", "Runs", (_runs_table(store, history),)),
    ]
    return [section for section in found if section.blocks]


def build_history_page(store: Store, history: History) -> str:
    """Render the panel's page and keep it in the store; its key."""
    page = render_site(
        f"roadeval history: {history.panel}",
        f"panel {history.panel}: {len(history.runs)} finished runs, "
        f"{len(history.drifts)} drift flags",
        history_sections(store, history),
        [("all runs", "../index.html")],
    )
    key = panel_key(history.panel)
    store.put(key, page.encode("utf-8"))
    return key
