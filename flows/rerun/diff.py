"""What changed between two runs of one panel, as a `RunDiff`: the items (added, removed,
changed in their prompt or only in their reference), the item scores that moved (verdicts that
flipped) and the corpus metrics.

`landed` reads what a run landed against its baseline run (its `changes`, `score_changes` and
`metric_deltas` rows); `between` computes the same rows for any two runs of a panel from what
each landed (ledgers, scores, metrics), with the functions the run itself uses, so the two agree
for a run and its baseline. Everything is read through the catalogue, filtered by run id.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import duckdb

from roadeval.storage.catalog import read_views
from roadeval.storage.landing import read_rows
from roadeval.storage.records import (
    ChangeRow,
    ItemRow,
    MetricDeltaRow,
    MetricRow,
    ScoreChangeRow,
    ScoreRow,
)
from roadeval.storage.store import Store
from roadeval.storage.tables import manifest_key, part_key
from roadeval.tasks.report.run_reads import require_outcomes, run_record
from roadeval.tasks.rerun import deltas
from roadeval.tasks.rerun.changes import (
    CHANGED_SHOWN,
    ChangeKind,
    LedgerEntry,
    describe_change,
    item_changes,
    ledger_of,
)
from roadeval.tasks.rerun.deltas import metric_deltas, score_changes
from roadeval.tasks.results.formats import MISSING, SuiteRules
from roadeval.tasks.results.manifest import RunManifest, ServedRecord, shown_as
from roadeval.tasks.results.provenance_table import served_text
from roadeval.tasks.results.served_diff import ServedChange, served_changes

R = TypeVar("R")

# The kinds of item change, in the order they are shown (a change under `changed:<what>`).
KINDS = ("added", "removed", "changed:prompt", "changed:reference", "unchanged")
# Metrics listed before "... and N more" (unless every one is asked for).
METRIC_LIMIT = 25


class DiffError(ValueError):
    """Two runs that cannot be compared: an unknown run, or runs of different panels (a run
    with nothing scored is a `ReportError`, as `show` says it)."""


class NoBaseline(DiffError):
    """A run that was compared with no baseline run (the first of its panel)."""


@dataclass(frozen=True)
class RunDiff:
    """Run `run_b` against `run_a` (its baseline, or any run of the same panel): the rows a run
    lands against its baseline."""

    run_a: str
    run_b: str
    panel: str
    changes: tuple[ChangeRow, ...]
    score_changes: tuple[ScoreChangeRow, ...]
    metric_deltas: tuple[MetricDeltaRow, ...]
    # What served each model's answers in run A and in run B (their manifests' `served`).
    served: tuple[ServedChange, ...] = ()


@dataclass(frozen=True)
class _Run:
    """A run's row of the `runs` view, as a diff needs it."""

    run_id: str
    panel: str
    baseline_run_id: str | None
    manifest: RunManifest


def _rows(
    con: duckdb.DuckDBPyConnection, record: type[R], table: str, where: str, params: dict[str, Any]
) -> list[R]:
    """The rows of a view matching `where`, as its records."""
    result = con.execute(f"select * from {table} where {where}", params)
    columns = [d[0] for d in result.description or ()]
    return [record(**dict(zip(columns, row, strict=True))) for row in result.fetchall()]


def _runs(con: duckdb.DuckDBPyConnection, store: Store, run_ids: Sequence[str]) -> list[_Run]:
    """The runs named, in order; a DiffError for one the store has not."""
    found = {
        row[0]: _Run(row[0], row[1], row[2], RunManifest.from_json(row[3]))
        for row in con.execute(
            "select run_id, panel, baseline_run_id, manifest_json from runs "
            "where list_contains($ids, run_id)",
            {"ids": list(run_ids)},
        ).fetchall()
    }
    for run_id in run_ids:
        if run_id not in found:
            raise DiffError(
                f"no run {run_id} in the store {store.uri} (`roadeval runs` lists them)"
            )
        # A run with nothing scored (a dry run, one stopped before scoring) is refused as
        # `show` refuses it: compared, it would read as a run in which nothing changed.
        require_outcomes(con, run_record(con, run_id), "compare")
    return [found[run_id] for run_id in run_ids]


