"""`mode: batch` through the real command: a panel's batch model answers the TRIP demo through a
local files + batches server, its answers land like online ones (same keys, batch price), a
rerun sends nothing, a run killed while its batch is pending resumes by polling that batch, and a
batch model with no batch price is refused before any call."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from roadeval.benchmarks.registry import get_suite
from roadeval.tasks.calls.gateway import ModelClient
from roadeval.tasks.requests.model_spec import ModelSpec

from support.batch_server import BatchServer
from support.cli_process import start_cli, wait_until
from support.trip_panel import gold_rule, invoke, query_csv, trip_gold, write_panel

pytestmark = pytest.mark.usefixtures("under_prefect")

IN, OUT = 1e-6, 2e-6


@pytest.fixture
def batch_server() -> Iterator[BatchServer]:
    server = BatchServer().start()
    yield server
    server.stop()


def batch_model(server: BatchServer, **extra: Any) -> dict[str, Any]:
    return {
        "model": "openai/batchy",
        "name": "batchy",
        "api_base": server.api_base,
        "mode": "batch",
        "batch_poll_s": 0.1,
        "input_cost_per_token": 2 * IN,
        "output_cost_per_token": 2 * OUT,
        "batch_input_cost_per_token": IN,
        "batch_output_cost_per_token": OUT,
        **extra,
    }


def online_keys(source: Path, spec: dict[str, Any]) -> set[str]:
    """The request keys the online path would send for the suite's items (render-free: text
    items only have no images; image items are keyed by their images' digests)."""
    suite = get_suite("trip")
    from roadeval.tasks.render.stage import render_items

    items = suite.load(source).items
    online = {k: v for k, v in spec.items() if not k.startswith("batch_") and k != "mode"}
    client = ModelClient(ModelSpec(**online))
    renders = render_items(suite, items).renders
    return {
        client.request(
            suite.prompt(item, renders[item.item_id]),
            item=item,
            settings=suite.generation_for(item),
        ).key
        for item in items
    }


def test_a_batch_model_answers_a_suite_lands_its_answers_and_a_rerun_sends_nothing(
    tmp_path: Path, batch_server: BatchServer
) -> None:
    source, gold = trip_gold(tmp_path)
    answer = gold_rule(gold)

    def served(body: dict[str, Any], hit: int) -> Any:
        # What served each line, as a provider's batch output names it.
        return replace(answer(body, hit), served_model="gpt-x-2026", system_fingerprint="fp_b1")

    batch_server.rules["batchy"] = served
    batch_server.polls_until_done = 1
    model = batch_model(batch_server)
    panel = write_panel(tmp_path / "panel.yaml", source, [model], chunk_size=10)
    store = str(tmp_path / "store")
    result = invoke("run", "--panel", str(panel), "--store", store, "--no-report")
    assert result.exit_code == 0, result.output
    n = len(gold)
    # Every shard's first attempts went in one batch: the shards share the model's batcher.
    assert batch_server.batches_created == 1 and batch_server.files_created == 1
    rows = query_csv(
        store,
        "select request_key, cost_usd, tokens_in, tokens_out, error_kind from responses "
        "where model = 'batchy' order by request_key",
    )[1:]
    assert len(rows) == n
    keys = {row.split(",")[0] for row in rows}
    assert keys == online_keys(source, model)
    for row in rows:
        _, cost, tokens_in, tokens_out, error = row.split(",")
        assert (tokens_in, tokens_out, error) == ("10", "1", "")
        assert float(cost) == pytest.approx(10 * IN + OUT)  # the batch price, not the online one
    identity = query_csv(
        store,
        "select distinct served_model, system_fingerprint from responses where model = 'batchy'",
    )
    assert identity[1:] == ["gpt-x-2026,fp_b1"]
    correct = query_csv(store, "select avg(value) from scores where metric = 'correct'")
    assert float(correct[1]) == 1.0
    total = query_csv(store, "select sum(cost_usd) from costs")
    assert float(total[1]) == pytest.approx(n * (10 * IN + OUT))

    before = batch_server.requests_made
    again = invoke("run", "--panel", str(panel), "--store", store, "--no-report")
    assert again.exit_code == 0, again.output
    assert batch_server.requests_made == before


def test_a_run_killed_while_its_batch_is_pending_resumes_by_polling_that_batch(
    tmp_path: Path, batch_server: BatchServer
) -> None:
    source, gold = trip_gold(tmp_path)
    batch_server.rules["batchy"] = gold_rule(gold)
    panel = write_panel(tmp_path / "panel.yaml", source, [batch_model(batch_server)], chunk_size=10)
    store = tmp_path / "store"
    args = ["run", "--panel", str(panel), "--store", str(store), "--no-report"]
    cli = start_cli(args, tmp_path / "killed", {"ROADEVAL_HEARTBEAT_S": "0.5"})
    try:
        wait_until(lambda: batch_server.polls >= 2, timeout=120, what="a batch being polled")
    finally:
        cli.kill()
    assert batch_server.batches_created == 1 and batch_server.pending()
    batch_server.release()

    resumed = invoke("run", "--panel", str(panel), "--store", str(store), "--no-report")
    assert resumed.exit_code == 0, resumed.output
    # Exactly one batch was ever created: the second run polled the first run's batch.
    assert batch_server.batches_created == 1 and batch_server.files_created == 1
    n = len(gold)
    finished = query_csv(str(store), "select run_id from runs where status = 'finished'")[1:]
    assert len(finished) == 1
    scored = query_csv(
        str(store),
        f"select count(*), avg(value) from scores where metric = 'correct' "
        f"and run_id = '{finished[0]}'",
    )
    assert scored[1] == f"{n},1.0"
    total = query_csv(str(store), "select sum(cost_usd) from costs")
    assert float(total[1]) == pytest.approx(n * (10 * IN + OUT))


def test_a_batch_model_without_a_batch_price_is_refused_before_any_call(
    tmp_path: Path, batch_server: BatchServer
) -> None:
    source, _ = trip_gold(tmp_path)
    model = batch_model(batch_server)
    del model["batch_input_cost_per_token"], model["batch_output_cost_per_token"]
    panel = write_panel(tmp_path / "panel.yaml", source, [model])
    result = invoke("run", "--panel", str(panel), "--store", str(tmp_path / "store"))
    assert result.exit_code == 2, result.output
    message = " ".join(result.output.split())
    assert "model batchy" in message
    assert "batch_input_cost_per_token" in message and "batch_output_cost_per_token" in message
    assert batch_server.requests_made == 0
