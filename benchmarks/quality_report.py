"""An item-quality audit of a suite's source, rule by rule: what `roadeval qc` prints.

A suite's `Suite.quality_report` returns one of these; the command line only prints it and picks
the exit code. A rule fails when it is broken (a set with a failed rule should not be run or
published as it is), warns when a finding is an allowed exception or something for a reviewer,
and passes with no finding at all. Every finding names where it is: the file and line (or row)
when known, the item, and the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from roadeval.benchmarks.errors import ItemProblem

# How many findings of each rule the table shows; the count says how many there are in all, and
# the JSON report lists every one.
MAX_EXAMPLES = 3


class RuleStatus(StrEnum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"


@dataclass(frozen=True)
class Example:
    """One finding of a rule: the item it is about (None for a finding about a row the loader
    could not read as an item, or about the whole set), whether it fails the rule or only warns,
    why, and where: the file, its line (or Parquet row) and the field, each when known."""

    item_id: str | None
    status: RuleStatus
    message: str
    file: str | None = None
    line: int | None = None
    field: str | None = None

    @classmethod
    def from_problem(cls, problem: ItemProblem, status: RuleStatus = RuleStatus.FAIL) -> Example:
        """A row the loader refused, where the loader says it is and why."""
        return cls(
            problem.item_id, status, problem.message, problem.file, problem.line, problem.field
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "status": self.status.value,
            "message": self.message,
            "file": self.file,
            "line": self.line,
            "field": self.field,
        }


@dataclass(frozen=True)
class RuleResult:
    """One rule's verdict over the whole source: its status and every finding, failing ones
    first (`examples`: the first few, as the table shows them)."""

    rule: str
    description: str
    status: RuleStatus
    findings: tuple[Example, ...]

    @classmethod
    def from_examples(cls, rule: str, description: str, found: list[Example]) -> RuleResult:
        """The verdict from every finding of the rule: failing ones first."""
        ordered = sorted(found, key=lambda example: example.status is not RuleStatus.FAIL)
        statuses = {example.status for example in found}
        status = (
            RuleStatus.FAIL
            if RuleStatus.FAIL in statuses
            else RuleStatus.WARN
            if statuses
            else RuleStatus.PASS
        )
        return cls(rule, description, status, tuple(ordered))

    @property
    def count(self) -> int:
        return len(self.findings)

    @property
    def examples(self) -> tuple[Example, ...]:
        return self.findings[:MAX_EXAMPLES]

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "description": self.description,
            "status": self.status.value,
            "count": self.count,
            "findings": [example.as_dict() for example in self.findings],
        }


@dataclass(frozen=True)
class QualityReport:
    """A suite source's audit: every rule the suite checks, in its order, passing ones too.
    `n_items` counts the items read, `n_refused` the rows the loader could not make items of."""

    suite: str
    source: str
    n_items: int
    rules: tuple[RuleResult, ...]
    n_refused: int = 0

    @property
    def passed(self) -> bool:
        """No rule failed (warnings allowed): the set may be run or published as it is."""
        return all(rule.status is not RuleStatus.FAIL for rule in self.rules)

    @property
    def failed_rules(self) -> list[str]:
        return [rule.rule for rule in self.rules if rule.status is RuleStatus.FAIL]

    def as_dict(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "source": self.source,
            "n_items": self.n_items,
            "n_refused": self.n_refused,
            "passed": self.passed,
            "rules": [rule.as_dict() for rule in self.rules],
        }