def landed(store: Store, run_id: str) -> RunDiff:
    """What run `run_id` landed against its baseline run; NoBaseline when it had none."""
    # The answers, parses and scores too: a run with none of them is refused (`_runs`).
    tables = [
        "run_events",
        "changes",
        "score_changes",
        "metric_deltas",
        "responses",
        "parses",
        "scores",
    ]
    # Read whole again when a compaction removes a part under it (`read_views`).
    return read_views(store, lambda con: _landed(con, store, run_id), runs=[run_id], tables=tables)


def _landed(con: duckdb.DuckDBPyConnection, store: Store, run_id: str) -> RunDiff:
    (run,) = _runs(con, store, [run_id])
    if run.baseline_run_id is None:
        raise NoBaseline(
            f"run {run_id} has no baseline run: no finished run of panel {run.panel!r} "
            f"came before it, so it was compared with nothing (every item of it is new); "
            f"`roadeval diff RUN_A {run_id}` compares it with another run of its panel"
        )
    where, params = "run_id = $run", {"run": run_id}
    return RunDiff(
        run.baseline_run_id,
        run_id,
        run.panel,
        tuple(_rows(con, ChangeRow, "changes", where, params)),
        tuple(_rows(con, ScoreChangeRow, "score_changes", where, params)),
        tuple(_rows(con, MetricDeltaRow, "metric_deltas", where, params)),
        tuple(served_changes(_baseline_served(store, run.baseline_run_id), run.manifest.served)),
    )


def between(store: Store, run_a: str, run_b: str) -> RunDiff:
    """Run `run_b` against `run_a`, computed from what each landed, as `run_b` would have
    landed it with `run_a` for its baseline; a DiffError for an unknown run or two panels."""
    # Read whole again when a compaction removes a part under it (`read_views`).
    return read_views(store, lambda con: _between(con, store, run_a, run_b), runs=[run_a, run_b])


def _between(con: duckdb.DuckDBPyConnection, store: Store, run_a: str, run_b: str) -> RunDiff:
    a, b = _runs(con, store, [run_a, run_b])
    if a.panel != b.panel:
        raise DiffError(
            f"runs {run_a} (panel {a.panel!r}) and {run_b} (panel {b.panel!r}) are of "
            "different panels: only runs of the same panel can be compared"
        )
    return RunDiff(
        run_a,
        run_b,
        b.panel,
        tuple(_item_changes(con, store, a, b)),
        tuple(_score_changes(con, a, b)),
        tuple(_metric_deltas(con, a, b)),
        tuple(served_changes(a.manifest.served, b.manifest.served)),
    )


def _baseline_served(store: Store, run_id: str) -> list[ServedRecord]:
    """What served the answers of a run's baseline run, from its manifest (none where the
    manifest is gone: the baseline's answers are compared with nothing then)."""
    try:
        return RunManifest.from_json(store.get(manifest_key(run_id))).served
    except FileNotFoundError:
        return []


def _changes_of(con: duckdb.DuckDBPyConnection, run: _Run) -> dict[str, list[ChangeRow]]:
    """A run's `changes` rows, by suite."""
    found: dict[str, list[ChangeRow]] = {}
    for row in _rows(con, ChangeRow, "changes", "run_id = $run", {"run": run.run_id}):
        found.setdefault(row.suite, []).append(row)
    return found


def _ledger(
    store: Store, run: _Run, suite: str, rows: Mapping[str, list[ChangeRow]]
) -> dict[str, LedgerEntry]:
    """A run's ledger of a suite, from its `changes` rows; from its items (no prompt hashes)
    for a run that landed none; {} when the run had no such suite."""
    if suite in rows:
        return ledger_of(rows[suite])
    record = next((s for s in run.manifest.suites if s.name == suite), None)
    key = part_key("items", f"items-{record.hash}", suite=suite) if record else None
    if key is None or not store.exists(key):
        return {}
    items: list[ItemRow] = read_rows(store, "items", [key])
    return {
        row.item_id: LedgerEntry(row.item_id, row.task, row.content_hash, None) for row in items
    }


def _items(
    con: duckdb.DuckDBPyConnection, suite: str, hashes: Iterable[str]
) -> dict[tuple[str, str], ItemRow]:
    """A suite's item rows of these content hashes, by item id and content hash."""
    where = "suite = $suite and list_contains($hashes, content_hash)"
    rows = _rows(con, ItemRow, "items", where, {"suite": suite, "hashes": sorted(hashes)})
    return {(row.item_id, row.content_hash): row for row in rows}


