"""The named counts a run keeps per suite x model, each with what it means.

Shards count, the flow adds them up, the manifest and the `runs` row report them: all by these
names, so a new count is one line here.
"""

from __future__ import annotations

from collections import Counter

COUNTS: dict[str, str] = {
    "items": "items planned for the model",
    "scored": "items answered and scored",
    "calls": "requests made to the model (protocol attempts not answered from the store)",
    "requests": "HTTP requests sent, retries included",
    "retries": "HTTP requests that retried a failed one",
    "cached": "answers reused from the store (bought by an earlier or a concurrent run)",
    "errors": "items that ended in a model error: reported, not scored, never a wrong answer",
    "interrupted": "items cut short by the run's stop",
    "not_run": "items not asked because the run stopped",
    "abnormal": "answers read only by a fallback rule the suite counts",
    "unparsed": "answers that could not be read (scored by the protocol's bad-answer rule)",
    "reasks": "re-asks made by the suite's protocol",
    "judge_calls": "requests made to the judge (the panel's `judge:`) to score answers",
    "judge_cached": "judge verdicts reused from the store",
    "unscored": "answered items with a metric that could not be scored (e.g. unreadable verdicts)",
    "may_be_billed": "requests that timed out or were cut off, which a provider may still bill",
    "corrupt_cache": "stored answers that could not be read back, and were asked again",
}


def new_counts() -> Counter[str]:
    """Every count at zero, so reports show zeros rather than missing columns."""
    return Counter(dict.fromkeys(COUNTS, 0))
