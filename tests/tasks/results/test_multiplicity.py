"""Drift flags over the many rows of one comparison: Holm's adjusted p-values, the bootstrap's
p-value they start from, and the bound they keep: among unchanged models (answers drawn anew
each run at the same accuracy, as a sampled model answers), a comparison raises a false drift
flag at most about 5% of the time, where a flag per row at 95% raises one most of the time;
a model that really changed is still flagged among them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np
import pytest

from roadeval.benchmarks.registry import get_suite
from roadeval.storage.records import ComparisonRow
from roadeval.tasks.results.formats import SuiteRules
from roadeval.tasks.results.history import HistoryRun, comparison_steps
from roadeval.tasks.results.intervals import IntervalSettings, bootstrap_p, percentile
from roadeval.tasks.results.multiplicity import holm_adjusted
from roadeval.tasks.results.run_compare import compare_model

from support.verdicts import drawn_verdicts, trip_items

MODELS = 10
COMPARISONS = 20
ITEMS = 120


def test_holm_multiplies_the_kth_smallest_by_m_minus_k_plus_1_stepping_down() -> None:
    adjusted = holm_adjusted([0.01, 0.04, 0.03, 0.005])
    # Sorted: 0.005 x 4, 0.01 x 3, 0.03 x 2, 0.04 x 1 (never below the one before: 0.06).
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm_adjusted([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm_adjusted([]) == []


def test_the_bootstrap_p_value_is_below_5_percent_where_the_interval_leaves_out_0() -> None:
    rng = np.random.default_rng(3)
    assert bootstrap_p(np.zeros(1000)) == 1.0  # identical answers
    assert bootstrap_p(-0.1 - rng.random(1000)) == 0.0  # every resample on one side
    assert bootstrap_p(np.full(10, np.nan)) is None
    for centre in np.linspace(-0.3, 0.3, 41):
        draws = rng.normal(centre, 0.1, 1000)
        low, high = percentile(draws) or (0.0, 0.0)
        p = bootstrap_p(draws)
        assert p is not None
        if abs(p - 0.05) > 0.01:  # the two agree away from the edge (percentiles interpolate)
            assert (p < 0.05) == (low > 0 or high < 0), (centre, p, low, high)


def _run(run_id: str, models: Sequence[str]) -> HistoryRun:
    return HistoryRun(
        run_id, datetime.now(UTC), None, "finished", {m: f"openai/{m}" for m in models}, 0.0, {}
    )


def _comparison(k: int, drifting: str | None = None) -> list[ComparisonRow]:
    """Comparison k: each model's answers drawn anew in both runs at accuracy 0.6 (the
    drifting one's at 0.3 in the second run)."""
    suite, rules = get_suite("trip"), SuiteRules({"trip"})
    items = trip_items(ITEMS)
    rows: list[ComparisonRow] = []
    for n in range(MODELS):
        model = f"m{n}"
        old = drawn_verdicts(items, 0.6, 1000 * k + 2 * n)
        new = drawn_verdicts(items, 0.3 if model == drifting else 0.6, 1000 * k + 2 * n + 1)
        found = compare_model(suite, model, ("a", "b"), old, new, IntervalSettings(seed=k), rules)
        rows.extend(found.rows)
    return rows


def test_a_comparison_of_unchanged_models_raises_a_false_drift_flag_rarely() -> None:
    models = [f"m{n}" for n in range(MODELS)]
    before, after = _run("a", models), _run("b", models)
    per_row = corrected = 0
    for k in range(COMPARISONS):
        rows = _comparison(k)
        assert len(rows) >= 2 * MODELS  # several headlines per model: many tests at once
        per_row += any(row.significant for row in rows)
        corrected += any(step.drift for step in comparison_steps(rows, before, after))
    # Each row at 95% flags something in most comparisons; corrected, about 5% of them
    # (1 of 20 expected; 4 or more has a chance under 2% if the bound holds).
    assert per_row >= COMPARISONS // 3, per_row
    assert corrected <= 3, corrected


def test_a_model_that_changed_is_still_flagged_among_unchanged_ones() -> None:
    models = [f"m{n}" for n in range(MODELS)]
    steps = comparison_steps(_comparison(99, drifting="m4"), _run("a", models), _run("b", models))
    flagged = {step.row.model for step in steps if step.drift}
    assert flagged == {"m4"}
    accuracy = next(
        s for s in steps if s.row.model == "m4" and (s.row.metric, s.row.task) == ("accuracy", "*")
    )
    assert accuracy.drift and accuracy.p_adjusted is not None and accuracy.p_adjusted <= 0.05
