"""How a metric's value prints, the same in the terminal and in the HTML report: a count as an
integer (`items 10`, never `10.000`), any other value with the decimals its scale needs (a rate
0.512, a TB-Bench percentage 27.50, an ADE in metres 10.31)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from roadeval.benchmarks.registry import load_suite
from roadeval.benchmarks.suite import Headline, Suite
from roadeval.benchmarks.vocabulary import MetricInfo, Vocabulary
from roadeval.tasks.results.aggregate import ALL

if TYPE_CHECKING:
    from roadeval.tasks.results.manifest import RunManifest

MISSING = "—"


def suite_classes(names: Iterable[str]) -> dict[str, type[Suite] | None]:
    """The suite class of each name (None for a suite not installed here: a store may hold runs
    of suites this machine does not have; their values print with the default rules)."""
    return {name: load_suite(name) for name in sorted(set(names))}


def is_count(suite: type[Suite] | None, metric: str, slice_: str = ALL) -> bool:
    """Whether `metric` of `suite` counts items. A slice row of one of the suite's
    `slice_metrics` is a mean over the slice's items, whatever the metric's name."""
    if suite is None:
        return False
    if slice_ != ALL and metric in suite.slice_metrics:
        return False
    return metric in suite.count_metrics


def decimals_for(values: Iterable[float | None]) -> int:
    """Decimals for a set of values printed together (a column, a heatmap), from the largest:
    3 below 10, 2 below 100, 1 below 1000, else none (a percentage or a distance in metres
    needs no thousandths), so that the set lines up."""
    magnitude = max((abs(v) for v in values if v is not None), default=0.0)
    return 3 if magnitude < 10 else 2 if magnitude < 100 else 1 if magnitude < 1000 else 0


def format_value(value: float | None, *, count: bool = False, decimals: int | None = None) -> str:
    """A value as printed: a count as an integer; else with `decimals` (default: those
    `decimals_for` gives the value alone)."""
    if value is None:
        return MISSING
    if count and float(value).is_integer():
        return f"{int(value):d}"
    places = decimals_for([value]) if decimals is None else decimals
    return f"{value:.{places}f}"


def format_interval(low: float | None, high: float | None) -> str:
    """A 95% interval as `[low, high]`, '' when there is none."""
    if low is None or high is None:
        return ""
    return f"[{format_value(low)}, {format_value(high)}]"


class SuiteRules:
    """What printing needs of each suite of a run: its headline metrics, its counts and its
    vocabulary (what each metric, task and label value means), from the installed suite classes
    (none for a suite not installed here); and `judge_placeholder`, why the run's judge
    measures nothing when it is a placeholder (its judged metrics are then marked)."""

    def __init__(
        self,
        names: Iterable[str],
        judge_placeholder: str | None = None,
        classes: Mapping[str, type[Suite] | None] | None = None,
    ) -> None:
        """`classes`: the suite classes by name, when they are not the installed ones."""
        self.classes = dict(classes) if classes is not None else suite_classes(names)
        self.judge_placeholder = judge_placeholder

    def vocabulary(self, suite: str) -> Vocabulary:
        cls = self.classes.get(suite)
        return cls.vocabulary if cls is not None else Vocabulary()

    def metric(self, suite: str, metric: str) -> MetricInfo:
        """What `metric` of `suite` is: its label, description, better direction and scale."""
        return self.vocabulary(suite).metric(metric)

    def placeholder(self, suite: str, metric: str) -> str | None:
        """Why `metric`'s values measure nothing: a judged metric under a placeholder judge."""
        return self.judge_placeholder if self.metric(suite, metric).judged else None

    def headlines(self) -> dict[str, tuple[Headline, ...]]:
        return {name: cls.headline for name, cls in self.classes.items() if cls is not None}

    def counts(self) -> dict[str, frozenset[str]]:
        return {name: cls.count_metrics for name, cls in self.classes.items() if cls is not None}

    def is_count(self, suite: str, metric: str, slice_: str = ALL) -> bool:
        return is_count(self.classes.get(suite), metric, slice_)

    def text(
        self,
        suite: str,
        metric: str,
        value: float | None,
        slice_: str = ALL,
        decimals: int | None = None,
    ) -> str:
        """`value` of `metric` as printed (see `format_value`)."""
        count = self.is_count(suite, metric, slice_)
        return format_value(value, count=count, decimals=decimals)


def judge_placeholder(manifest: RunManifest) -> str | None:
    """Why a run's judge measures nothing, when it is a placeholder (the offline midpoint
    judge); None for a real judge or a run without one."""
    if manifest.judge is None:
        return None
    from roadeval.tasks.requests.model_spec import ModelSpec

    spec = ModelSpec.model_validate(manifest.judge)
    reason = spec.placeholder
    return None if reason is None else f"judged by {spec.label} ({spec.model}), {reason}"
