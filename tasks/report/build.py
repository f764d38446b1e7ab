"""Building a run's report: read it from the store, draw the page, keep it in the store at
`reports/<run_id>.html` (and where `out` says, if anywhere)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from roadeval.storage.store import Store
from roadeval.tasks.report.reading import Timings, read_report

REPORTS = "reports/"


def report_key(run_id: str) -> str:
    return f"{REPORTS}{run_id}.html"


@dataclass(frozen=True)
class BuiltReport:
    """Where the report went: its key and location in the store, and the `out` file."""

    run_id: str
    key: str
    location: str
    out: Path | None
    size: int


def build_report(
    store: Store,
    run_id: str,
    *,
    out: Path | None = None,
    timings: Timings | None = None,
    helper: bool = False,
) -> BuiltReport:
    """Build and keep the report of `run_id`: a ReportError when the run is unknown or has no
    scores (nothing is written then). `helper`: draw half the figures in a helper process
    (see `drawing.drawings`)."""
    from roadeval.tasks.report.drawing import drawings
    from roadeval.tasks.report.page import render

    timings = timings or Timings()
    # The figures' helper starts first: it imports matplotlib while the store is read.
    with drawings(helper):
        data = read_report(store, run_id, timings)
        with timings.measure("render"):
            page = render(data).encode("utf-8")
    key = report_key(run_id)
    with timings.measure("keep"):
        store.put(key, page)
        if out is not None:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(page)
    return BuiltReport(run_id, key, store.location(key), out, len(page))
