"""What a run under Prefect publishes at its end, for its flow run's Artifacts tab: a table per
suite with the leaderboard (one row per model, the suite's official metrics), and a markdown
page with the run's health and cost. Keys are per panel, so the UI keeps each one's history
across runs.

A link artifact to the run's report is for when roadeval writes reports (it does not yet):
`publish_report_link` is the hook, to be called with the report's URL once one is landed.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast
from uuid import UUID

from roadeval.tasks.calls.secrets import Redactor
from roadeval.tasks.results.aggregate import ALL, SUITE_WIDE
from roadeval.tasks.results.manifest import shown_as

if TYPE_CHECKING:
    from roadeval.flows.run_summary import RunSummary
    from roadeval.storage.records import MetricRow


def artifact_key(*parts: str) -> str:
    """A Prefect artifact key (lowercase letters, digits and dashes) made of `parts`."""
    return re.sub(r"[^a-z0-9]+", "-", "-".join(parts).lower()).strip("-")


def leaderboard(metrics: Sequence[MetricRow], suite: str) -> list[dict[str, Any]]:
    """One row per model: its suite-wide metrics (every task's when the suite has none, as
    `task:metric`), over all items (no slice)."""
    rows = [m for m in metrics if m.suite == suite and m.slice == ALL]
    if any(m.task == SUITE_WIDE for m in rows):
        rows = [m for m in rows if m.task == SUITE_WIDE]
    cells: dict[str, dict[str, float]] = defaultdict(dict)
    for m in rows:
        column = m.metric if m.task == SUITE_WIDE else f"{m.task}:{m.metric}"
        cells[shown_as(m.model, m.variant)][column] = round(m.value, 4)
    columns = sorted({column for row in cells.values() for column in row})
    return [
        {"model": model, **{c: cells[model].get(c) for c in columns}} for model in sorted(cells)
    ]


def _cost(cost_usd: float, known: bool) -> str:
    text = f"${cost_usd:,.4f}"
    return text if known else f"≥{text} (some unpriced)"


_HEALTH = ("items", "scored", "calls", "cached", "errors", "abnormal", "unparsed", "reasks")


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
    baseline = manifest.baseline
    lines += [
        "",
        f"Compared with run `{baseline.run_id}` ({baseline.chosen_by}): "
        f"{totals.scores_reused} item scores copied, {totals.calls} calls made"
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
        "| suite | model | " + " | ".join(_HEALTH) + " | cost USD |",
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
    made: list[Any] = [
        create_table_artifact(
            table=leaderboard(summary.metrics, suite),
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


def publish_report_link(summary: RunSummary, url: str) -> UUID:
    """The link artifact to the run's report. Reports do not exist yet: the report stage calls
    this with the landed report's URL once there is one."""
    from prefect.artifacts import create_link_artifact

    made = create_link_artifact(
        link=url,
        link_text=f"report of run {summary.run_id}",
        key=artifact_key("report", summary.manifest.panel),
        description=f"the report of run {summary.run_id}",
    )
    return cast(UUID, made)
