"""`reuse_for` read and applied: the oldest answer a run may reuse, back from its start; an
answer's time kept with it in the store (and one kept before answers had a time, of unknown
age: reused only forever)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from roadeval.benchmarks.output import ModelOutput
from roadeval.tasks.requests.freshness import (
    effective_reuse_for,
    fresh_since,
    is_fresh,
    reuse_for_problem,
    reuse_seconds,
    run_start,
)
from roadeval.tasks.requests.request import CorruptCacheEntry, ModelCall

STARTED = datetime(2026, 3, 2, 3, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("forever", None), ("never", 0.0), ("1s", 1.0), ("90m", 5_400.0), ("12h", 43_200.0)],
)
def test_a_reuse_for_reads_as_seconds(text: str, seconds: float | None) -> None:
    assert reuse_for_problem(text) is None
    assert reuse_seconds(text) == seconds


def test_the_oldest_answer_a_run_reuses_is_its_start_less_reuse_for() -> None:
    assert fresh_since("7d", STARTED) == STARTED - timedelta(days=7)
    assert fresh_since("2w", STARTED) == STARTED - timedelta(days=14)
    assert fresh_since("never", STARTED) == STARTED
    assert fresh_since("forever", STARTED) is None and fresh_since(None, STARTED) is None
    since = STARTED - timedelta(days=1)
    assert is_fresh(since, since) and not is_fresh(since - timedelta(microseconds=1), since)
    assert is_fresh(None, None) and not is_fresh(None, since)  # unknown age: forever only
    assert run_start("20260302T030000Z-1a2b3c4d") == STARTED and run_start("adhoc") is None


def test_a_model_s_own_reuse_for_wins_and_a_baseline_reuses_unless_its_own_says() -> None:
    assert effective_reuse_for("1d", "7d", "never", baseline=False) == "1d"
    assert effective_reuse_for(None, "7d", "never", baseline=False) == "7d"
    assert effective_reuse_for(None, None, "never", baseline=False) == "never"
    assert effective_reuse_for(None, None, None, baseline=False) == "forever"
    assert effective_reuse_for(None, "7d", "never", baseline=True) == "forever"
    assert effective_reuse_for("never", None, None, baseline=True) == "never"


def test_an_answer_s_time_is_kept_in_its_cache_entry_and_read_back() -> None:
    bought = datetime(2026, 3, 1, 12, 30, 5, 123456, tzinfo=UTC)
    call = ModelCall("k" * 64, "m", 1, ModelOutput(text="A"), answered_at=bought)
    assert ModelCall.from_cache(call.to_cache(), "k" * 64).answered_at == bought
    # An entry kept before answers had a time reads as of unknown age, not as corrupt.
    body = json.loads(call.to_cache())
    del body["answered_at"]
    assert ModelCall.from_cache(json.dumps(body).encode(), "k" * 64).answered_at is None
    for bad in ("yesterday", "2026-03-01T12:30:05", 17):
        body["answered_at"] = bad
        with pytest.raises(CorruptCacheEntry, match="answered_at"):
            ModelCall.from_cache(json.dumps(body).encode(), "k" * 64)
