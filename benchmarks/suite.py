"""The Suite contract: a suite owns its loader, prompt, parser and metrics, in one module."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, fields
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, Self

from roadeval.benchmarks.drawing import DrawJob
from roadeval.benchmarks.errors import BadItemPolicy
from roadeval.benchmarks.generation import GenerationSettings
from roadeval.benchmarks.item import Item, MediaKind
from roadeval.benchmarks.judging import Judge, JudgeReply, JudgeRequest
from roadeval.benchmarks.loading import (
    DEFAULT_LIMITS,
    LIMIT_OPTIONS,
    LoadLimits,
    LoadReport,
    take_limits,
)
from roadeval.benchmarks.messages import ImageRef, Message, encode_messages
from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.quality_report import QualityReport
from roadeval.benchmarks.vocabulary import Vocabulary

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "GroupValue",
    "Headline",
    "ItemScore",
    "Message",
    "ParseStatus",
    "ParsedAnswer",
    "PredictionsRequest",
    "ScoredItem",
    "Statistic",
    "Suite",
    "Verdicts",
]


# The CPU a judge call costs the process that makes it (the gateway's few milliseconds per
# call; the judge's own time is waiting, which costs no CPU).
JUDGE_CALL_CPU_S = 0.005


class ParseStatus(StrEnum):
    OK = "ok"
    ABNORMAL = "abnormal"  # an answer was read, but only by a fallback rule the suite counts
    UNPARSED = "unparsed"  # no answer could be read; scored by the protocol's bad-answer rule


@dataclass(frozen=True, slots=True)
class ParsedAnswer:
    """What a parser read from a raw reply, and which of the suite's rules it applied."""

    status: ParseStatus
    value: Any
    rule: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class ItemScore:
    """One item's scores: the metric values, the metrics that could not be scored (and why:
    never a 0 in their place), what an audit wants kept (`details`, landed), the judge's reply
    when a judge scored, and whatever the suite's own summary needs again (`state`, kept in
    memory only, so that nothing is computed twice)."""

    values: dict[str, float]
    unscored: dict[str, str] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    judged: JudgeReply | None = None
    state: Any = None


@dataclass(frozen=True)
class GroupValue:
    """A corpus-level value over a group of items that is not a mean of per-item values (an
    ECE over a view, a micro-average over several tasks): `task` '*' for suite-wide groups,
    `slice` '' for all items."""

    task: str
    slice: str
    slice_value: str
    metric: str
    value: float
    n: int


@dataclass(frozen=True, slots=True)
class ScoredItem:
    """An item with its final parse and per-item metric values, input to corpus metrics."""

    item: Item
    parsed: ParsedAnswer
    values: dict[str, float]
    state: Any = None


@dataclass(frozen=True, kw_only=True)
class PredictionsRequest:
    """A released prediction file to score as the release's metric scripts do (`roadeval
    score-predictions`): its label file, the predictions, and optionally one task. A suite that
    reads more declares a subclass with its options as fields (`Suite.predictions_request`)."""

    labels: Path
    predictions: Path
    task: str | None = None

    @classmethod
    def option_names(cls) -> tuple[str, ...]:
        """The fields beyond those of every request: the suite's own options."""
        common = {f.name for f in fields(PredictionsRequest)}
        return tuple(f.name for f in fields(cls) if f.name not in common)

    @classmethod
    def of(cls, request: PredictionsRequest) -> Self:
        """`request` as this class: itself when it is one, else its fields with this class's
        defaults for the rest."""
        if isinstance(request, cls):
            return request
        mine = {f.name for f in fields(cls)}
        return cls(**{f.name: getattr(request, f.name) for f in fields(request) if f.name in mine})


# The images shipped with the items a scoring worker scores (item id -> images, bytes carried),
# set while it scores them: there, the run's media files may be on another machine.
_SHIPPED: ContextVar[Mapping[str, tuple[ImageRef, ...]] | None] = ContextVar(
    "shipped_images", default=None
)


