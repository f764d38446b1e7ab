"""`roadeval runs`: the store's runs, one row each, read from the `runs` view and each run's
manifest. The rows keep exact values (csv and json print them as they are); the terminal table
says them for people: whole run ids (the id other commands take), costs rounded, a cost nobody
knows said to be unknown, what each run left out of its results, and only the columns that fit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from roadeval.tasks.results.fitting import FitColumn, Fitted, fitted_table
from roadeval.tasks.results.left_out import left_out
from roadeval.tasks.results.manifest import RunManifest
from roadeval.tasks.results.money import cost_text
from roadeval.tasks.shard.counts import COUNT_HEADINGS

MANIFEST = "manifest_json"
# Columns the listing adds to what the query read: from each run's manifest.
LEFT_OUT_COLUMNS = ("n_skipped", "n_not_covered", "left_out")
UNKNOWN_COST = "n_unknown_cost"
# A row's record key for `left_out` without the reasons (no column of the listing).
BRIEFLY = "left out briefly"
# Where the columns the table leaves out are.
EVERY_COLUMN = "a wider terminal, or --format csv or json, shows every column"


@dataclass(frozen=True)
class RunList:
    """The listing: `columns` and their `rows`, one per run, values exact; and per run what it
    left out in a few words per suite (`left_out` without the reasons, for a narrow column)."""

    columns: list[str]
    rows: list[tuple[Any, ...]]
    left_out_briefly: list[str]

    def records(self) -> list[dict[str, Any]]:
        """Each row by column name, with what it left out briefly under `BRIEFLY`."""
        return [
            {**dict(zip(self.columns, row, strict=True)), BRIEFLY: brief}
            for row, brief in zip(self.rows, self.left_out_briefly, strict=True)
        ]


def _manifest(text: str | None) -> RunManifest | None:
    """The run's manifest, None when it does not read (a run recorded by other code)."""
    try:
        return RunManifest.from_json(text or "")
    except ValueError:
        return None


def _left_out_cells(manifest: RunManifest | None) -> tuple[int | None, int | None, str, str]:
    """(rows skipped at load, item x model pairs no baseline rule covers, per suite in words
    with the first reason, the same without it); unknown for a manifest that does not read."""
    if manifest is None:
        return None, None, "", ""
    found = left_out(manifest)
    text = "; ".join(f"{s.summary} (first: {s.first_reason})" for s in found)
    brief = "; ".join(s.summary for s in found)
    skipped = sum(s.skipped for s in found)
    return skipped, sum(s.not_covered_items for s in found), text, brief


def _unknown_cost(recorded: int | None, manifest: RunManifest | None) -> int | None:
    """Requests of unknown cost as recorded; for a run from before they were counted, 0 when
    every cost was known, else None (some, how many not recorded)."""
    if recorded is not None:
        return int(recorded)
    if manifest is not None and all(c.cost_known for c in manifest.counts):
        return 0
    return None


def run_list(columns: Sequence[str], rows: Sequence[tuple[Any, ...]]) -> RunList:
    """The query's rows (each with its run's `manifest_json` and `n_unknown_cost`) with the
    left-out columns added before `message`, the manifest dropped."""
    at = {name: index for index, name in enumerate(columns)}
    kept = [name for name in columns if name != MANIFEST]
    before = kept.index("message") if "message" in kept else len(kept)
    names = [*kept[:before], *LEFT_OUT_COLUMNS, *kept[before:]]
    listed, briefly = [], []
    for row in rows:
        manifest = _manifest(row[at[MANIFEST]])
        cells = {name: row[at[name]] for name in kept}
        cells[UNKNOWN_COST] = _unknown_cost(cells[UNKNOWN_COST], manifest)
        *found, brief = _left_out_cells(manifest)
        cells.update(zip(LEFT_OUT_COLUMNS, found, strict=True))
        listed.append(tuple(cells[name] for name in names))
        briefly.append(brief)
    return RunList(names, listed, briefly)


def _count(name: str) -> Callable[[dict[str, Any]], str]:
    return lambda row: "" if row[name] is None else f"{int(row[name]):,}"


def _when(name: str) -> Callable[[dict[str, Any]], str]:
    """A time to the second, in UTC as stored."""

    def read(row: dict[str, Any]) -> str:
        value = row[name]
        if isinstance(value, datetime):
            return value.strftime("%Y-%m-%d %H:%M:%S")
        return "" if value is None else str(value)

    return read


def _text(name: str) -> Callable[[dict[str, Any]], str]:
    return lambda row: "" if row[name] is None else str(row[name])


def _scored_of_planned(row: dict[str, Any]) -> str:
    """Items scored over items planned, one word (`28/31`): two counts in one narrow column."""
    return f"{_count('n_scored')(row)}/{_count('n_items')(row)}"


def _cost(row: dict[str, Any]) -> str:
    return cost_text(float(row["cost_usd"] or 0), row[UNKNOWN_COST])


@dataclass(frozen=True)
class _Shown:
    """A column of the table: its heading, how a row's cell reads, whether it stays whole (on
    one line) and aligns right."""

    heading: str
    read: Callable[[dict[str, Any]], str]
    whole: bool = False
    numeric: bool = False


# The table's columns in the order they give way to a narrow terminal (the run id never does).
_TABLE = (
    _Shown("run", _text("run_id"), whole=True),
    _Shown("status", _text("status")),
    _Shown("items scored / planned", _scored_of_planned, numeric=True),
    _Shown(COUNT_HEADINGS["errors"], _count("n_errors"), numeric=True),
    _Shown("cost", _cost, numeric=True),
    _Shown("left out", _text(BRIEFLY)),
    _Shown("items not finished", _count("n_unfinished"), numeric=True),
    _Shown("panel", _text("panel")),
    _Shown(COUNT_HEADINGS["scorer_errors"], _count("n_scorer_errors"), numeric=True),
    _Shown(COUNT_HEADINGS["calls"], _count("n_calls"), numeric=True),
    _Shown(COUNT_HEADINGS["cached"], _count("n_cached"), numeric=True),
    _Shown("started (UTC)", _when("started_at")),
    _Shown("suites", _text("suites")),
    _Shown("models", _text("models")),
    _Shown("ended (UTC)", _when("ended_at")),
    _Shown("baseline run", _text("baseline"), whole=True),
    _Shown("message", _text("message")),
)


def runs_table(listing: RunList, width: int) -> Fitted:
    """The listing as a table `width` columns wide at most, every run id whole."""
    records = listing.records()
    columns = [
        FitColumn(
            shown.heading,
            tuple(shown.read(record) for record in records),
            whole=shown.whole,
            numeric=shown.numeric,
        )
        for shown in _TABLE
    ]
    return fitted_table(columns, width)
