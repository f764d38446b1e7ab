"""The run manifest is one typed record: written and read through it, its schema derived from it."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from roadeval.tasks.results.manifest import PairCounts, RunManifest, Totals, UnscoredMetric
from roadeval.tasks.shard.counts import COUNTS


def _manifest() -> RunManifest:
    pair = PairCounts(suite="trip", model="roadeval/random", items=3, scored=2, errors=1)
    pair.unscored_metrics["judge"] = UnscoredMetric(items=1, first_reason="unreadable verdict")
    return RunManifest(
        run_id="r1",
        panel="nightly",
        started_at=datetime(2026, 12, 1, 3, 0, tzinfo=UTC),
        ended_at=None,
        code_version="0.2.0",
        store="/tmp/store",
        suites=[],
        models=[{"model": "roadeval/random"}],
        judge=None,
        generation=[],
        not_covered=[],
        planned_items=3,
        counts=[pair],
        totals=Totals(items=3, scored=2, errors=1, cost_usd=0.5),
        orchestrator="inline",
    )


def test_a_manifest_reads_back_as_it_was_written() -> None:
    manifest = _manifest()
    text = manifest.to_json()
    assert RunManifest.from_json(text) == manifest
    raw = json.loads(text)
    # The JSON form manifests have always had: ISO times with their offset, counts by name.
    assert raw["started_at"] == "2026-12-01T03:00:00+00:00"
    assert raw["counts"][0]["unscored_metrics"]["judge"]["first_reason"] == "unreadable verdict"
    assert raw["count_meanings"] == COUNTS


def test_every_count_is_a_field_with_its_meaning() -> None:
    schema = RunManifest.model_json_schema()
    totals = schema["$defs"]["Totals"]["properties"]
    assert set(COUNTS) <= set(totals)
    assert all(totals[name]["description"] == meaning for name, meaning in COUNTS.items())


def test_a_misspelt_field_fails_where_the_record_is_made() -> None:
    with pytest.raises(ValidationError, match="scord"):
        PairCounts(suite="trip", model="m", scord=1)  # type: ignore[call-arg]