@contextmanager
def shipped_images(images: Mapping[str, tuple[ImageRef, ...]]) -> Iterator[None]:
    """While open, `Suite.images_shown` answers from `images` (a scoring worker's batch)."""
    token = _SHIPPED.set(images)
    try:
        yield
    finally:
        _SHIPPED.reset(token)


@dataclass(frozen=True)
class Verdicts:
    """A metric that is a share of 0/1 verdicts: `successes` of `trials`, times `scale` (100
    for a percentage); its interval is then a binomial one, not a bootstrap."""

    successes: int
    trials: int
    scale: float = 1.0


class Statistic(Protocol):
    """A headline metric recomputed from sums over items, for its confidence interval: each
    item gives a row of numbers (`columns`) and the metric is a function of the column sums
    (`value`), so a bootstrap resample of items is a weighted sum and every resample is
    computed at once. Stateless: the column layout says all `value` needs (see
    `benchmarks.headline_stats` for the common ones)."""

    @property
    def strata(self) -> tuple[str, ...]:
        """Item labels whose groups keep their sizes in every resample (the groups a metric
        compares, as TRIP's penalties); rows over several tasks resample within each task."""
        ...

    def columns(self, scored: Sequence[ScoredItem]) -> NDArray[np.float64] | None:
        """One row per item (in `scored`'s order); None when the metric is undefined here."""
        ...

    def value(self, sums: NDArray[np.float64]) -> NDArray[np.float64]:
        """The metric from column sums, one resample per row: (resamples, k) -> (resamples,)."""
        ...

    def verdicts(self, sums: NDArray[np.float64]) -> Verdicts | None:
        """From the sums over all items: the verdicts when the metric is a share of 0/1
        verdicts, else None."""
        ...


@dataclass(frozen=True)
class Headline:
    """A number a suite's leaderboard leads with, as its release reports it: `metric` of the
    suite-wide rows (`task` '*') or of every task whose rows have it (`task` ''). Which way is
    better, its label and its scale are the metric's, in the suite's `vocabulary`. `statistic`
    recomputes it over resampled items for its 95% interval and paired differences (None: it
    lands without an interval)."""

    metric: str
    task: str = "*"
    statistic: Statistic | None = field(default=None, compare=False)


