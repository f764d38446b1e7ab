"""The load stage: the panel's suites loaded from their release files, or generated demo data,
one stage per suite."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from roadeval.benchmarks.errors import ItemProblem, SuiteSourceError, UnknownFieldPolicy
from roadeval.benchmarks.item import Item, suite_hash
from roadeval.benchmarks.loading import UnknownFields, describe_unknown_fields
from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.suite import Suite
from roadeval.flows.panel.file import Panel, SuiteEntry
from roadeval.flows.stages.orchestration import Stage


def demo_root() -> Path:
    """Where generated demo suites are written: `ROADEVAL_DEMO_DIR`, else ~/.cache/roadeval/demo."""
    configured = os.environ.get("ROADEVAL_DEMO_DIR")
    return Path(configured) if configured else Path.home() / ".cache" / "roadeval" / "demo"


@dataclass
class LoadedSuite:
    """A suite's items as loaded, with what loading found wrong but did not stop for."""

    suite: Suite
    entry: SuiteEntry
    source: Path
    items: list[Item]
    skipped: list[ItemProblem] = field(default_factory=list)
    # file -> field -> rows carrying it, for fields outside the release's row format.
    unknown_fields: UnknownFields = field(default_factory=dict)
    # The render stage's drawings: drawn now, found in the media cache or the store, failed.
    drawings: dict[str, int] = field(default_factory=dict)

    @property
    def hash(self) -> str:
        return suite_hash(self.items)

    @property
    def unknown_fields_message(self) -> str | None:
        """One line naming each file and its unknown fields with row counts; None if none."""
        if not self.unknown_fields:
            return None
        return f"suite {self.entry.name}: unknown fields ignored: " + describe_unknown_fields(
            self.unknown_fields
        )


def load_entry(panel: Panel, entry: SuiteEntry) -> LoadedSuite:
    """Load one suite entry; raises with file, line and field on bad input (unless skipping)."""
    suite = get_suite(entry.name, **entry.options)
    if entry.demo:
        source = suite.generate_demo(demo_root() / entry.name)
    else:
        source = panel.source_path(entry)
        if not source.exists():
            raise SuiteSourceError(f"suite {entry.name}: source {source} does not exist")
    report = suite.load(source, on_bad_item=entry.on_bad_item)
    if report.unknown_fields and entry.unknown_fields is UnknownFieldPolicy.ERROR:
        raise SuiteSourceError(
            f"suite {entry.name}: rows carry fields outside the suite's row format "
            f"(unknown_fields: error): {describe_unknown_fields(report.unknown_fields)}"
        )
    items = report.items
    if entry.tasks is not None:
        wanted = {str(t) for t in entry.tasks}
        present = {item.task for item in items}
        missing = sorted(wanted - present)
        if missing:
            raise SuiteSourceError(
                f"suite {entry.name}: tasks {', '.join(missing)} have no items in {source}"
            )
        items = [item for item in items if item.task in wanted]
    seen: dict[str, Item] = {}
    for item in items:
        if item.item_id in seen:
            raise SuiteSourceError(
                f"suite {entry.name}: item id {item.item_id!r} appears twice in {source}"
            )
        seen[item.item_id] = item
    if not items:
        raise SuiteSourceError(f"suite {entry.name}: no items loaded from {source}")
    return LoadedSuite(
        suite, entry, source, items, list(report.skipped), dict(report.unknown_fields)
    )


# Prefect's task name and task-run name (a template over the stage's parameters).
LOAD_SUITE = Stage("load-suite", load_entry, "load/{entry.name}")
