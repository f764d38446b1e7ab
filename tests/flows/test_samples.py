"""`samples: N` on a model: N independent answers per item, each its own request (the sample
joins the request key), scored apart and said so in every row."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support.model_server import ModelServer, Reply
from support.trip_panel import invoke, query_csv, trip_gold, write_panel

pytestmark = pytest.mark.usefixtures("inline")

ENGINES = {"scoring": {"engine": "local"}, "render": {"engine": "local"}}


def test_each_sample_is_asked_once_scored_apart_and_reused_by_a_rerun(
    tmp_path: Path, server: ModelServer
) -> None:
    source, gold = trip_gold(tmp_path)
    letters = iter("ABCD" * 1000)
    server.rules["sampled"] = lambda body, hit: Reply(next(letters))
    models = [{"model": "openai/sampled", "api_base": server.api_base, "samples": 3}]
    panel = write_panel(tmp_path / "p.yaml", source, models, **ENGINES)
    store = tmp_path / "store"
    result = invoke("run", "--panel", str(panel), "--store", str(store))
    assert result.exit_code == 0, result.output
    n = len(gold)
    assert len(server.hits_for("sampled")) == 3 * n
    per_sample = query_csv(
        str(store),
        "select sample, count(distinct item_id), count(distinct request_key) from scores "
        "where metric = 'correct' group by sample order by sample",
    )
    assert per_sample[1:] == [f"{k},{n},{n}" for k in (1, 2, 3)]
    keys = query_csv(str(store), "select count(distinct request_key) from responses")
    assert keys[1:] == [str(3 * n)]
    metrics = query_csv(
        str(store), "select n from metrics where task = '*' and slice = '' and metric = 'accuracy'"
    )
    assert metrics[1:] == [str(3 * n)]
    # A rerun asks nothing: every sample's answer and scores are the baseline's.
    server.reset()
    result = invoke("run", "--panel", str(panel), "--store", str(store))
    assert result.exit_code == 0, result.output
    assert server.hits_for("sampled") == []
    manifests = [json.loads(p.read_text()) for p in (store / "runs").glob("*/manifest.json")]
    last = max(manifests, key=lambda m: m["started_at"])
    assert last["totals"]["scores_reused"] == 3 * n


def test_a_baseline_draws_each_sample_apart(tmp_path: Path) -> None:
    source, gold = trip_gold(tmp_path)
    models: list[dict[str, Any]] = [
        {"name": "random", "model": "roadeval/random", "params": {"seed": 0}, "samples": 2}
    ]
    panel = write_panel(tmp_path / "p.yaml", source, models, **ENGINES)
    store = tmp_path / "store"
    assert invoke("run", "--panel", str(panel), "--store", str(store)).exit_code == 0
    answers = query_csv(
        str(store),
        "select item_id, sample, raw_text from responses where role = 'answer' order by all",
    )[1:]
    by_item: dict[str, set[str]] = {}
    for line in answers:
        item_id, _, text = line.split(",", 2)
        by_item.setdefault(item_id, set()).add(text)
    # Independent draws: over 43 items, some two samples of an item must differ.
    assert len(by_item) == len(gold) and any(len(texts) > 1 for texts in by_item.values())
