"""What a run left out of its result, per suite: the rows its load skipped (`on_bad_item: skip`:
bad rows, missing or unreadable images, inputs that could not be drawn) and the items a built-in
baseline has no rule for. Each is counted with its first reasons, from the run's manifest, so
that `roadeval show`, the report and `roadeval runs` say the same thing: a leaderboard over 31
items of 5,486 rows says so."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.table import Table

from roadeval.benchmarks.errors import ItemProblem
from roadeval.tasks.results.fitting import FitColumn, captioned, fitted_table
from roadeval.tasks.results.manifest import RunManifest, SkippedGroup, SuiteRecord

# Reasons named per suite: the largest groups of skipped rows (the rest are in the manifest).
REASONS_SHOWN = 3
ROW_ITSELF = ""
# The one group of a manifest from before skipped rows were grouped by field.
UNGROUPED = "*"
EVERY_MODEL = "every model"


def skipped_groups(problems: Sequence[ItemProblem]) -> list[SkippedGroup]:
    """Skipped rows grouped by the field they failed on, largest first (ties: the field met
    first), each with its first row's problem."""
    groups: dict[str, list[ItemProblem]] = {}
    for problem in problems:
        groups.setdefault(problem.field or ROW_ITSELF, []).append(problem)
    ordered = sorted(groups.items(), key=lambda pair: -len(pair[1]))
    return [SkippedGroup(field=name, rows=len(rows), first=str(rows[0])) for name, rows in ordered]


def _of_field(field: str) -> str:
    if field == UNGROUPED:
        return "fields this run did not record"
    return "the row as a whole" if field == ROW_ITSELF else f"field {field!r}"


@dataclass(frozen=True)
class NotCovered:
    """Items of a suite that a baseline model was not asked: it has no rule for their tasks."""

    model: str
    items: int
    tasks: tuple[str, ...]
    why: str

    @property
    def task_list(self) -> str:
        return f"tasks {', '.join(self.tasks)}" if self.tasks else ""

    @property
    def reason(self) -> str:
        return f"{self.why} ({self.task_list})" if self.tasks else self.why


@dataclass(frozen=True)
class LeftOut:
    """One suite's rows and items the run's results do not cover, and why."""

    suite: str
    # Items the suite kept (what its leaderboard is over, per model at most).
    kept: int
    skipped: int
    groups: tuple[SkippedGroup, ...]
    not_covered: tuple[NotCovered, ...]

    @property
    def not_covered_items(self) -> int:
        """Item x model pairs not asked because a baseline has no rule for them."""
        return sum(n.items for n in self.not_covered)

    @property
    def skipped_line(self) -> str:
        """The skipped rows in one line: how many against the items kept."""
        return (
            f"{self.skipped:,} rows skipped at load (on_bad_item: skip), {self.kept:,} items kept"
        )

    def reasons(self, at_most: int = REASONS_SHOWN) -> list[tuple[str, str]]:
        """(what, the first row's problem) for the largest groups of skipped rows; a last
        line counts the groups not named."""
        found = [
            (f"{g.rows:,} of them on {_of_field(g.field)}", f"first: {g.first}")
            for g in self.groups[:at_most]
        ]
        rest = self.groups[at_most:]
        if rest:
            rows = sum(g.rows for g in rest)
            found.append((f"{rows:,} on {len(rest)} other fields", "the manifest lists them"))
        return found

    @property
    def summary(self) -> str:
        """A few words per suite for a narrow column: rows skipped, items not covered."""
        parts = []
        if self.skipped:
            parts.append(f"{self.skipped:,} rows skipped")
        if self.not_covered:
            parts.append(f"{self.not_covered_items:,} items not asked")
        return f"{self.suite}: {', '.join(parts)}"

    def lines(self) -> list[tuple[str, str, str]]:
        """(whose items, what was left out, why) per line of a table: the skipped rows (of
        every model), then the items baselines were not asked: one line for the baselines
        not asked as many items of the same tasks, their reason said once per suite (the
        lines after name the tasks only)."""
        found = []
        if self.skipped:
            found.append((EVERY_MODEL, self.skipped_line, ""))
            found += [("", what, why) for what, why in self.reasons()]
        alike: dict[tuple[int, str, str], list[str]] = {}
        for entry in self.not_covered:
            alike.setdefault((entry.items, entry.why, entry.task_list), []).append(entry.model)
        said: set[str] = set()
        for (items, why, tasks), models in alike.items():
            each = f" (each of {len(models)} models)" if len(models) > 1 else ""
            reason = f"{why} ({tasks})" if why not in said and tasks else tasks or why
            said.add(why)
            found.append((", ".join(models), f"{items:,} items not asked{each}", reason))
        return found

    @property
    def first_reason(self) -> str:
        """The first reason anything of the suite was left out."""
        if self.groups:
            return self.groups[0].first
        return f"{self.not_covered[0].model}: {self.not_covered[0].reason}"


def _groups(suite: SuiteRecord) -> tuple[SkippedGroup, ...]:
    """The suite's skipped rows by field; one group of unknown fields for a manifest from
    before they were grouped (its first row's problem still says which)."""
    if suite.skipped or not suite.skipped_items:
        return tuple(suite.skipped)
    rows = len(suite.skipped_items)
    return (SkippedGroup(field=UNGROUPED, rows=rows, first=suite.skipped_items[0]),)


def _not_covered(entry: dict[str, Any]) -> NotCovered:
    return NotCovered(
        model=str(entry.get("model", "")),
        items=int(entry.get("items_not_covered", 0)),
        tasks=tuple(str(task) for task in entry.get("tasks", ())),
        why=str(entry.get("why", "the baseline has no rule for those items")),
    )


def left_out(manifest: RunManifest) -> list[LeftOut]:
    """Per suite of the run that left anything out, what and why (none: nothing was)."""
    found = []
    for suite in manifest.suites:
        covered = tuple(
            _not_covered(entry)
            for entry in manifest.not_covered
            if entry.get("suite") == suite.name and int(entry.get("items_not_covered", 0))
        )
        skipped = len(suite.skipped_items)
        if skipped or covered:
            found.append(LeftOut(suite.name, suite.items, skipped, _groups(suite), covered))
    return found


LEFT_OUT_TITLE = "left out of these results (not asked, not scored)"


def left_out_table(found: Sequence[LeftOut], width: int) -> Table:
    """Per suite, the rows skipped and the items baselines were not asked, with why, at most
    `width` wide: the suite whole, a reason's path folded rather than cut."""
    lines = [(suite.suite, *line) for suite in found for line in suite.lines()]
    headings = ("suite", "whose", "left out", "why (the first reasons)")
    columns = [
        FitColumn(
            heading,
            tuple(line[at] for line in lines),
            whole=at == 0,
            kept=at < 2,
            folds=at == 3,
        )
        for at, heading in enumerate(headings)
    ]
    fitted = fitted_table(columns, width, LEFT_OUT_TITLE, edge=True)
    fitted.table.title_style = "bold yellow"
    return captioned(fitted, width)
