"""An item-quality audit of a suite's source, rule by rule: what `roadeval qc` prints.

A suite with quality rules returns one of these from `Suite.quality_report`; the command line only
prints it and picks the exit code. A rule fails when it is broken (a set with a failed rule should
not be published), warns when a finding is an allowed exception or something for a reviewer, and
passes with no finding at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

# How many findings of each rule the report shows; the count says how many there are in all.
MAX_EXAMPLES = 3


class RuleStatus(StrEnum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"


@dataclass(frozen=True)
class Example:
    """One finding shown under its rule: the item it is about (None for a suite-wide finding),
    whether it fails the rule or only warns, and why."""

    item_id: str | None
    status: RuleStatus
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {"item_id": self.item_id, "status": self.status.value, "message": self.message}


@dataclass(frozen=True)
class RuleResult:
    """One rule's verdict over the whole source: its status, how many findings, the first few."""

    rule: str
    description: str
    status: RuleStatus
    count: int
    examples: tuple[Example, ...]

    @classmethod
    def from_examples(cls, rule: str, description: str, found: list[Example]) -> RuleResult:
        """The verdict from every finding of the rule: failing ones first among the examples."""
        ordered = sorted(found, key=lambda example: example.status is not RuleStatus.FAIL)
        statuses = {example.status for example in found}
        status = (
            RuleStatus.FAIL
            if RuleStatus.FAIL in statuses
            else RuleStatus.WARN
            if statuses
            else RuleStatus.PASS
        )
        return cls(rule, description, status, len(found), tuple(ordered[:MAX_EXAMPLES]))

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "description": self.description,
            "status": self.status.value,
            "count": self.count,
            "examples": [example.as_dict() for example in self.examples],
        }


@dataclass(frozen=True)
class QualityReport:
    """A suite source's audit: every rule the suite checks, in its order, passing ones too."""

    suite: str
    source: str
    n_items: int
    rules: tuple[RuleResult, ...]

    @property
    def passed(self) -> bool:
        """No rule failed (warnings allowed): the set may be published as it is."""
        return all(rule.status is not RuleStatus.FAIL for rule in self.rules)

    @property
    def failed_rules(self) -> list[str]:
        return [rule.rule for rule in self.rules if rule.status is RuleStatus.FAIL]

    def as_dict(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "source": self.source,
            "n_items": self.n_items,
            "passed": self.passed,
            "rules": [rule.as_dict() for rule in self.rules],
        }
