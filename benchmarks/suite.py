"""The Suite contract: a suite owns its loader, prompt, parser and metrics, in one module."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar

from roadeval.benchmarks.errors import BadItemPolicy
from roadeval.benchmarks.item import Item
from roadeval.benchmarks.loading import LoadReport

Message = dict[str, Any]


class ParseStatus(StrEnum):
    OK = "ok"
    ABNORMAL = "abnormal"  # an answer was read, but only by a fallback rule the suite counts
    UNPARSED = "unparsed"  # no answer could be read; scored by the protocol's bad-answer rule


@dataclass(frozen=True)
class ParsedAnswer:
    """What a parser read from a raw reply, and which of the suite's rules it applied."""

    status: ParseStatus
    value: Any
    rule: str
    detail: str = ""


@dataclass(frozen=True)
class ScoredItem:
    """An item with its final parse and per-item metric values, input to corpus metrics."""

    item: Item
    parsed: ParsedAnswer
    values: dict[str, float]


class Suite(ABC):
    """Base class for suites. Subclasses are registered with `@register_suite`."""

    name: ClassVar[str]
    prompt_version: ClassVar[str]
    # Attempts per item in all: a suite whose protocol re-asks on a bad answer raises this.
    max_attempts: ClassVar[int] = 1
    # Item labels whose values slice the per-item metrics named in `slice_metrics`.
    slice_labels: ClassVar[tuple[str, ...]] = ()
    slice_metrics: ClassVar[tuple[str, ...]] = ()

    def __init__(self, **options: Any) -> None:
        """Suites with settings (from the panel's `options:`) override this and validate them."""
        if options:
            raise ValueError(
                f"suite {self.name!r} takes no options, got: {', '.join(sorted(options))}"
            )

    def options(self) -> dict[str, Any]:
        """The settings in force, recorded in the run manifest."""
        return {}

    @abstractmethod
    def load(self, source: Path, *, on_bad_item: BadItemPolicy = BadItemPolicy.ERROR) -> LoadReport:
        """Read the suite from its released layout under `source`."""

    @abstractmethod
    def messages(self, item: Item) -> list[Message]:
        """The exact chat messages the protocol sends for this item (media as data URLs)."""

    @abstractmethod
    def parse(self, item: Item, text: str) -> ParsedAnswer:
        """Read the model's raw reply by the protocol's rules."""

    @abstractmethod
    def score(self, item: Item, parsed: ParsedAnswer) -> dict[str, float]:
        """Per-item metric values (the bad-answer rule applies to unparsed answers)."""

    def should_reask(self, item: Item, parsed: ParsedAnswer) -> bool:
        """Whether the protocol asks the same question again after this answer."""
        return self.max_attempts > 1 and parsed.status is ParseStatus.UNPARSED

    def summarize(self, task: str, scored: Sequence[ScoredItem]) -> dict[str, float]:
        """Corpus-level metrics for one task; the default is the mean of each per-item metric."""
        totals: dict[str, list[float]] = {}
        for row in scored:
            for metric, value in row.values.items():
                totals.setdefault(metric, []).append(value)
        return {metric: sum(vals) / len(vals) for metric, vals in totals.items() if vals}

    def overall(self, per_task: dict[str, dict[str, float]]) -> dict[str, float]:
        """Suite-level metrics from the per-task ones; none unless the suite defines them."""
        return {}

    def score_predictions(
        self,
        *,
        labels: Path,
        predictions: Path,
        task: str | None = None,
        images: Path | None = None,
        reparse: bool = False,
    ) -> dict[str, Any]:
        """Score a released prediction file exactly as the release's metric scripts do."""
        raise NotImplementedError(f"suite {self.name!r} cannot score released prediction files")

    def generate_demo(self, root: Path) -> Path:
        """Write a small synthetic suite in the released layout under `root`; return its source."""
        raise NotImplementedError(f"suite {self.name!r} has no demo generator")