def _item_changes(
    con: duckdb.DuckDBPyConnection, store: Store, a: _Run, b: _Run
) -> list[ChangeRow]:
    """Every suite of `b`: its ledger against `a`'s, the fields of moved items read from the
    items table by content hash."""
    old_rows, new_rows = _changes_of(con, a), _changes_of(con, b)
    rows: list[ChangeRow] = []
    for suite in dict.fromkeys([s.name for s in b.manifest.suites] + sorted(new_rows)):
        new = _ledger(store, b, suite, new_rows)
        old = _ledger(store, a, suite, old_rows)
        moved = [
            (item_id, old[item_id].content_hash, entry.content_hash)
            for item_id, entry in new.items()
            if item_id in old and old[item_id].content_hash != entry.content_hash
        ]
        # The fields that moved, read from the items table only when some did.
        found = _items(con, suite, {h for _, *pair in moved for h in pair}) if moved else {}
        before = {i: found[i, h] for i, h, _ in moved if (i, h) in found}
        after = {i: found[i, h] for i, _, h in moved if (i, h) in found}
        rows.extend(item_changes(b.run_id, a.run_id, suite, list(new.values()), old, after, before))
    return rows


def _score_changes(con: duckdb.DuckDBPyConnection, a: _Run, b: _Run) -> list[ScoreChangeRow]:
    """Per suite x model x item (of one sample, shown one way) scored by both runs: the metrics
    whose value or status moved."""
    scored: dict[tuple[str, str, str, str, int, str], list[ScoreRow]] = {}
    params = {"ids": [a.run_id, b.run_id]}
    for row in _rows(con, ScoreRow, "scores", "list_contains($ids, run_id)", params):
        whose = (row.run_id, row.suite, row.model, row.item_id, row.sample or 1, row.variant or "")
        scored.setdefault(whose, []).append(row)
    moved: list[ScoreChangeRow] = []
    for (run_id, suite, model, item_id, sample, variant), new in sorted(scored.items()):
        old = scored.get((a.run_id, suite, model, item_id, sample, variant))
        if run_id == b.run_id and old:
            moved.extend(score_changes(b.run_id, a.run_id, old, new))
    return moved


def _metric_deltas(con: duckdb.DuckDBPyConnection, a: _Run, b: _Run) -> list[MetricDeltaRow]:
    """`b`'s metrics against `a`'s, over the suite x model pairs `b` ran."""
    params = {"ids": [a.run_id, b.run_id]}
    rows = _rows(con, MetricRow, "metrics", "list_contains($ids, run_id)", params)
    pairs = [(pair.suite, pair.model) for pair in b.manifest.counts]
    old = [row for row in rows if row.run_id == a.run_id]
    new = [row for row in rows if row.run_id == b.run_id]
    return metric_deltas(b.run_id, a.run_id, old, new, pairs)


@dataclass(frozen=True)
class ScoreLine:
    """One suite x model's score changes: rows, items, and 0/1 verdicts turned over."""

    suite: str
    model: str
    changes: int
    items: int
    flipped: int
    lost: int
    gained: int


def item_counts(diff: RunDiff) -> dict[str, dict[str, int]]:
    """Items per suite (sorted) and kind of change (every kind of `KINDS`, 0 included)."""
    counts: dict[str, dict[str, int]] = {}
    for row in diff.changes:
        kind = f"{row.kind}:{row.what}" if row.kind == ChangeKind.CHANGED else row.kind
        per_suite = counts.setdefault(row.suite, dict.fromkeys(KINDS, 0))
        per_suite[kind] = per_suite.get(kind, 0) + 1
    return dict(sorted(counts.items()))


def score_lines(diff: RunDiff) -> list[ScoreLine]:
    """Per suite x model (x variant: a blind ablation's apart) with score changes, sorted."""
    pairs: dict[tuple[str, str], list[ScoreChangeRow]] = {}
    for row in diff.score_changes:
        pairs.setdefault((row.suite, shown_as(row.model, row.variant)), []).append(row)
    return [
        ScoreLine(
            suite,
            model,
            len(rows),
            len({(row.item_id, row.sample) for row in rows}),
            sum(row.flipped for row in rows),
            sum(row.flipped and row.old_value == 1.0 for row in rows),
            sum(row.flipped and row.old_value == 0.0 for row in rows),
        )
        for (suite, model), rows in sorted(pairs.items())
    ]


def moved_metrics(diff: RunDiff) -> list[MetricDeltaRow]:
    """The metrics that moved, as the report counts them too (`deltas.moved_metrics`)."""
    keys = ((row.suite, row.task) for row in diff.metric_deltas)
    return deltas.moved_metrics(diff.metric_deltas, deltas.one_task_suites(keys))


