"""The run summary's table of what its answers rest on, per model and role: how long it could
reuse a stored answer, how many it reused and how old the oldest was when the run began, how
many it asked again as too old, and what its provider said served its answers."""

from __future__ import annotations

from datetime import datetime

from rich.markup import escape
from rich.table import Table

from roadeval.tasks.results.manifest import RunManifest, ServedRecord

# Served models or fingerprints listed in a cell before "+N more".
SHOWN = 3


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


def provenance_table(manifest: RunManifest) -> Table | None:
    """The table, or None for a manifest from before it was recorded."""
    if not manifest.freshness:
        return None
    table = Table(title="answers reused, and what served them", title_justify="left")
    for name in ("model", "role", "reuse_for"):
        table.add_column(name)
    for name in ("answers bought", "answers reused", "oldest reused (age)", "stale, asked again"):
        table.add_column(name, justify="right")
    table.add_column("served model")
    table.add_column("system_fingerprint")
    for entry in manifest.freshness:
        mine = [s for s in manifest.served if (s.model, s.role) == (entry.model, entry.role)]
        oldest = entry.oldest_reused
        age = age_text(oldest, manifest.started_at) if oldest is not None else "-"
        table.add_row(
            escape(entry.model),
            entry.role,
            entry.reuse_for,
            str(sum(s.answers for s in mine)),
            str(entry.reused),
            age,
            str(entry.stale),
            *map(escape, served_text(mine)),
        )
    table.caption = (
        "answers bought: asked this run; reused: from the store or the baseline run; oldest "
        "reused: how long before the run began it was bought; stale: stored answers older "
        "than reuse_for, asked again. Counts are of answers (one per attempt) or verdicts; "
        "a new served model or fingerprint against an earlier run says the model changed."
    )
    return table
