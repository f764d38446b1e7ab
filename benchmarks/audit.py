"""A suite's quality report in the making: its rules in order, the rows its loader refused filed
under the rule their field belongs to, and each finding about an item placed at the file and line
the item was read from.

A suite's `quality_report` refuses a source that is not its layout (`source_shape`), starts an
`Audit` over its load with bad rows skipped (`item_checks.begin_audit`: the loader already checks
the release's formats, images included, and says where each bad row is), adds what its own
checks find over the items, and returns `Audit.report()`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Protocol

from roadeval.benchmarks.errors import BadItemPolicy, ItemProblem
from roadeval.benchmarks.item import Item
from roadeval.benchmarks.loading import LoadLimits, LoadReport, describe_unknown_fields
from roadeval.benchmarks.quality_report import Example, QualityReport, RuleResult, RuleStatus

# The rules every suite's report has, by these names, so that the reports read alike.
FORMAT = "format"
IDS = "ids"
REPEATS = "duplicate-questions"
# Names of rules several suites have, for the same kind of check.
CODES = "codes"  # task, view or template codes known
OPTIONS = "options"  # the options of a multiple-choice item, and the gold among them
CHOICES = "choices"  # a list of choices the gold is checked against separately
GOLD = "gold"  # a gold in the form its scorer reads
IMAGES = "images"  # the images an item names, present and readable
FRAMES = "frames"  # the frames of an item's clip or sequence, present, readable, counted


class AuditedSuite(Protocol):
    """What a suite's audit uses of it: its name, its loading limits and its loader."""

    name: ClassVar[str]
    limits: LoadLimits

    def load(self, source: Path, *, on_bad_item: BadItemPolicy = ...) -> LoadReport: ...


@dataclass(frozen=True)
class Rule:
    """One rule of a suite's report: its name and, for people, what it asks of the items."""

    name: str
    description: str


def format_rule(row_format: str) -> Rule:
    """The rule for rows the loader cannot read as the release's (`row_format` says what a row
    is); fields outside the format only warn."""
    return Rule(FORMAT, f"rows read as the release's: {row_format}; unknown fields warn")


def ids_rule(key: str) -> Rule:
    """Each item's id (`key`: what makes it) present and unique."""
    return Rule(IDS, f"item ids ({key}) present and unique")


REPEATS_RULE = Rule(
    REPEATS,
    "no question asked twice of the same media (normalised text); other options only warn",
)


def suite_rules(row_format: str, id_key: str, *own: Rule) -> tuple[Rule, ...]:
    """A suite's rules in report order: `format` (`row_format`: what a row is), `ids` (`id_key`:
    what makes an id), the suite's own, then `duplicate-questions`."""
    return (format_rule(row_format), ids_rule(id_key), *own, REPEATS_RULE)


# A loader problem's rule, when its field alone cannot say (None: by the field).
Classifier = Callable[[ItemProblem], str | None]


def field_root(field: str | None) -> str | None:
    """The row field a problem's field path starts from: `options.A` and `choice[2]` are about
    `options` and `choice`."""
    if field is None:
        return None
    return field.split(".", 1)[0].split("[", 1)[0]


class Audit:
    """The findings of one source, rule by rule, over one load of it."""

    def __init__(
        self,
        suite: str,
        source: Path,
        rules: Sequence[Rule],
        loaded: LoadReport,
        *,
        fallback: str = FORMAT,
    ) -> None:
        """`fallback`: the rule of refused rows no other rule claims, and of unknown fields."""
        names = [rule.name for rule in rules]
        if len(set(names)) != len(names) or fallback not in names:
            raise ValueError(f"{suite}: rules must be distinct and include {fallback!r}: {names}")
        self.suite = suite
        self.fallback = fallback
        self.source = source
        self.rules = tuple(rules)
        self.loaded = loaded
        self._found: dict[str, list[Example]] = {name: [] for name in names}

    @property
    def items(self) -> list[Item]:
        return self.loaded.items

    def refused(self, rule_of_field: Mapping[str, str], classify: Classifier | None = None) -> None:
        """File every row the loader refused under a rule: `classify`'s, else the one its field
        names in `rule_of_field`, else the fallback; fields outside the release's format warn."""
        for problem in self.loaded.skipped:
            rule = classify(problem) if classify is not None else None
            if rule is None:
                rule = rule_of_field.get(field_root(problem.field) or "", self.fallback)
            self._found[rule].append(Example.from_problem(problem))
        if self.loaded.unknown_fields:
            message = "fields outside the row format: " + describe_unknown_fields(
                self.loaded.unknown_fields
            )
            self._found[self.fallback].append(Example(None, RuleStatus.WARN, message))

    def add(
        self,
        rule: str,
        item: Item | None,
        message: str,
        *,
        field: str | None = None,
        status: RuleStatus = RuleStatus.FAIL,
    ) -> None:
        """A finding about `item` (None: about the whole set), at the file and line it came
        from."""
        if item is None:
            self._found[rule].append(Example(None, status, message, field=field))
            return
        origin = self.loaded.origins.get(item.item_id)
        file, line = (origin.file, origin.line) if origin is not None else (None, None)
        self._found[rule].append(Example(item.item_id, status, message, file, line, field))

    def warn(self, rule: str, item: Item | None, message: str, *, field: str | None = None) -> None:
        self.add(rule, item, message, field=field, status=RuleStatus.WARN)

    def report(self) -> QualityReport:
        results = tuple(
            RuleResult.from_examples(rule.name, rule.description, self._found[rule.name])
            for rule in self.rules
        )
        return QualityReport(
            self.suite, str(self.source), len(self.items), results, len(self.loaded.skipped)
        )