def changed_items(diff: RunDiff) -> list[ChangeRow]:
    """The items added, removed or changed, by suite, kind and id."""
    found = [row for row in diff.changes if row.kind != ChangeKind.UNCHANGED]
    return sorted(found, key=lambda r: (r.suite, r.kind, r.what or "", r.item_id))


def metric_texts(row: MetricDeltaRow, rules: SuiteRules) -> tuple[str, str, str, str, str]:
    """A moved metric's slice, baseline, new value, signed delta, and whether the move is
    better or worse by the metric's direction (its suite's vocabulary), as printed."""
    old, new = ("absent" if v is None else f"{v:.4g}" for v in (row.baseline_value, row.new_value))
    if row.delta is not None:
        delta = f"{row.delta:+.4g}"
        verdict = rules.metric(row.suite, row.metric).verdict(row.delta).value
    else:
        delta = "added" if row.baseline_value is None else "removed"
        verdict = MISSING
    return (f"{row.slice}={row.slice_value}" if row.slice else "all", old, new, delta, verdict)


def diff_rules(diff: RunDiff) -> SuiteRules:
    """What the diff's suites say of their metrics (which way is better)."""
    return SuiteRules({row.suite for row in diff.metric_deltas})


def served_shown(diff: RunDiff) -> list[ServedChange]:
    """The models whose provider named what served them in either run (the others have
    nothing to compare)."""
    return [change for change in diff.served if change.named]


def served_cells(change: ServedChange) -> tuple[str, str, str, str, str]:
    """Run A's served models and fingerprints, run B's, and whether they changed, as cells."""
    changed = "changed" if change.changed else "same" if change.before and change.after else "-"
    return (*served_text(list(change.before)), *served_text(list(change.after)), changed)


def header(diff: RunDiff) -> str:
    return f"run {diff.run_b} against {diff.run_a} (panel {diff.panel})"


def summary_lines(diff: RunDiff, show_all: bool = False) -> list[str]:
    """The diff as plain lines: items per suite and kind, score changes per suite x model, and
    the metrics that moved (the first METRIC_LIMIT, unless `show_all`)."""
    lines = [header(diff), "items:"]
    for suite, counts in item_counts(diff).items():
        lines.append(f"  {suite}: " + ", ".join(f"{k} {counts[k]}" for k in KINDS))
    scores = score_lines(diff)
    lines.append("scores:" if scores else "scores: none changed")
    for s in scores:
        lines.append(
            f"  {s.suite} x {s.model}: flipped {s.flipped} (1 to 0: {s.lost}, 0 to 1: "
            f"{s.gained}), {s.changes} score changes on {s.items} items"
        )
    changed = changed_items(diff)
    lines.append(f"items changed: {len(changed)}" if changed else "items changed: none")
    listed = changed if show_all else changed[:CHANGED_SHOWN]
    lines += [f"  {r.suite} {r.item_id}: {change_text(r)}" for r in listed]
    if len(changed) > len(listed):
        lines.append(more_text(len(changed) - len(listed)))
    moved = moved_metrics(diff)
    rules = diff_rules(diff)
    lines.append(f"metrics moved: {len(moved)}" if moved else "metrics moved: none")
    shown = moved if show_all else moved[:METRIC_LIMIT]
    for r in shown:
        where, old, new, delta, verdict = metric_texts(r, rules)
        lines.append(
            f"  {r.suite} {r.task} {shown_as(r.model, r.variant)} {r.metric} [{where}]: {old} -> "
            f"{new} ({delta}, {verdict})"
        )
    if len(moved) > len(shown):
        lines.append(more_text(len(moved) - len(shown)))
    served = served_shown(diff)
    changed_served = [c for c in served if c.changed]
    if served:
        lines.append(f"what served the answers: changed for {len(changed_served)} of {len(served)}")
    for change in changed_served:
        a_model, a_prints, b_model, b_prints, _ = served_cells(change)
        lines.append(
            f"  {change.model} ({change.role}): {a_model} {a_prints} -> {b_model} {b_prints}"
        )
    return lines


def change_text(row: ChangeRow) -> str:
    """What happened to an item: added, removed, or changed and in what (its fields)."""
    return describe_change(row.kind, row.what, row.fields)


def more_text(left: int) -> str:
    return f"... and {left} more (--all shows every one)"
