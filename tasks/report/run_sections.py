"""The report's sections on the run itself: cost, tokens and health per model and role; what
changed since its baseline run; and its identity (the manifest: panel, suites with versions and
hashes, models with endpoints and settings, code version, times, status)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime

from roadeval.tasks.report.blocks import Block, Cell, Figure, Fold, Header, Note, Table, plain
from roadeval.tasks.report.change_reads import KINDS, MOVED_SHOWN, Changes
from roadeval.tasks.report.reading import ReportData
from roadeval.tasks.report.run_reads import CostRow
from roadeval.tasks.rerun.changes import changed_items_query, describe_change
from roadeval.tasks.results.formats import MISSING, SuiteRules, format_value
from roadeval.tasks.results.manifest import RunManifest
from roadeval.tasks.results.money import cost_text
from roadeval.tasks.results.provenance_table import (
    NUMERIC,
    PROVENANCE_CAPTION,
    PROVENANCE_HEADINGS,
    PROVENANCE_TITLE,
    provenance,
)
from roadeval.tasks.shard.counts import COUNT_HEADINGS


def _count(n: int, **data: str) -> Cell:
    return Cell(str(n), n, data=data)


def _usd(usd: float, unknown: int) -> Cell:
    title = f"${usd!r} known; {unknown} requests have no known cost" if unknown else f"${usd!r}"
    return Cell(cost_text(usd, unknown), usd, title=title)


def _cost_rows(rows: Sequence[CostRow], by_suite: bool) -> tuple[tuple[Cell, ...], ...]:
    totals: dict[tuple[str, ...], list[float]] = defaultdict(lambda: [0.0] * 7)
    for r in rows:
        key: tuple[str, ...] = (r.model, r.suite, r.role) if by_suite else (r.model, r.role)
        numbers = (r.requests, r.reused, r.tokens_in, r.tokens_out, r.usd, r.unknown, r.failed)
        totals[key] = [a + b for a, b in zip(totals[key], numbers, strict=True)]
    out = []
    for key, (requests, reused, t_in, t_out, usd, unknown, failed) in sorted(totals.items()):
        out.append(
            (
                *(plain(part) for part in key),
                _count(int(requests)),
                _count(int(reused)),
                _count(int(t_in)),
                _count(int(t_out)),
                _usd(usd, int(unknown)),
                Cell(str(int(failed)), int(failed), emphasis=bool(failed)),
            )
        )
    return tuple(out)


_COST_HEADERS = (
    "requests sent",
    "answers reused",
    "tokens in",
    "tokens out",
    "USD",
    "failed requests",
)


def _health_table(manifest: RunManifest) -> Table:
    names = ("items", "scored", "calls", "cached", "errors", "abnormal", "unparsed", "reasks")
    judged = any(c.judge_calls or c.judge_cached or c.unscored for c in manifest.counts)
    extra = ("judge_calls", "judge_cached", "unscored") if judged else ()
    headers = (
        Header("suite"),
        Header("model"),
        *(
            Header(COUNT_HEADINGS.get(n, n), True, manifest.count_meanings.get(n, ""))
            for n in (*names, *extra)
        ),
    )
    rows = tuple(
        (
            plain(c.suite),
            plain(c.model),
            *(
                Cell(str(getattr(c, n)), getattr(c, n), emphasis=n == "errors" and c.errors > 0)
                for n in (*names, *extra)
            ),
        )
        for c in manifest.counts
    )
    return Table("health per suite and model (the run's counts)", headers, rows, "health")


def provenance_blocks(manifest: RunManifest) -> list[Block]:
    """What the run's answers rest on per model and role (`provenance`, as the terminal's
    summary shows it), with whose start `reuse_for` was measured from for a resumed run."""
    found = provenance(manifest)
    if found is None:
        return []
    headers = tuple(Header(h, h in NUMERIC) for h in PROVENANCE_HEADINGS)
    rows = tuple(
        (
            plain(row.model),
            plain(row.role),
            plain(row.reuse_for),
            _count(row.bought),
            _count(row.reused),
            Cell(row.oldest_age, row.oldest_age_s if row.oldest_age_s is not None else -1.0),
            _count(row.stale),
            plain(row.served_models),
            plain(row.fingerprints),
        )
        for row in found.rows
    )
    table = Table(PROVENANCE_TITLE, headers, rows, "provenance", footnote=PROVENANCE_CAPTION)
    return [*([Note(found.horizon)] if found.horizon else []), table]


def cost_blocks(data: ReportData) -> list[Block]:
    """Per model and role: requests, reused answers, tokens, USD, failed requests (per suite
    too, folded); bars of tokens and of cost per model where there are any; the run's health;
    what its answers rest on (reused, how old, what served them)."""
    from roadeval.tasks.report.drawing import draw
    from roadeval.tasks.report.plots import stacked_bars

    blocks: list[Block] = []
    if data.costs:
        headers = (Header("model"), Header("role"), *(Header(h, True) for h in _COST_HEADERS))
        blocks.append(Table("cost per model and role", headers, _cost_rows(data.costs, False)))
        detail = (
            Header("model"),
            Header("suite"),
            Header("role"),
            *(Header(h, True) for h in _COST_HEADERS),
        )
        table = Table("cost per model, suite and role", detail, _cost_rows(data.costs, True))
        blocks.append(Fold("cost per model, suite and role", (table,)))
        models = sorted({r.model for r in data.costs})
        tokens_in = [sum(r.tokens_in for r in data.costs if r.model == m) for m in models]
        tokens_out = [sum(r.tokens_out for r in data.costs if r.model == m) for m in models]
        if any(tokens_in) or any(tokens_out):
            svg = draw(
                stacked_bars,
                models,
                [
                    ("tokens in", [float(t) for t in tokens_in]),
                    ("tokens out", [float(t) for t in tokens_out]),
                ],
                ylabel="tokens",
            )
            blocks.append(
                Figure(svg, "tokens per model (this run's requests; reused answers cost none)")
            )
        roles = sorted({r.role for r in data.costs})
        usd = [
            (
                role,
                [sum(r.usd for r in data.costs if r.model == m and r.role == role) for m in models],
            )
            for role in roles
        ]
        if any(any(v) for _, v in usd):
            blocks.append(
                Figure(draw(stacked_bars, models, usd, ylabel="USD"), "cost per model, by role")
            )
    manifest = data.run.manifest
    if manifest is not None and manifest.counts:
        blocks.append(_health_table(manifest))
    if manifest is not None:
        blocks += provenance_blocks(manifest)
    return blocks


def change_blocks(changes: Changes, rules: SuiteRules, run_id: str) -> list[Block]:
    """Items per suite and kind of change, the changed items by id, score changes and flipped
    verdicts per suite x model, and the metrics that moved (each marked better or worse by the
    metric's direction), counted as `roadeval changes` counts them."""
    if changes.baseline_run_id is None:
        return []
    blocks: list[Block] = [Note(f"compared with the baseline run {changes.baseline_run_id}")]
    items = tuple(
        (plain(suite), *(_count(counts.get(kind, 0)) for kind in KINDS))
        for suite, counts in sorted(changes.items.items())
    )
    headers = (Header("suite"), *(Header(k, True) for k in KINDS))
    blocks.append(Table("items against the baseline run", headers, items, "changes"))
    if changes.changed:
        blocks.append(_changed_table(changes, run_id))
    if changes.scores:
        headers = (
            Header("suite"),
            Header("model"),
            Header("variant"),
            *(Header(h, True) for h in ("score changes", "flipped", "1 to 0", "0 to 1", "items")),
        )
        rows = tuple(
            (
                plain(s.suite),
                plain(s.model),
                plain(s.variant or "as released"),
                _count(s.changes),
                Cell(str(s.flipped), s.flipped, emphasis=bool(s.flipped)),
                _count(s.lost),
                _count(s.gained),
                _count(s.items),
            )
            for s in changes.scores
        )
        blocks.append(Table("scores that changed", headers, rows, "score-changes"))
    else:
        blocks.append(Note("no item's score changed"))
    if not changes.moved:
        blocks.append(Note("no metric moved"))
        return blocks
    blocks.append(_moved_table(changes, rules))
    return blocks


def _changed_table(changes: Changes, run_id: str) -> Table:
    rows = tuple(
        (plain(c.suite), plain(c.item_id), plain(describe_change(c.kind, c.what, c.fields)))
        for c in changes.changed
    )
    caption = f"items that changed: {changes.changed_total}"
    footnote = ""
    if changes.changed_total > len(changes.changed):
        caption += f" (the first {len(changes.changed)} listed)"
        footnote = f'every one: roadeval query "{changed_items_query(run_id)}"'
    headers = (Header("suite"), Header("item"), Header("change"))
    return Table(caption, headers, rows, "changed-items", footnote=footnote)


def _moved_table(changes: Changes, rules: SuiteRules) -> Table:
    named = ("suite", "task", "model", "metric", "slice", "variant")
    headers = (
        *(Header(h) for h in named),
        Header("baseline", True),
        Header("new", True),
        Header("delta", True, "new minus baseline: ▲ rose, ▼ fell"),
        Header("which way", False, "better or worse by the metric's direction"),
    )
    rows = []
    for m in changes.moved:
        info = rules.metric(m.suite, m.metric)
        verdict = MISSING if m.delta is None else info.verdict(m.delta).value
        rows.append(
            (
                plain(m.suite),
                plain(m.task),
                plain(m.model),
                Cell(info.label, m.metric, title=f"{m.metric}: {info.description}"),
                plain(f"{m.slice} = {m.slice_value}" if m.slice else "all items"),
                plain(m.variant or "as released"),
                _value(m.baseline_value),
                _value(m.new_value),
                _delta(m.delta, m.baseline_value, verdict, info.direction),
                Cell(verdict, verdict, data={"verdict": verdict}, emphasis=verdict == "worse"),
            )
        )
    caption = f"metrics that moved: {changes.moved_total}"
    if changes.moved_total > len(changes.moved):
        caption += f" (the first {MOVED_SHOWN} shown; `roadeval changes --all` lists every one)"
    footnote = (
        "counted as `roadeval changes` and `roadeval diff` count them: every metric whose value "
        "changed, over all items and in slices; ▲/▼: the value rose/fell, green when that is "
        "better by the metric's direction, red when worse"
    )
    return Table(caption, headers, tuple(rows), "metric-deltas", footnote=footnote)


def _value(value: float | None) -> Cell:
    return Cell(format_value(value) if value is not None else "absent", value)


def _delta(delta: float | None, baseline: float | None, verdict: str, direction: str) -> Cell:
    if delta is None:
        return Cell("added" if baseline is None else "removed", None)
    sign = "up" if delta > 0 else "down"
    return Cell(
        f"{delta:+.4g}",
        delta,
        title=f"{verdict} ({direction})",
        data={"sign": sign, "verdict": verdict},
        mark="▲" if delta > 0 else "▼",
    )


def _when(value: datetime | None) -> str:
    return value.isoformat(timespec="seconds") if value is not None else MISSING


def identity_blocks(data: ReportData) -> list[Block]:
    """The run's record and its manifest: what ran, on what, from which code, when."""
    run, manifest = data.run, data.run.manifest
    facts: list[tuple[str, str]] = [
        ("run", run.run_id),
        ("panel", run.panel),
        ("status", run.status + (f": {run.message}" if run.message else "")),
        ("started", _when(run.started_at)),
        ("ended", _when(run.ended_at)),
        ("code version", run.code_version),
        ("baseline run", run.baseline_run_id or "none"),
    ]
    if manifest is not None:
        totals = manifest.totals
        facts += [
            (f"{COUNT_HEADINGS['items']} (each suite's items x its models)", str(totals.items)),
            (COUNT_HEADINGS["scored"], str(totals.scored)),
        ]
    facts.append(
        ("score rows with a value (one per item, metric and sample)", str(data.score_rows))
    )
    if run.started_at and run.ended_at:
        facts.insert(5, ("took", f"{(run.ended_at - run.started_at).total_seconds():.1f} s"))
    if manifest is not None:
        facts += [("store", manifest.store), ("orchestrator", manifest.orchestrator)]
        if manifest.engines is not None:
            engines = manifest.engines
            facts.append(("engines", json.dumps(engines.model_dump(), sort_keys=True)))
        if manifest.budget_usd is not None:
            facts.append(("budget", f"${manifest.budget_usd:,.2f}"))
    table = Table(
        "the run",
        (Header("what"), Header("value")),
        tuple((plain(k), plain(v)) for k, v in facts),
        "identity",
    )
    blocks: list[Block] = [table]
    if manifest is None:
        blocks.append(
            Note("the run's manifest could not be read: no suites or models listed", True)
        )
        return blocks
    blocks.append(_suites_table(manifest))
    blocks.append(_models_table(manifest))
    if manifest.generation:
        blocks.append(Fold("settings sent per suite and model", (_generation_table(manifest),)))
    for name, problem in sorted(data.unloaded.items()):
        blocks.append(
            Note(
                f"suite {name} could not be loaded here ({problem}): its own tables and "
                "rules are missing",
                True,
            )
        )
    return blocks


def _suites_table(manifest: RunManifest) -> Table:
    headers = ("suite", "version", "hash", "items", "tasks", "prompt", "scorer", "source")
    rows = tuple(
        (
            plain(s.name),
            plain(s.version),
            Cell(s.hash[:12], s.hash, title=s.hash),
            _count(s.items),
            Cell(str(len(s.tasks)), len(s.tasks), title=", ".join(s.tasks)),
            plain(s.prompt_version),
            plain(s.scorer_version or MISSING),
            plain(s.source + (" (demo)" if s.demo else "")),
        )
        for s in manifest.suites
    )
    return Table(
        "suites", tuple(Header(h, h in ("items", "tasks")) for h in headers), rows, "suites"
    )


def _models_table(manifest: RunManifest) -> Table:
    from roadeval.tasks.requests.model_spec import ModelSpec

    rows = []
    for role, dumped in [
        *(("answer", m) for m in manifest.models),
        *((("judge", manifest.judge),) if manifest.judge else ()),
    ]:
        spec = ModelSpec.model_validate(dumped)
        settings = {"params": spec.params, "mode": spec.mode, "samples": spec.samples}
        rows.append(
            (
                plain(spec.label),
                plain(role + (" (baseline)" if spec.is_baseline else "")),
                plain(spec.model),
                plain(spec.api_base or MISSING),
                plain(json.dumps(settings, sort_keys=True, default=str)),
            )
        )
    headers = tuple(Header(h) for h in ("model", "role", "model string", "endpoint", "settings"))
    return Table("models", headers, tuple(rows), "models")


def _generation_table(manifest: RunManifest) -> Table:
    """Per suite x model: the generation settings sent, and where they depart from the
    protocol's."""
    rows = tuple(
        (
            plain(g.suite),
            plain(g.model),
            plain(json.dumps(g.sent, sort_keys=True, default=str)),
            plain(
                json.dumps(g.departures, sort_keys=True, default=str) if g.departures else "none"
            ),
        )
        for g in manifest.generation
    )
    headers = tuple(Header(h) for h in ("suite", "model", "sent", "departures from the protocol"))
    return Table("generation settings", headers, rows, "generation")
