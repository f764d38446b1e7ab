"""The run manifest as one typed record: everything needed to audit or reproduce a run, written
to `runs/<run_id>/manifest.json` and read back through the same classes (the `runs` rows, the
CLI's summaries, the reports)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer

from roadeval.tasks.results.engines import EnginesRecord
from roadeval.tasks.shard.counts import COUNTS, Counts

# ISO 8601 as `datetime.isoformat` writes it ("+00:00"), the form manifests have always had.
IsoTime = Annotated[datetime, PlainSerializer(datetime.isoformat, return_type=str)]


def shown_as(model: str, variant: str | None) -> str:
    """A model's name as tables print it: with the variant of the items when they were not
    shown as released ("m (blind)"), so an ablation's rows never read as the model's own."""
    return f"{model} ({variant})" if variant else model


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class UnscoredMetric(_Record):
    """Items a metric could not be scored for, and the first reason why."""

    items: int = 0
    first_reason: str


class PairCounts(Counts):
    """Counts, cost and errors of one suite x model, of the items shown one way: a blind
    ablation's requests are counted in an entry of their own (`variant` 'blind'), so a model's
    released counts are never inflated by them, and the run's totals add both."""

    suite: str
    model: str
    variant: str = ""
    error_kinds: dict[str, int] = Field(default_factory=dict)
    cost_usd: float = 0.0
    # False when some request had no known price (its cost is then a floor).
    cost_known: bool = True
    first_error: str | None = None
    corrupt_cache_entries: list[str] = Field(default_factory=list)
    unscored_metrics: dict[str, UnscoredMetric] = Field(default_factory=dict)

    @property
    def who(self) -> str:
        """The model, with its variant when it is not the released items ("m (blind)")."""
        return shown_as(self.model, self.variant)


class Totals(Counts):
    """The run's counts over every suite x model, and its cost."""

    cost_usd: float = 0.0

    @property
    def calls_made(self) -> str:
        """The calls the run made, as a line says them: the judge's apart when it was asked (a
        rerun that judges again what the baseline's judge failed on calls the judge alone)."""

        def calls(n: int, whose: str) -> str:
            return f"{n:,} {whose} call{'' if n == 1 else 's'}"

        judged = f" and {calls(self.judge_calls, 'judge')}" if self.judge_calls else ""
        return f"{calls(self.calls, 'model')}{judged} made"


class SkippedGroup(_Record):
    """The rows a suite's load left out (`on_bad_item: skip`: a bad row, a missing or unreadable
    image, an input that could not be drawn) for one field (`field` '': the row as a whole):
    how many, and the first one's problem (file, line, item and why)."""

    field: str
    rows: int
    first: str


class SuiteRecord(_Record):
    """A suite as the run loaded it: where from, which version and content, what was skipped."""

    name: str
    source: str
    demo: bool
    version: str
    hash: str
    items: int
    tasks: list[str]
    prompt_version: str
    max_attempts: int
    options: dict[str, Any]
    skipped_items: list[str]
    # The same rows grouped by the field they failed on, largest group first (empty in
    # manifests from before it was kept: `skipped_items` alone has them).
    skipped: list[SkippedGroup] = Field(default_factory=list)
    # The render stage's drawings: drawn now, found in the media cache or the store, failed.
    drawings: dict[str, int]
    # file -> field -> rows carrying it, for fields outside the release's row format.
    unknown_fields: dict[str, dict[str, int]]
    unknown_fields_message: str | None
    # The suite's scorer version, and a digest of everything that decides its scores besides
    # the answers (that version, the suite's options, the judge for a judged suite): a rerun
    # copies a baseline's score rows only where this digest is the baseline's.
    scorer_version: str = ""
    scoring_key: str = ""


class GenerationRecord(_Record):
    """Per suite x model: what the protocol states, what the panel set, what was sent, and
    where the two part (see `benchmarks.generation`)."""

    suite: str
    model: str
    protocol: dict[str, Any]
    panel: dict[str, Any]
    sent: dict[str, Any]
    departures: dict[str, Any]


class BaselineRecord(_Record):
    """The finished run a run was compared with: the last of its panel, or the one asked for
    (`--against`); and per suite, whether its scores could be copied."""

    run_id: str
    chosen_by: str
    started_at: IsoTime
    code_version: str
    # Suites whose scoring (scorer version, options, judge) differs from the baseline's: every
    # stored answer of theirs was scored again.
    rescored_suites: list[str] = Field(default_factory=list)
    # Per suite, items per kind of change against it (`changed:prompt`, `unchanged`, ...).
    changes: dict[str, dict[str, int]] = Field(default_factory=dict)


class CompactionRecord(_Record):
    """How a finished run's small parts were folded into one per table, suite and model
    (`storage.compaction`), or why they were not (the run's rows are landed either way)."""

    parts_written: int = 0
    parts_replaced: int = 0
    error: str | None = None


