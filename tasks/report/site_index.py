"""The store's reports index (`reports/index.html`): its panels (each with its history page) and
its runs (status, when, models, cost), newest first, with relative links to each run's report."""

from __future__ import annotations

import json
from contextlib import closing
from typing import Any

from roadeval.storage.catalog import connect
from roadeval.storage.store import Store
from roadeval.tasks.report.blocks import Cell, Header, Note, Section, Table, plain
from roadeval.tasks.report.build import REPORTS
from roadeval.tasks.report.site import INDEX_KEY, PANELS, panel_slug, render_site
from roadeval.tasks.results.money import cost_text


def _models(manifest_json: str | None) -> str:
    try:
        manifest = json.loads(manifest_json) if manifest_json else {}
    except ValueError:
        return ""
    return ", ".join(str(m.get("name") or m.get("model")) for m in manifest.get("models") or [])


def _cost(cost_usd: float | None, manifest_json: str | None) -> str:
    """The run's cost as `runs` writes it: unknown where requests had no known price."""
    try:
        counts = (json.loads(manifest_json) if manifest_json else {}).get("counts") or []
    except ValueError:
        counts = []
    unknown = sum(int(c.get("unknown_cost") or 0) for c in counts)
    return cost_text(cost_usd or 0.0, unknown)


def _link(page: str, kept: set[str]) -> str:
    """A relative link to `page` of the reports folder, where the store keeps it ('' if not)."""
    return page if page in kept else ""


def index_sections(store: Store) -> list[Section]:
    with closing(connect(store, tables=["run_events"])) as con:
        runs = con.execute(
            "select run_id, panel, status, started_at, ended_at, cost_usd, manifest_json "
            "from runs order by started_at desc, run_id desc"
        ).fetchall()
    kept = {key.removeprefix(REPORTS) for key in store.list(REPORTS)}
    panels: dict[str, list[tuple[Any, ...]]] = {}
    for row in runs:
        panels.setdefault(str(row[1]), []).append(row)
    panel_rows = []
    for panel, its in sorted(panels.items()):
        finished = sum(1 for r in its if r[2] == "finished")
        panel_rows.append(
            (
                Cell(panel, panel, href=_link(f"{PANELS}{panel_slug(panel)}.html", kept)),
                Cell(str(len(its)), len(its)),
                Cell(str(finished), finished),
                plain(max(r[3] for r in its).isoformat(timespec="seconds")),
            )
        )
    run_rows = []
    for run_id, panel, status, started, ended, cost, manifest_json in runs:
        minutes = (ended - started).total_seconds() / 60 if ended is not None else None
        run_rows.append(
            (
                Cell(run_id, run_id, href=_link(f"{run_id}.html", kept)),
                Cell(panel, panel, href=_link(f"{PANELS}{panel_slug(panel)}.html", kept)),
                plain(status, status=status),
                plain(started.isoformat(timespec="seconds")),
                Cell("" if minutes is None else f"{minutes:.1f}", minutes),
                plain(_models(manifest_json)),
                Cell(_cost(cost, manifest_json), cost or 0.0),
            )
        )
    if not runs:
        return [Section("runs", "Runs", (Note("no run in this store yet"),))]
    return [
        Section(
            "panels",
            "Panels",
            (
                Table(
                    f"panels: {len(panels)} (each name links to its history page)",
                    (
                        Header("panel (its history)"),
                        Header("runs", True),
                        Header("finished", True),
                        Header("last started"),
                    ),
                    tuple(panel_rows),
                ),
            ),
        ),
        Section(
            "runs",
            "Runs",
            (
                Table(
                    f"runs: {len(runs)}, newest first (a run id links to its report)",
                    (
                        Header("run (its report)"),
                        Header("panel"),
                        Header("status"),
                        Header("started"),
                        Header("minutes", True),
                        Header("models"),
                        Header("cost (USD, lower is better)", True),
                    ),
                    tuple(run_rows),
                    kind="runs",
                ),
            ),
        ),
    ]


def build_index(store: Store) -> str:
    """Render the index of the store's runs and keep it; its key."""
    page = render_site(
        "roadeval reports",
        f"the runs of the store {store.uri}",
        index_sections(store),
        [],
    )
    store.put(INDEX_KEY, page.encode("utf-8"))
    return INDEX_KEY
