"""A quality report for the terminal: one row per rule, its status, count and first findings."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from roadeval.benchmarks.quality_report import Example, QualityReport, RuleStatus

_STYLES = {RuleStatus.PASS: "green", RuleStatus.WARN: "yellow", RuleStatus.FAIL: "bold red"}


def quality_table(report: QualityReport) -> Table:
    """The rules in the suite's order, each with what it asks; each finding shown names its item
    (or `suite` when the finding is about the whole set)."""
    title = f"{report.suite}: item quality of {report.source} ({report.n_items} rows)"
    table = Table(title=escape(title), title_justify="left")
    # The rule's description wraps within its column; the findings get the rest of the width.
    table.add_column("rule", max_width=44)
    table.add_column("status")
    table.add_column("count", justify="right")
    table.add_column("first findings")
    for rule in report.rules:
        style = _STYLES[rule.status]
        table.add_row(
            f"{rule.rule}\n[dim]{escape(rule.description)}[/dim]",
            f"[{style}]{rule.status.value}[/{style}]",
            str(rule.count),
            "\n".join(_line(example) for example in rule.examples) or "—",
        )
    return table


def verdict(report: QualityReport) -> str:
    """One line under the table: passed, or which hard rules failed."""
    if report.passed:
        return "[green]quality checks passed[/green]"
    return "[bold red]quality checks failed:[/bold red] " + ", ".join(report.failed_rules)


def _line(example: Example) -> str:
    where = example.item_id if example.item_id is not None else "suite"
    return escape(f"{where} ({example.status.value}): {example.message}")
