"""`samples: N` on a model: N independent answers per item, each its own request (the sample
joins the request key), scored apart and said so in every row."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from roadeval.tasks.requests import freshness

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


def test_a_dry_run_counts_each_samples_requests_as_the_run_then_sends_them(
    tmp_path: Path, server: ModelServer
) -> None:
    """A dry run plans every sample of an item at once, as counts: after a run of 2 samples, a
    dry run of 3 counts each item's third sample to ask and its first two answered, lands a
    plan row per run of samples (`samples`), and the run that follows sends exactly what it
    counted."""
    source, gold = trip_gold(tmp_path)
    n = len(gold)

    def panel(samples: int) -> str:
        model = {
            "model": "openai/sampled",
            "api_base": server.api_base,
            "params": {"max_tokens": 4},
            "samples": samples,
            "input_cost_per_token": 1e-6,
            "output_cost_per_token": 2e-6,
        }
        return str(write_panel(tmp_path / f"p{samples}.yaml", source, [model], **ENGINES))

    store = str(tmp_path / "store")
    server.rules["sampled"] = lambda body, hit: Reply("A")
    assert invoke("run", "--panel", panel(2), "--store", store).exit_code == 0
    assert len(server.hits_for("sampled")) == 2 * n
    server.reset()
    server.rules["sampled"] = lambda body, hit: Reply("A")
    result = invoke("campaign", "--panel", panel(3), "--dry-run", "--store", store)
    assert result.exit_code == 0, result.output
    assert server.hits == []
    output = " ".join(result.output.split())
    assert f"total │ │ │ {n} / {n} │ {2 * n} │" in output, output
    dry = "(select run_id from runs where status = 'planned')"
    plan = query_csv(
        store,
        "select answered, count(*), sum(samples), min(sample), max(sample) from plan "
        f"where run_id = {dry} group by answered order by answered",
    )
    # One row per item for its two answered samples, one for the third, still to ask.
    assert plan[1:] == [f"False,{n},{n},3,3", f"True,{n},{2 * n},1,1"]
    assert query_csv(store, f"select n_items from runs where run_id = {dry}")[1:] == [str(3 * n)]

    result = invoke("run", "--panel", panel(3), "--store", store)
    assert result.exit_code == 0, result.output
    assert len(server.hits_for("sampled")) == n


def test_a_dry_run_asks_again_the_samples_whose_answers_are_stale_as_the_run_then_does(
    tmp_path: Path, server: ModelServer
) -> None:
    """Each sample is fresh or stale by its own answer: sample 1 bought three days ago, sample 2
    now, sample 3 never. Under `reuse_for: 1d` a dry run of 3 samples counts samples 1 and 3 to
    ask (1 of them stale) and 2 answered, a plan row per run of samples answered and stale
    alike, and the run that follows sends exactly that."""
    source, gold = trip_gold(tmp_path)
    n = len(gold)

    def panel(samples: int, **reuse: str) -> str:
        model = {"model": "openai/sampled", "api_base": server.api_base, "samples": samples}
        path = tmp_path / f"p{samples}{''.join(reuse)}.yaml"
        return str(write_panel(path, source, [model], **ENGINES, **reuse))

    store = str(tmp_path / "store")
    server.rules["sampled"] = lambda body, hit: Reply("A")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(freshness, "now", lambda: datetime.now(UTC) - timedelta(days=3))
        assert invoke("run", "--panel", panel(1), "--store", store).exit_code == 0
    assert invoke("run", "--panel", panel(2), "--store", store).exit_code == 0
    assert len(server.hits_for("sampled")) == 2 * n
    server.reset()
    server.rules["sampled"] = lambda body, hit: Reply("A")

    one_day = panel(3, reuse_for="1d")
    result = invoke("campaign", "--panel", one_day, "--dry-run", "--store", store)
    assert result.exit_code == 0, result.output
    assert server.hits == []
    dry = "(select run_id from runs where status = 'planned')"
    estimate = query_csv(
        store, f"select requests, answered, stale from estimates where run_id = {dry}"
    )
    assert estimate[1:] == [f"{2 * n},{n},{n}"]
    plan = query_csv(
        store,
        "select sample, answered, stale, count(*), sum(samples) from plan "
        f"where run_id = {dry} group by all order by sample",
    )
    assert plan[1:] == [f"1,False,True,{n},{n}", f"2,True,False,{n},{n}", f"3,False,False,{n},{n}"]

    result = invoke("run", "--panel", one_day, "--store", store)
    assert result.exit_code == 0, result.output
    assert len(server.hits_for("sampled")) == 2 * n
    manifests = [json.loads(p.read_text()) for p in (Path(store) / "runs").glob("*/manifest.json")]
    last = max(manifests, key=lambda m: m["started_at"])
    assert [(c["calls"], c["stale"]) for c in last["counts"]] == [(2 * n, n)]
