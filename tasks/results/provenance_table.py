"""The run summary's table of what its answers rest on, per model and role: how long it could
reuse a stored answer, how many it reused and how old the oldest was when the run began, how
many it asked again as too old, and what its provider said served its answers. `provenance`
is the table's content, drawn by the terminal (`provenance_table`) and the HTML report alike."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from rich.table import Table

from roadeval.tasks.results.fitting import FitColumn, captioned, fitted_table
from roadeval.tasks.results.manifest import HorizonRecord, RunManifest, ServedRecord

# Served models or fingerprints listed in a cell before "+N more".
SHOWN = 3

PROVENANCE_TITLE = "answers reused, and what served them"
PROVENANCE_CAPTION = (
    "answers bought: asked this run; reused: from the store or the baseline run; oldest "
    "reused: how long before the run began it was bought; stale: stored answers older "
    "than reuse_for, asked again. Counts are of answers (one per attempt) or verdicts; "
    "a new served model or fingerprint against an earlier run says the model changed."
)


def age_text(bought: datetime, started: datetime) -> str:
    """How long before `started` an answer was `bought`, in its largest whole-ish unit."""
    seconds = max(0.0, (started - bought).total_seconds())
    for unit, size in (("d", 86_400), ("h", 3_600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} s"


def _listed(values: list[str]) -> str:
    shown = ", ".join(values[:SHOWN])
    return shown + (f" +{len(values) - SHOWN} more" if len(values) > SHOWN else "")


def served_text(records: list[ServedRecord]) -> tuple[str, str]:
    """The distinct served models and fingerprints of one model's answers, as plain text ('-'
    where the provider named none)."""
    models = sorted({r.served_model for r in records if r.served_model})
    prints = sorted({r.system_fingerprint for r in records if r.system_fingerprint})
    return (_listed(models) or "-", _listed(prints) or "-")


@dataclass(frozen=True)
class ProvenanceRow:
    """One model in one role: the table's cells, numbers as numbers (a report sorts them)."""

    model: str
    role: str
    reuse_for: str
    bought: int
    reused: int
    # Seconds before the run began that the oldest reused answer was bought (None: none).
    oldest_age_s: float | None
    oldest_age: str
    stale: int
    served_models: str
    fingerprints: str


@dataclass(frozen=True)
class Provenance:
    """The table's rows, and the line saying whose start `reuse_for` was measured from when
    the run continued another (empty: its own start)."""

    rows: tuple[ProvenanceRow, ...]
    horizon: str


def horizon_text(horizon: HorizonRecord | None) -> str:
    """Whose start a resumed run measured `reuse_for` from, in a line ('' for a run that
    measured from its own, or a manifest from before it was recorded)."""
    if horizon is None or horizon.continues is None:
        return ""
    chain = "" if horizon.run_id == horizon.continues else f", which continued {horizon.run_id}"
    return (
        f"reuse_for measured from the start of run {horizon.run_id} "
        f"({horizon.started_at:%Y-%m-%d %H:%M:%S %Z}): this run continues "
        f"{horizon.continues} ({horizon.continued_status}{chain}), whose answers it reuses"
    )


def provenance(manifest: RunManifest) -> Provenance | None:
    """The table's content, or None for a manifest from before it was recorded."""
    if not manifest.freshness:
        return None
    rows = []
    for entry in manifest.freshness:
        mine = [s for s in manifest.served if (s.model, s.role) == (entry.model, entry.role)]
        oldest = entry.oldest_reused
        age_s = max(0.0, (manifest.started_at - oldest).total_seconds()) if oldest else None
        rows.append(
            ProvenanceRow(
                entry.model,
                entry.role,
                entry.reuse_for,
                sum(s.answers for s in mine),
                entry.reused,
                age_s,
                age_text(oldest, manifest.started_at) if oldest is not None else "-",
                entry.stale,
                *served_text(mine),
            )
        )
    return Provenance(tuple(rows), horizon_text(manifest.horizon))


PROVENANCE_HEADINGS = (
    "model",
    "role",
    "reuse_for",
    "answers bought",
    "answers reused",
    "oldest reused (age)",
    "stale, asked again",
    "served model",
    "system_fingerprint",
)
# The headings of the columns that hold counts (right-aligned, sorted as numbers).
NUMERIC = frozenset(PROVENANCE_HEADINGS[3:7])


def provenance_table(manifest: RunManifest, width: int) -> Table | None:
    """The table for the terminal at most `width` wide (model and role whole; the columns that
    do not fit named under it), or None for a manifest from before it was recorded."""
    found = provenance(manifest)
    if found is None:
        return None
    cells = [
        (
            row.model,
            row.role,
            row.reuse_for,
            f"{row.bought:,}",
            f"{row.reused:,}",
            row.oldest_age,
            f"{row.stale:,}",
            row.served_models,
            row.fingerprints,
        )
        for row in found.rows
    ]
    columns = [
        FitColumn(
            heading,
            tuple(line[at] for line in cells),
            whole=at < 2,
            kept=at < 2,
            numeric=heading in NUMERIC,
            folds=at >= 7,
        )
        for at, heading in enumerate(PROVENANCE_HEADINGS)
    ]
    fitted = fitted_table(columns, width, PROVENANCE_TITLE, edge=True)
    return captioned(fitted, width, [line for line in (found.horizon, PROVENANCE_CAPTION) if line])
