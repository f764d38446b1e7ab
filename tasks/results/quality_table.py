"""A quality report for the terminal: one row per rule, its status, count and first findings."""

from __future__ import annotations

from pathlib import Path

from rich.markup import escape
from rich.table import Table

from roadeval.benchmarks.quality_report import Example, QualityReport, RuleStatus

_STYLES = {RuleStatus.PASS: "green", RuleStatus.WARN: "yellow", RuleStatus.FAIL: "bold red"}


def quality_table(report: QualityReport) -> Table:
    """The rules in the suite's order, each with what it asks; each finding shown names its item
    (or `suite` when the finding is about the whole set)."""
    read = f"{report.n_items} items read, {report.n_refused} rows refused by the loader"
    title = f"{report.suite}: item quality of {report.source} ({read})"
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
            "\n".join(_line(example, report.source) for example in rule.examples) or "—",
        )
    return table


def verdict(report: QualityReport) -> str:
    """One line under the table: passed, or which hard rules failed."""
    if report.passed:
        return "[green]quality checks passed[/green]"
    return "[bold red]quality checks failed:[/bold red] " + ", ".join(report.failed_rules)


def _line(example: Example, source: str) -> str:
    """Where (file and line, item, field; `suite` for a finding about the whole set), then why."""
    where = []
    if example.file is not None:
        file = _relative(example.file, source)
        where.append(f"{file}:{example.line}" if example.line is not None else file)
    if example.item_id is not None:
        where.append(f"item {example.item_id}")
    if example.field is not None:
        where.append(f"field {example.field}")
    place = ", ".join(where) or "suite"
    return escape(f"{place} ({example.status.value}): {example.message}")


def _relative(file: str, source: str) -> str:
    """A file under the audited source named from it (the title names the source)."""
    base = Path(source)
    base = base if base.is_dir() else base.parent
    try:
        return str(Path(file).relative_to(base)) or Path(file).name
    except ValueError:
        return file
