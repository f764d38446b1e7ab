"""A run's leaderboards as markdown, for a page a person reads where no terminal or HTML report
is at hand (the Prefect UI's report artifact of a run kept in a folder store): the same boards,
cells and legends as the terminal's (`report.board_columns`, `report.lead_legend`), laid out as
markdown tables."""

from __future__ import annotations

import re
from collections.abc import Sequence

from roadeval.storage.records import MetricPairRow, MetricRow
from roadeval.tasks.results.fitting import FitColumn
from roadeval.tasks.results.leaderboard import leaderboards
from roadeval.tasks.results.manifest import RunManifest
from roadeval.tasks.results.report import (
    board_columns,
    lead_legend,
    manifest_baselines,
    manifest_health,
    run_rules,
)

# Characters markdown (or the HTML it becomes) would read as syntax in a name or a value.
_SYNTAX = re.compile(r"([\\`*_{}\[\]()#+!|<>~])")


def escaped(text: str) -> str:
    """`text` shown as written: markdown syntax escaped, a cell's lines on one line."""
    return _SYNTAX.sub(r"\\\1", " ".join(text.split("\n")))


def markdown_table(columns: Sequence[FitColumn]) -> list[str]:
    """`columns` as the lines of a markdown table (numeric columns right-aligned)."""
    rows = len(columns[0].cells) if columns else 0
    lines = [
        "| " + " | ".join(escaped(c.heading) for c in columns) + " |",
        "|" + "|".join("---:" if c.numeric else "---" for c in columns) + "|",
    ]
    lines += ["| " + " | ".join(escaped(c.cells[at]) for c in columns) + " |" for at in range(rows)]
    return lines


def leaderboards_markdown(
    metrics: Sequence[MetricRow], manifest: RunManifest, pairs: Sequence[MetricPairRow] = ()
) -> str:
    """Each suite's leaderboard (its headline metrics per model with ranks and intervals, the
    items not read or in error beside them) under a heading, its legend under it; empty when
    the run has no metrics (it did not finish)."""
    rules = run_rules(manifest)
    found = leaderboards(
        metrics,
        rules,
        health=manifest_health(manifest),
        baselines=manifest_baselines(manifest),
        pairs=pairs,
    )
    lines: list[str] = []
    for boards in found:
        lines += [f"## {escaped(boards.suite)}: leaderboard", ""]
        lines += markdown_table(board_columns(boards.lead, rules))
        lines += [""] + [f"- {escaped(line)}" for line in lead_legend(boards, manifest.intervals)]
        lines.append("")
    return "\n".join(lines)
