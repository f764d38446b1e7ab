"""A real run lands its headline metrics with 95% intervals and every pair of models' paired
differences (`metric_pairs`), records method, resamples, seed and clusters in its manifest, and
a second identical run lands the same intervals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support.model_server import ModelServer, Reply
from support.trip_panel import gold_rule, invoke, query_csv, trip_gold, write_panel

pytestmark = pytest.mark.usefixtures("inline")

TRIP_HEADLINES = ("accuracy", "difficulty_penalty", "modality_penalty")


def _manifests(store: Path) -> list[dict[str, Any]]:
    found = [json.loads(p.read_text()) for p in (store / "runs").glob("*/manifest.json")]
    return sorted(found, key=lambda m: m["started_at"])


def _run(panel: Path, store: Path) -> None:
    result = invoke("run", "--panel", str(panel), "--store", str(store), "--no-report")
    assert result.exit_code == 0, result.output


def _rows(store: Path, sql: str) -> list[list[str]]:
    return [line.split(",") for line in query_csv(str(store), sql)[1:]]


def test_a_run_lands_intervals_and_paired_differences_reproducibly(
    tmp_path: Path, server: ModelServer
) -> None:
    source, gold = trip_gold(tmp_path)
    # Two models that answer every item right (identical answers) and one that always says A.
    server.rules["right-1"] = gold_rule(gold)
    server.rules["right-2"] = gold_rule(gold)
    server.rules["letter-a"] = lambda body, hit: Reply("A")
    models = [
        {"model": f"openai/{name}", "name": name, "api_base": server.api_base}
        for name in ("right-1", "right-2", "letter-a")
    ]
    panel = write_panel(
        tmp_path / "panel.yaml",
        source,
        models,
        scoring={"engine": "local"},
        render={"engine": "local"},
        intervals={"resamples": 400, "seed": 11},
    )
    store = tmp_path / "store"
    _run(panel, store)
    run_id = _manifests(store)[0]["run_id"]

    intervals = (
        "select model, metric, value, ci_low, ci_high from metrics where run_id = '{}' "
        "and task = '*' and slice = '' and ci_low is not null order by model, metric"
    )
    found = _rows(store, intervals.format(run_id))
    assert [(m, metric) for m, metric, *_ in found] == [
        (model, metric) for model in ("letter-a", "right-1", "right-2") for metric in TRIP_HEADLINES
    ]
    for _, _, value, low, high in found:
        assert float(low) <= float(value) <= float(high)
    by_key = {(m, metric): (float(v), float(lo), float(hi)) for m, metric, v, lo, hi in found}
    value, low, high = by_key[("letter-a", "accuracy")]
    assert 0 < low < value < high < 1
    # All right: every resample is all right, so the interval is [1, 1].
    assert by_key[("right-1", "accuracy")][0] == by_key[("right-1", "accuracy")][2] == 1.0
    # Rows that are no headline carry no interval.
    others = "select count(*) from metrics where run_id = '{}' and ci_low is not null and ({})"
    not_headline = (
        "slice <> '' or metric not in ('accuracy', 'difficulty_penalty', 'modality_penalty')"
    )
    assert _rows(store, others.format(run_id, not_headline)) == [["0"]]

    pairs = (
        "select model_a, model_b, metric, n, difference, ci_low, ci_high, significant "
        "from metric_pairs where run_id = '{}' and task = '*' order by all"
    )
    landed = _rows(store, pairs.format(run_id))
    assert len(landed) == 3 * len(TRIP_HEADLINES)
    by_pair = {(a, b, metric): rest for a, b, metric, *rest in landed}
    items = by_pair[("letter-a", "right-1", "accuracy")][0]
    assert int(items) == len(gold)
    for metric in TRIP_HEADLINES:
        # Identical answers: exactly no difference, never significant.
        assert by_pair[("right-1", "right-2", metric)][1:] == ["0.0", "0.0", "0.0", "False"]
    gap = by_pair[("letter-a", "right-1", "accuracy")]
    assert float(gap[1]) < 0 and float(gap[3]) < 0 and gap[4] == "True"

    record = _manifests(store)[0]["intervals"]
    assert (record["level"], record["resamples"], record["seed"]) == (0.95, 400, 11)
    # The demo asks two questions of each of two images: its 43 items are 41 clusters, drawn
    # within difficulty and modality (each image's questions share both).
    methods = {
        h["metric"]: (h["method"], h["strata"], h["clusters"], h["items"])
        for h in record["headlines"]
    }
    strata = ["task", "difficulty", "modality"]
    assert methods == {
        metric: ("cluster percentile bootstrap", strata, 41, 43) for metric in TRIP_HEADLINES
    }

    # The same panel again (its answers reused): the same intervals and pairs, to the bit.
    _run(panel, store)
    second = _manifests(store)[1]["run_id"]
    assert second != run_id
    assert _rows(store, intervals.format(second)) == found
    assert _rows(store, pairs.format(second)) == landed


def test_a_blind_ablation_gets_intervals_and_pairs_of_its_own(
    tmp_path: Path, server: ModelServer
) -> None:
    """Intervals and paired differences are computed within each variant: the blind rows of
    two models are compared with each other, never with a released row."""
    source, gold = trip_gold(tmp_path)
    server.rules["right"] = gold_rule(gold)
    server.rules["letter-a"] = lambda body, hit: Reply("A")
    models = [
        {"model": f"openai/{name}", "name": name, "api_base": server.api_base}
        for name in ("right", "letter-a")
    ]
    panel = write_panel(
        tmp_path / "panel.yaml",
        source,
        models,
        scoring={"engine": "local"},
        render={"engine": "local"},
        ablations=["blind"],
        intervals={"resamples": 200, "seed": 3},
    )
    store = tmp_path / "store"
    _run(panel, store)
    run_id = _manifests(store)[0]["run_id"]
    pairs = _rows(
        store,
        "select variant, model_a, model_b, metric, n from metric_pairs "
        f"where run_id = '{run_id}' and task = '*' order by variant, metric",
    )
    assert {(v, a, b) for v, a, b, *_ in pairs} == {
        ("", "letter-a", "right"),
        ("blind", "letter-a", "right"),
    }
    n = {(v, metric): int(count) for v, _, _, metric, count in pairs}
    # The blind pair is over the items that show an image, fewer than all.
    assert 0 < n[("blind", "accuracy")] < n[("", "accuracy")]
    # Every blind headline row has its interval (a blind TRIP run has no text items, so no
    # modality penalty: its rows are the other headlines').
    blind = _rows(
        store,
        "select metric, count(*), count(ci_low) from metrics where variant = 'blind' "
        f"and task = '*' and slice = '' and run_id = '{run_id}' and metric in "
        "('accuracy', 'difficulty_penalty', 'modality_penalty') group by metric order by metric",
    )
    assert [metric for metric, *_ in blind][:2] == ["accuracy", "difficulty_penalty"]
    assert all(count == with_interval == "2" for _, count, with_interval in blind)
