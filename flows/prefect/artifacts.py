"""What a run under Prefect publishes at its end, for its flow run's Artifacts tab: a table per
suite with the leaderboard (one row per model, the suite's headline metrics), a markdown page
with the run's health and cost, and a link to a finished run's HTML report in the store. Keys
are per panel, so the UI keeps each one's history across runs.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast
from uuid import UUID

from roadeval.tasks.calls.secrets import Redactor
from roadeval.tasks.results.formats import SuiteRules, judge_placeholder
from roadeval.tasks.results.leaderboard import ItemHealth, leaderboards
from roadeval.tasks.results.report import HEALTH_COLUMNS
from roadeval.tasks.shard.counts import COUNT_HEADINGS

if TYPE_CHECKING:
    from roadeval.flows.run.summary import RunSummary
    from roadeval.storage.records import MetricRow


def artifact_key(*parts: str) -> str:
    """A Prefect artifact key (lowercase letters, digits and dashes) made of `parts`."""
    return re.sub(r"[^a-z0-9]+", "-", "-".join(parts).lower()).strip("-")


def leaderboard(
    metrics: Sequence[MetricRow],
    suite: str,
    health: Mapping[tuple[str, str, str], ItemHealth] | None = None,
    baselines: Collection[str] = (),
    placeholder: str | None = None,
) -> list[dict[str, Any]]:
    """One row per model, in the boards' order: the suite's headline metrics (`Suite.headline`,
    headed as the terminal's and the HTML report's leaderboards head them: label and arrow; a
    placeholder judge's marked, `placeholder` saying why), then the items whose answers were
    not read, read by a fallback, or ended in errors, when `health` has them."""
    rules = SuiteRules([suite], placeholder)
    found = leaderboards(
        [m for m in metrics if m.suite == suite], rules, health=health, baselines=baselines
    )
    if not found:
        return []
    board = found[0].lead
    rows: list[dict[str, Any]] = []
    for row in board.rows:
        cells = {
            column.heading + (" (placeholder judge)" if column.placeholder else ""): (
                None if cell is None else round(cell.value, 4)
            )
            for column, cell in zip(board.columns, row.cells, strict=True)
        }
        about: dict[str, bool | int] = {"baseline": row.baseline} if baselines else {}
        if row.health is not None:
            about |= {heading: getattr(row.health, name) for name, heading in HEALTH_COLUMNS}
        rows.append({"model": row.model, **cells, **about})
    return rows


def _cost(cost_usd: float, known: bool) -> str:
    text = f"${cost_usd:,.4f}"
    return text if known else f"≥{text} (some unpriced)"


_HEALTH = ("items", "scored", "calls", "cached", "errors", "abnormal", "unparsed", "reasks")
_HEADINGS = tuple(COUNT_HEADINGS[name] for name in _HEALTH)


def health_markdown(summary: RunSummary, message: str | None = None) -> str:
    """The run's status, where it landed, what it was compared with, and per suite x model its
    counts and cost (the terminal's run-health table), as markdown."""
    manifest = summary.manifest
    totals = manifest.totals
    lines = [
        f"# Run `{summary.run_id}`: {summary.status}",
        "",
        f"Panel **{manifest.panel}**, store `{summary.store_uri}`"
        + (f", manifest `{summary.manifest_key}`" if summary.manifest_key else ""),
    ]
    if message:
        lines += ["", f"**Stopped:** {message}"]
    placeholder = judge_placeholder(manifest)
    if placeholder:
        lines += ["", f"**Placeholder judge:** the judged metrics are {placeholder}"]
    baseline = manifest.baseline
    lines += [
        "",
        f"Compared with run `{baseline.run_id}` ({baseline.chosen_by}): "
        f"{totals.scores_reused} items' scores copied, {totals.calls_made}"
        if baseline is not None
        else "No baseline run: every item was asked (or found in the response cache).",
    ]
    if summary.budget is not None:
        lines += [
            "",
            f"Budget: spent ${summary.budget.spent_usd:,.4f} of ${summary.budget.limit_usd:,.2f}",
        ]
    lines += [
        "",
        "| suite | model | " + " | ".join(_HEADINGS) + " | cost USD |",
        "|---|---|" + "---:|" * (len(_HEALTH) + 1),
    ]
    for pair in manifest.counts:
        cells = [str(getattr(pair, name)) for name in _HEALTH]
        cost = _cost(pair.cost_usd, pair.cost_known)
        lines.append(f"| {pair.suite} | {pair.who} | " + " | ".join(cells) + f" | {cost} |")
    total_cells = [str(getattr(totals, name)) for name in _HEALTH]
    known = all(pair.cost_known for pair in manifest.counts)
    lines.append(
        "| **total** | | " + " | ".join(total_cells) + f" | {_cost(totals.cost_usd, known)} |"
    )
    return "\n".join(lines) + "\n"


def publish_run_artifacts(
    summary: RunSummary, message: str | None = None, redact: Redactor | None = None
) -> list[UUID]:
    """Create the run's artifacts in the current flow run: each suite's leaderboard (a finished
    run's; a stopped run has no metrics) and the health page. Returns their ids."""
    from prefect.artifacts import create_markdown_artifact, create_table_artifact

    redact = redact or Redactor.from_environment()
    panel = summary.manifest.panel
    # Called from a synchronous flow: Prefect's sync/async dispatch returns the id itself.
    from roadeval.tasks.results.report import manifest_baselines, manifest_health

    health = manifest_health(summary.manifest)
    baselines = manifest_baselines(summary.manifest)
    placeholder = judge_placeholder(summary.manifest)
    made: list[Any] = [
        create_table_artifact(
            table=leaderboard(summary.metrics, suite, health, baselines, placeholder),
            key=artifact_key("leaderboard", panel, suite),
            description=f"{suite}: metrics per model, run {summary.run_id} of panel {panel}",
        )
        for suite in sorted({m.suite for m in summary.metrics})
    ]
    made.append(
        create_markdown_artifact(
            markdown=redact.text(health_markdown(summary, message)),
            key=artifact_key("run-health", panel),
            description=f"health and cost of run {summary.run_id} ({summary.status})",
        )
    )
    return cast(list[UUID], made)


def report_markdown(summary: RunSummary) -> str:
    """A finished run's report artifact where no link opens its report (a folder store with no
    `report_url`): the report's path as text, to open on the machine that holds the store, and
    the run's leaderboards as the terminal shows them."""
    from roadeval.tasks.results.board_markdown import leaderboards_markdown

    manifest = summary.manifest
    lines = [
        f"# Report of run `{summary.run_id}` (panel **{manifest.panel}**): {summary.status}",
        "",
        f"The HTML report is kept at `{summary.report}`: open it on the machine that holds "
        "the store (`roadeval report " + summary.run_id + " --out PATH` copies it anywhere). "
        "For a link here, serve the store's `reports/` folder and set `report_url:` in the "
        "panel to its address.",
        "",
        leaderboards_markdown(summary.metrics, manifest, summary.pairs),
    ]
    return "\n".join(lines)


def publish_report(summary: RunSummary, redact: Redactor | None = None) -> UUID | None:
    """The artifact that leads to a finished run's report: a link where the run has one that a
    browser opens (`summary.report_url`, http(s): the panel's `report_url`, or presigned on
    S3), else markdown with its leaderboards and the report's path (`report_markdown`); None
    for a run without a report."""
    from prefect.artifacts import create_link_artifact, create_markdown_artifact

    key = artifact_key("report", summary.manifest.panel)
    if summary.report_url is not None:
        made = create_link_artifact(
            link=summary.report_url,
            link_text=f"report of run {summary.run_id}",
            key=key,
            description=f"the HTML report of run {summary.run_id} ({summary.status})",
        )
    elif summary.report is not None:
        redact = redact or Redactor.from_environment()
        made = create_markdown_artifact(
            markdown=redact.text(report_markdown(summary)),
            key=key,
            description=f"the leaderboards of run {summary.run_id}; its report's path",
        )
    else:
        return None
    return cast(UUID, made)
