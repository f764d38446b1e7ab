"""What a suite's numbers and codes mean to a reader, declared by the suite beside its metrics
(`Suite.vocabulary`): each metric's label, description, better direction and scale; each task's
and each label value's full name; the natural order of a label's values (easy, medium, hard).

Everything that shows a metric reads it here (the leaderboards' arrows and ranks, the heatmaps'
colours and scales, the rerun comparison's better/worse marks), so a metric's direction is one
fact, stated once, by the suite that defines the metric."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

# The pseudo-label a suite's tasks are ordered and named under (`Vocabulary.ordered("task", ...)`).
TASK = "task"


class Better(StrEnum):
    """Which way a metric is better."""

    HIGHER = "higher"
    LOWER = "lower"


class Verdict(StrEnum):
    """What a change of a metric's value means for the model: better, worse, or neither (a
    metric without a better direction, such as a count)."""

    BETTER = "better"
    WORSE = "worse"
    NEITHER = "neither"


@dataclass(frozen=True)
class Scale:
    """The kind of number a metric is (its unit), and the range a colour scale spans at least
    (None: from the data). Two metrics share a colour scale only when they are the same metric,
    so no scale ever mixes kinds."""

    unit: str
    low: float | None = None
    high: float | None = None


SHARE = Scale("share of items (0-1)", 0.0, 1.0)
PERCENT = Scale("percent (0-100)", 0.0, 100.0)
GAP = Scale("difference of two accuracies (-1 to 1)", -1.0, 1.0)
METRES = Scale("metres", 0.0, None)
JUDGE_POINTS = Scale("judge points (0-10)", 0.0, 10.0)
BRIER = Scale("Brier score (0-2)", 0.0, 2.0)
IMAGE_FRACTION = Scale("fraction of the image size", 0.0, None)
LANES = Scale("lanes", 0.0, None)
COUNT = Scale("count", 0.0, None)
UNKNOWN = Scale("unknown")


@dataclass(frozen=True)
class MetricInfo:
    """One metric as a reader meets it: a short label, one line on what it is, which way is
    better (None: neither), its scale, and whether a judge gave it (a placeholder judge's
    numbers measure nothing, and are marked so wherever they show)."""

    name: str
    label: str
    description: str
    better: Better | None
    scale: Scale
    judged: bool = False
    declared: bool = True

    @property
    def arrow(self) -> str:
        """↑ (higher is better), ↓ (lower is better), or '' (neither)."""
        return {Better.HIGHER: "↑", Better.LOWER: "↓"}.get(self.better, "") if self.better else ""

    @property
    def direction(self) -> str:
        """The better direction in words."""
        if self.better is None:
            return "neither direction is better"
        return f"{self.better.value} is better"

    def verdict(self, delta: float) -> Verdict:
        """What a move of `delta` means: better, worse, or neither (no direction, or no move)."""
        if self.better is None or delta == 0:
            return Verdict.NEITHER
        up = delta > 0
        return Verdict.BETTER if up == (self.better is Better.HIGHER) else Verdict.WORSE

    def sort_key(self, value: float) -> float:
        """A key that sorts the best value first (for ranks); 0 for a metric without direction."""
        if self.better is None:
            return 0.0
        return -value if self.better is Better.HIGHER else value


def undeclared(name: str) -> MetricInfo:
    """A metric its suite does not describe (a suite not installed here): its name, no
    direction, no scale."""
    return MetricInfo(name, name, "", None, UNKNOWN, declared=False)


@dataclass(frozen=True)
class LabelInfo:
    """An item label as a reader meets it: its name, its values in their natural order (values
    not listed follow, alphabetically), and the full name of each coded value."""

    title: str
    order: tuple[str, ...] = ()
    names: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Vocabulary:
    """A suite's metrics, tasks (code -> name, in the suite's order), labels, and for tasks
    named by a family prefix (STRIDE's `SP-3a`) the families' names (`task_groups`)."""

    metrics: tuple[MetricInfo, ...] = ()
    tasks: Mapping[str, str] = field(default_factory=dict)
    labels: Mapping[str, LabelInfo] = field(default_factory=dict)
    task_groups: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        names = [m.name for m in self.metrics]
        if len(names) != len(set(names)):
            twice = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"metrics described twice: {', '.join(twice)}")

    def metric(self, name: str) -> MetricInfo:
        """The metric's description; `undeclared(name)` for one the suite does not describe."""
        for info in self.metrics:
            if info.name == name:
                return info
        return undeclared(name)

    def label(self, label: str) -> LabelInfo:
        if label == TASK:
            return LabelInfo("task", tuple(self.tasks), self.tasks)
        return self.labels.get(label, LabelInfo(label.replace("_", " ")))

    def task_name(self, task: str) -> str:
        """The task's full name ('' when the suite gives none)."""
        return self.tasks.get(task) or self.task_groups.get(task.split("-", 1)[0], "")

    def value_name(self, label: str, value: str) -> str:
        """A value with its full name beside its code ('VS1 Ego Static Scene'), or as it is."""
        name = self.label(label).names.get(value, "")
        return f"{value} {name}" if name and name != value else value

    def ordered(self, label: str, values: Iterable[str]) -> list[str]:
        """`values` in the label's natural order; values it does not list after, numbers in
        numeric order, the rest alphabetically."""
        order = {value: at for at, value in enumerate(self.label(label).order)}

        def key(value: str) -> tuple[int, int, float, str]:
            if value in order:
                return (0, order[value], 0.0, "")
            return (1, 0, float(value) if value.isdigit() else float("inf"), value)

        return sorted(set(values), key=key)


def fraction_metrics(
    stem: str,
    thresholds: Iterable[float],
    label: str,
    description: str,
    better: Better,
    scale: Scale,
) -> tuple[MetricInfo, ...]:
    """One metric per threshold (`stem@theta`), as a suite names its thresholded metrics."""
    return tuple(
        MetricInfo(
            f"{stem}@{theta:g}",
            f"{label} @{theta:g}",
            description.format(theta=f"{theta:g}"),
            better,
            scale,
        )
        for theta in thresholds
    )