class HeadlineMethod(_Record):
    """How one headline metric's intervals were computed: `task` '*' (suite-wide) or the task
    (or '', each task, for a headline without a statistic); `method` wilson, percentile
    bootstrap, cluster percentile bootstrap (whole clusters of items drawn: `clusters` of them,
    called `unit`), or none (the suite declares no statistic for it); `strata`: what the
    bootstrap resamples within; `items`: the items it was computed over."""

    suite: str
    task: str
    metric: str
    method: str
    strata: list[str] = Field(default_factory=list)
    # The items shown blind ('blind') or as released ('').
    variant: str = ""
    items: int = 0
    # None where the items were drawn one by one.
    clusters: int | None = None
    unit: str = ""


class IntervalsRecord(_Record):
    """The confidence intervals of the run's headline metrics and its paired differences
    (docs/metrics.md): level, methods, resamples and seed, per headline the method used, and
    the seconds they took."""

    level: float
    proportion_method: str
    bootstrap_method: str
    paired_method: str
    # Where the items are clustered: the intervals', and the pairs' (paired by cluster).
    cluster_method: str = ""
    resamples: int
    seed: int
    headlines: list[HeadlineMethod] = Field(default_factory=list)
    seconds: float = 0.0


class FreshnessRecord(_Record):
    """One model's freshness in the run: its `reuse_for` in force, the oldest a stored answer
    could be to be reused (`fresh_since`, the horizon's start less `reuse_for`; None: any), the
    stored answers passed over as older than that, asked again (`stale`), and the answers it
    reused (`reused`, from the store or the baseline run) with when the oldest of them was
    bought (`oldest_reused`; None: none reused, or none with a known time)."""

    model: str
    role: str
    reuse_for: str
    fresh_since: IsoTime | None = None
    stale: int = 0
    reused: int = 0
    oldest_reused: IsoTime | None = None


class HorizonRecord(_Record):
    """Which run's start every `reuse_for` of a run is measured back from (`run_id`, begun
    `started_at`): the run's own, or, for a run that continues an unfinished run of its panel
    (`continues`, which had ended `continued_status`), the first run of that chain's."""

    run_id: str
    started_at: IsoTime
    continues: str | None = None
    continued_status: str | None = None


class ServedRecord(_Record):
    """Answers of one model in one role that its provider said were served by one
    (`served_model`, `system_fingerprint`) pair (None: the reply did not say): how many this
    run bought (`answers`) and reused (`reused`: from the store or the baseline run)."""

    model: str
    role: str
    served_model: str | None = None
    system_fingerprint: str | None = None
    answers: int = 0
    reused: int = 0


class RunManifest(_Record):
    """Suites with versions and hashes, models with their settings, counts, cost and times; the
    status (and its message) is set by the run record when it lands the manifest."""

    run_id: str
    panel: str
    started_at: IsoTime
    ended_at: IsoTime | None
    code_version: str
    store: str
    suites: list[SuiteRecord]
    # The panel's model specs as dumped, key fields left out (specs hold a key's variable name).
    models: list[dict[str, Any]]
    judge: dict[str, Any] | None
    generation: list[GenerationRecord]
    # Suite x model pairs a baseline had no rule for, and how many items that left out.
    not_covered: list[dict[str, Any]]
    # Item x model pairs the run set out to answer (its counts cover those it reached), an
    # ablation's included: an item asked released and blind counts twice, as it is asked twice.
    planned_items: int
    count_meanings: dict[str, str] = Field(default_factory=lambda: dict(COUNTS))
    counts: list[PairCounts]
    totals: Totals
    # Who ran the stages: "prefect" or "inline".
    orchestrator: str
    # Under Prefect: the flow run this run is, and the deployment that started it (None when
    # started by hand, e.g. `roadeval run` with PREFECT_API_URL set).
    flow_run_id: str | None = None
    deployment: str | None = None
    # Answer worker processes the calls were spread over (0: answered in the run's process).
    answer_processes: int = 0
    dry_run: bool = False
    budget_usd: float | None = None
    # The run this one was compared with (its changes and reuse), None when it had none.
    baseline: BaselineRecord | None = None
    # A rescore: no model was called, every answer was the store's.
    rescore: bool = False
    # The panel's ablations (`blind`: image-bearing items asked again with black images).
    ablations: list[str] = Field(default_factory=list)
    # Which engines drew and scored, at which addresses (None in manifests from before).
    engines: EnginesRecord | None = None
    # A finished run's compaction (None: not compacted, as a run that stopped early).
    compaction: CompactionRecord | None = None
    # How a finished run's intervals and paired differences were computed (None: no metrics).
    intervals: IntervalsRecord | None = None
    # Per model (and the judge): its `reuse_for` in force and the stored answers it passed
    # over as older, asked again (empty in manifests from before).
    freshness: list[FreshnessRecord] = Field(default_factory=list)
    # The run whose start the `reuse_for` above are measured from (None in manifests from before).
    horizon: HorizonRecord | None = None
    # Per model and role, what its provider said served its answers, with counts.
    served: list[ServedRecord] = Field(default_factory=list)
    status: str | None = None
    message: str | None = None

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)

    @classmethod
    def from_json(cls, text: str | bytes) -> RunManifest:
        return cls.model_validate_json(text)
