"""The named counts a run keeps per suite x model, each with what it means.

Shards count, the flow adds them up, the manifest and the `runs` row report them: all by these
names, so a new count is one field of `Counts`.
"""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel, ConfigDict, Field


class Counts(BaseModel):
    """The named counts of one suite x model (or of a whole run), each described where it is
    declared: a new count is one field here."""

    model_config = ConfigDict(extra="forbid")

    items: int = Field(default=0, title="items planned", description="items planned for the model")
    scored: int = Field(default=0, title="items scored", description="items answered and scored")
    calls: int = Field(
        default=0,
        title="model calls",
        description="requests made to the model (protocol attempts not answered from the store)",
    )
    requests: int = Field(
        default=0, title="HTTP requests", description="HTTP requests sent, retries included"
    )
    retries: int = Field(
        default=0, title="retries", description="HTTP requests that retried a failed one"
    )
    cached: int = Field(
        default=0,
        title="answers reused",
        description=(
            "answers reused from the store (bought by an earlier or a concurrent run, or by "
            "another item of this run with the same request)"
        ),
    )
    errors: int = Field(
        default=0,
        title="items in error",
        description="items that ended in a model error: reported, not scored, never a wrong answer",
    )
    interrupted: int = Field(
        default=0, title="items interrupted", description="items cut short by the run's stop"
    )
    not_run: int = Field(
        default=0,
        title="items not run",
        description=(
            "items with nothing of this run's in the store: not asked because the run stopped, "
            "or in a shard that did not land (not_landed)"
        ),
    )
    not_landed: int = Field(
        default=0,
        title="items not landed",
        description=(
            "items of shards that did not land (the store failed, or a stage raised), counted "
            "in not_run too: a resumed run asks them, reusing any answer the store kept"
        ),
    )
    abnormal: int = Field(
        default=0,
        title="abnormal answers",
        description="answers read only by a fallback rule the suite counts",
    )
    unparsed: int = Field(
        default=0,
        title="unread answers",
        description="answers that could not be read (scored by the protocol's bad-answer rule)",
    )
    reasks: int = Field(
        default=0, title="re-asks", description="re-asks made by the suite's protocol"
    )
    stale: int = Field(
        default=0,
        title="stale answers asked again",
        description=(
            "requests whose stored answer was older than the model's `reuse_for`, so not "
            "reused: asked again (counted in calls, or in answers reused when another run "
            "bought a fresh one meanwhile)"
        ),
    )
    scores_reused: int = Field(
        default=0,
        title="items whose scores were copied",
        description=(
            "items whose answers and score rows were copied from the baseline run (the same "
            "requests, the same item, the same scorer): neither asked nor scored again"
        ),
    )
    judge_calls: int = Field(
        default=0,
        title="judge calls",
        description="requests made to the judge (the panel's `judge:`) to score answers",
    )
    judge_cached: int = Field(
        default=0, title="judge verdicts reused", description="judge verdicts reused from the store"
    )
    judge_stale: int = Field(
        default=0,
        title="stale verdicts asked again",
        description="judge verdicts stored but older than the judge's `reuse_for`: asked again",
    )
    unscored: int = Field(
        default=0,
        title="items unscored",
        description=(
            "answered items with a metric that could not be scored (e.g. unreadable verdicts)"
        ),
    )
    scorer_errors: int = Field(
        default=0,
        title="items whose scorer raised",
        description=(
            "answered items whose suite's scorer raised: unscored (one score row, metric '*', "
            "reason scorer_error), never a 0, and not counted in scored"
        ),
    )
    may_be_billed: int = Field(
        default=0,
        title="requests maybe billed",
        description="requests that timed out or were cut off, which a provider may still bill",
    )
    unknown_cost: int = Field(
        default=0,
        title="requests of unknown cost",
        description=(
            "requests sent whose cost is not known (no price for the model, or a reply "
            "without token counts): the USD shown is a floor, or unknown when nothing is priced"
        ),
    )
    corrupt_cache: int = Field(
        default=0,
        title="unreadable stored answers",
        description="stored answers that could not be read back, and were asked again",
    )

    @property
    def answered(self) -> int:
        """Items answered and landed: scored, or unscored because their scorer raised."""
        return self.scored + self.scorer_errors

    @property
    def left(self) -> int:
        """Items left for a resumed run: cut short by the stop, or with nothing landed."""
        return self.interrupted + self.not_run


COUNTS: dict[str, str] = {name: f.description or "" for name, f in Counts.model_fields.items()}
# What each count is headed with in a table: named for what it counts (items, answers, requests).
COUNT_HEADINGS: dict[str, str] = {name: f.title or name for name, f in Counts.model_fields.items()}


def new_counts() -> Counter[str]:
    """Every count at zero, so reports show zeros rather than missing columns."""
    return Counter(dict.fromkeys(COUNTS, 0))