class Suite(ABC):
    """Base class for suites. A suite is installed by an entry point in the group
    `roadeval.suites` (see `registry`), or registered in process with `@register_suite`."""

    # The suite's name, declared once, on the subclass: a panel's `suites:` names the suite by
    # it, and the suite's `roadeval.suites` entry point must bear the same name.
    name: ClassVar[str]
    prompt_version: ClassVar[str]
    # Attempts per item in all: a suite whose protocol re-asks on a bad answer raises this.
    max_attempts: ClassVar[int] = 1
    # The version of the suite's parse and score rules: bump it when they change, and the next
    # run re-scores every stored answer (no model is asked again); see docs/reruns.md.
    scorer_version: ClassVar[str] = "1"
    # Item labels whose values slice the per-item metrics named in `slice_metrics`.
    slice_labels: ClassVar[tuple[str, ...]] = ()
    slice_metrics: ClassVar[tuple[str, ...]] = ()
    # The numbers its leaderboard leads with (the report, `show`, the run's summary), and that
    # land with confidence intervals.
    headline: ClassVar[tuple[Headline, ...]] = ()
    # What its metrics, tasks and labels mean to a reader: each metric's label, description,
    # better direction and scale, the tasks' and codes' full names, the labels' natural orders.
    vocabulary: ClassVar[Vocabulary] = Vocabulary()
    # The metrics of its summaries that count items (`items`, `unparsed_count`, ...): printed
    # as integers. A metric of `slice_metrics` is a mean in the slice rows whatever this says.
    count_metrics: ClassVar[frozenset[str]] = frozenset()
    # What the protocol sends with every request (`protocol_generation` for an instance's, its
    # options applied); see `generation` for how the panel merges in.
    generation: ClassVar[GenerationSettings] = GenerationSettings()
    # Whether `score_item` calls a judge (the run then needs the panel's `judge:`).
    uses_judge: ClassVar[bool] = False
    # What `score_predictions` reads: a subclass of PredictionsRequest when the suite has options.
    predictions_request: ClassVar[type[PredictionsRequest]] = PredictionsRequest
    # What the items that `cluster_keys` links share, as a plural noun ("scenes"): the unit a
    # clustered interval is drawn over, named in the manifest and beside the leaderboards.
    cluster_unit: ClassVar[str] = "clusters"
    # The suite's own store tables, name -> record (a frozen dataclass, as in `storage.records`):
    # registered with the suite (`register_suite`), filled by `extra_tables`.
    tables: ClassVar[Mapping[str, type[Any]]] = {}
    # What one row of the suite's source may hold (depth, text, line size; see `loading`): the
    # suite's defaults, which the options `max_depth`, `max_text_chars` and `max_row_bytes` set
    # for one instance (`limits`; every suite takes them, through `take_limits`).
    default_limits: ClassVar[LoadLimits] = DEFAULT_LIMITS
    limits: LoadLimits = DEFAULT_LIMITS

    def __init__(self, **options: Any) -> None:
        """Suites with settings (from the panel's `options:`) override this and validate them
        (the limits options with `take_limits`)."""
        self.limits = take_limits(self.name, options, self.default_limits)
        if options:
            raise ValueError(
                f"suite {self.name!r} takes no options but its own and the loading limits "
                f"({', '.join(LIMIT_OPTIONS)}), got: {', '.join(sorted(options))}"
            )

    def options(self) -> dict[str, Any]:
        """The settings in force, recorded in the run manifest."""
        return {}

    @abstractmethod
    def load(self, source: Path, *, on_bad_item: BadItemPolicy = BadItemPolicy.ERROR) -> LoadReport:
        """Read the suite from its released layout under `source`."""

    def render(self, item: Item) -> tuple[ImageRef, ...]:
        """The images the protocol shows for this item, as content-addressed files; a suite
        that draws (RoadBench's reference line, TRIP's point-cloud views) renders them here, a
        stage of its own so that it can fan out. By default: the item's images, in order."""
        images = [m for m in item.media if m.kind in (MediaKind.IMAGE, MediaKind.FRAME)]
        images.sort(key=lambda media: media.index if media.index is not None else 0)
        return tuple(ImageRef(m.path, m.sha256, m.mime or "image/png") for m in images)

    def images_shown(self, item: Item) -> tuple[ImageRef, ...]:
        """The images the model was shown for this item, for a scorer that needs them (a judge
        sees what the model saw): on a scoring worker, those shipped with the item, bytes and
        all (the run's files may be on another machine); elsewhere `render(item)`. A scorer
        calls this, never `render`."""
        shipped = _SHIPPED.get()
        if shipped is not None and item.item_id in shipped:
            return shipped[item.item_id]
        return self.render(item)

    @abstractmethod
    def prompt(self, item: Item, images: Sequence[ImageRef]) -> list[Message]:
        """The exact chat messages the protocol sends for this item, its images by reference."""

    def messages(self, item: Item) -> list[Message]:
        """The messages as sent (images as data URLs): `prompt` over `render`, encoded."""
        return encode_messages(self.prompt(item, self.render(item)))

    def protocol_generation(self) -> GenerationSettings:
        """The protocol's settings as this instance sends them: the class's `generation`,
        unless the suite's options change it (V2X-QA's `top_logprobs`); the manifest records it."""
        return self.generation

    def generation_for(self, item: Item) -> GenerationSettings:
        """The protocol's settings for this item's request (the same for every item unless a
        suite's tasks differ)."""
        return self.protocol_generation()

    @abstractmethod
    def parse(self, item: Item, output: ModelOutput) -> ParsedAnswer:
        """Read the model's output (its text, and log-probabilities where the protocol uses
        them) by the protocol's rules."""

    @abstractmethod
    def score(self, item: Item, parsed: ParsedAnswer) -> dict[str, float]:
        """Per-item metric values (the bad-answer rule applies to unparsed answers)."""

    def score_details(self, item: Item, parsed: ParsedAnswer) -> ItemScore:
        """`score` with what an audit or the summary wants kept; by default the values alone."""
        return ItemScore(values=self.score(item, parsed))

    def draw_job(self, item: Item) -> DrawJob | None:
        """What the render stage draws for this item (a point cloud's views), fanned out on
        Dask and content-addressed; None (the default) when the item's images need no drawing."""
        return None

    def judge_preview(self, item: Item, images: Sequence[ImageRef]) -> JudgeRequest | None:
        """The judge request this item's answer will get, before the answer exists (its
        candidate left empty), for estimates; None when the item is not judged. A judged suite
        overrides it."""
        return None

    def heavy_scoring(self, item: Item) -> bool:
        """Whether scoring this item is worth sending to the scoring cluster (Ray): CPU-heavy
        metrics, or a judge call. By default, every item of a judged suite."""
        return self.uses_judge

    def heavy_scoring_seconds(self, item: Item) -> float:
        """The CPU seconds scoring this heavy item is estimated to take: what decides whether
        a run's heavy scoring pays for starting a local Ray (`tasks.shard.scoring_choice`).
        By default a judge call's, made through the run's gateway."""
        return JUDGE_CALL_CPU_S

    async def score_item(
        self, item: Item, parsed: ParsedAnswer, output: ModelOutput, judge: Judge | None
    ) -> ItemScore:
        """The scoring stage's call: may be asynchronous and may call the judge. By default,
        `score_details`, computed in a thread (it may be CPU-heavy, as RoadBench's is)."""
        return await asyncio.to_thread(self.score_details, item, parsed)

    def should_reask(self, item: Item, parsed: ParsedAnswer) -> bool:
        """Whether the protocol asks the same question again after this answer."""
        return self.max_attempts > 1 and parsed.status is ParseStatus.UNPARSED

    def cluster_keys(self, item: Item) -> tuple[str, ...]:
        """What this item shares with others of its suite (its scene, its image, its clip): items
        that share a key, directly or through other items, form one cluster, and headline
        intervals resample whole clusters, since questions about one scene are not independent
        evidence. By default none: every item is its own cluster."""
        return ()

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

    def group_values(self, scored: Sequence[ScoredItem]) -> list[GroupValue]:
        """Corpus values over groups of items across tasks (per view, per split, ...), for
        metrics that per-task summaries cannot give; none unless the suite defines them."""
        return []

    def extra_tables(self, run_id: str, model: str, scored: Sequence[ScoredItem]) -> list[Any]:
        """Rows of the suite's own store tables (records of the tables it declares in
        `tables`) from one model's scored items, landed with the run's metrics, so
        visible only once the whole run has landed; none unless the suite defines them."""
        return []

    def quality_report(self, source: Path) -> QualityReport | None:
        """Audit the items under `source` against the suite's item-quality rules (`roadeval
        qc`): a suite checks what its paper and release say of its items (see `audit`), and
        raises SuiteSourceError for a source that is not its layout. By default, the checks
        every suite shares, over what `load` accepts (`item_checks.standard_report`); None
        says the suite has nothing to check."""
        from roadeval.benchmarks.item_checks import standard_report

        return standard_report(self, Path(source))

    def score_predictions(self, request: PredictionsRequest) -> dict[str, Any]:
        """Score a released prediction file exactly as the release's metric scripts do (a suite
        with options of its own reads them with `predictions_request.of(request)`); JSON-able."""
        raise NotImplementedError(f"suite {self.name!r} cannot score released prediction files")

    def generate_demo(self, root: Path) -> Path:
        """Write a small synthetic suite in the released layout under `root`; return its source."""
        raise NotImplementedError(f"suite {self.name!r} has no demo generator")
