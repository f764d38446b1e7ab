"""A run of the TRIP demo lands its diagnostics: the `pareto` table, with the run's metrics (and
so only once they are published), and the penalties per capability among the metrics."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from support.orchestrators import prefect_api
from support.prefect_server import PrefectServer
from support.trip_panel import invoke, query_csv


@pytest.fixture(scope="module")
def store(prefect_server: PrefectServer, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The demo run every test here reads, once, as a Prefect flow."""
    root = tmp_path_factory.mktemp("trip-diagnostics")
    panel = root / "panel.yaml"
    panel.write_text(
        yaml.safe_dump(
            {
                "name": "trip-diagnostics",
                "scoring": {"engine": "local"},
                "suites": [{"name": "trip", "demo": True}],
                "models": [
                    {"name": "random", "model": "roadeval/random", "params": {"seed": 0}},
                    {"name": "always-a", "model": "roadeval/always-a"},
                ],
            }
        )
    )
    location = str(root / "store")
    with prefect_api(prefect_server.api_url):
        result = invoke("run", "--panel", str(panel), "--store", location)
    assert result.exit_code == 0, result.output
    return location


def _rows(store: str, sql: str) -> list[list[str]]:
    return [line.split(",") for line in query_csv(store, sql)[1:]]


def test_pareto_ranks_each_roles_errors_and_ends_at_one(store: str) -> None:
    bars = _rows(
        store,
        "select model, role, rank, errors, share, cumulative_share from pareto "
        "order by model, role, rank",
    )
    charts: dict[tuple[str, str], list[tuple[int, int, float, float]]] = {}
    for model, role, rank, errors, share, cumulative in bars:
        charts.setdefault((model, role), []).append(
            (int(rank), int(errors), float(share), float(cumulative))
        )
    assert {model for model, _ in charts} == {"random", "always-a"}
    for key, chart in charts.items():
        ranks = [bar[0] for bar in chart]
        assert ranks == list(range(1, len(chart) + 1)), key
        counts = [bar[1] for bar in chart]
        assert counts == sorted(counts, reverse=True), key
        cumulative = [bar[3] for bar in chart]
        assert cumulative == sorted(cumulative), key
        assert cumulative[-1] == 1.0, key
        assert sum(bar[2] for bar in chart) == pytest.approx(1.0), key


def test_pareto_counts_every_wrong_answer_by_role_and_knowledge_point(store: str) -> None:
    from_scores = _rows(
        store,
        "select s.model, json_extract_string(i.labels_json, '$.role') as role, "
        "json_extract_string(i.labels_json, '$.knowledge_point') as point, count(*) "
        "from scores s join items i using (suite, item_id, content_hash) "
        "where s.metric = 'correct' and s.value < 1 group by all order by all",
    )
    from_pareto = _rows(
        store,
        "select model, role, knowledge_point, errors from pareto order by model, role, "
        "knowledge_point",
    )
    assert from_pareto == from_scores
    assert len(from_pareto) > 5


def test_penalties_per_capability_are_metrics(store: str) -> None:
    rows = _rows(
        store,
        "select model, slice_value, metric from metrics where suite = 'trip' "
        "and slice = 'capability' and metric like '%penalty' order by all",
    )
    # A capability has a penalty where its items have both sides: text and another modality;
    # easy and hard items.
    sides = _rows(
        store,
        "select json_extract_string(labels_json, '$.capability') as capability, "
        "bool_or(json_extract_string(labels_json, '$.modality') = 'text') "
        "and bool_or(json_extract_string(labels_json, '$.modality') <> 'text'), "
        "bool_or(json_extract_string(labels_json, '$.difficulty') = 'easy') "
        "and bool_or(json_extract_string(labels_json, '$.difficulty') = 'hard') "
        "from items where suite = 'trip' group by all order by all",
    )
    expected = sorted(
        [model, capability, metric]
        for model in ("always-a", "random")
        for capability, modality, difficulty in sides
        for metric, defined in (("modality_penalty", modality), ("difficulty_penalty", difficulty))
        if defined == "True"
    )
    assert rows == expected
    # The demo has text and image items of three capabilities, and easy and hard items of two.
    assert len(expected) >= 2 * (3 + 2)


def test_pareto_is_published_by_the_metrics_landing(store: str) -> None:
    # Without the metrics landing's publication (a crash before it), nobody reads the run's
    # Pareto: here its marker is taken away, and the part index with it (the store is then
    # read by its markers, as one that keeps no index).
    (marker,) = Path(store, "landings").glob("*-metrics")
    saved = marker.read_bytes()
    marker.unlink()
    index, aside = Path(store, "index"), Path(store).with_name("index-aside")
    index.rename(aside)
    try:
        assert query_csv(store, "select count(*) from pareto")[1] == "0"
        result = invoke(
            "query",
            "--store",
            store,
            "--format",
            "csv",
            "--include-unlanded",
            "select count(*) > 0 from pareto",
        )
        assert result.output.splitlines()[1] == "True"
    finally:
        marker.write_bytes(saved)
        aside.rename(index)
    assert query_csv(store, "select count(*) > 0 from pareto")[1] == "True"
