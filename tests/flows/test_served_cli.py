"""What answered, through the CLI against the test model server: each response row keeps the
`model` the reply named (a vLLM or SGLang server's served model) and its `system_fingerprint`,
exactly as sent; the manifest sums them per model (bought and reused apart), so a provider that
changes what serves a model name shows in the next run that asks it; and a store whose parts
predate the columns still reads."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from roadeval.storage.part_cache import forget_parts
from roadeval.storage.records import SCHEMAS

from support.model_server import ModelServer, Reply
from support.trip_panel import gold_rule, invoke, query_csv, trip_gold, write_panel

pytestmark = pytest.mark.usefixtures("inline")

ENGINES = {"scoring": {"engine": "local"}, "render": {"engine": "local"}}


def _run(panel: Path, store: Path) -> dict[str, Any]:
    result = invoke("run", "--panel", str(panel), "--store", str(store))
    assert result.exit_code == 0, result.output
    found = [json.loads(p.read_text()) for p in (store / "runs").glob("*/manifest.json")]
    return max(found, key=lambda m: m["started_at"])


def _served(manifest: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (
            e["model"],
            e["role"],
            e["served_model"],
            e["system_fingerprint"],
            e["answers"],
            e["reused"],
        )
        for e in manifest["served"]
    ]


def test_each_answer_records_what_its_provider_said_served_it(
    tmp_path: Path, server: ModelServer
) -> None:
    source, gold = trip_gold(tmp_path)
    answer = gold_rule(gold)

    def served(fingerprint: str) -> Any:
        # The fingerprint names the letter answered, so each row can be checked against it.
        def rule(body: dict[str, Any], hit: int) -> Reply:
            reply = answer(body, hit)
            return replace(
                reply,
                served_model="Qwen/Qwen2.5-VL-7B-Instruct-AWQ",
                system_fingerprint=f"{fingerprint}-{reply.text}",
            )

        return rule

    server.rules["vllm"] = served("fp_3f2a")
    models = [
        {"model": "openai/vllm", "name": "v", "api_base": server.api_base},
        {"model": "roadeval/always-a", "name": "always-a"},
    ]
    store = tmp_path / "store"
    panel = write_panel(tmp_path / "p.yaml", source, models, name="served", **ENGINES)
    first = _run(panel, store)
    run_id, items = first["run_id"], first["suites"][0]["items"]
    rows = query_csv(
        str(store),
        "select raw_text, served_model, system_fingerprint from responses "
        f"where run_id = '{run_id}' and model = 'v'",
    )[1:]
    assert len(rows) == items
    # Every row keeps exactly what the server sent for its request.
    for row in rows:
        text, model, fingerprint = row.split(",")
        assert (model, fingerprint) == ("Qwen/Qwen2.5-VL-7B-Instruct-AWQ", f"fp_3f2a-{text}")
    letters = {letter: sum(r.split(",")[0] == letter for r in rows) for letter in "ABCD"}
    vllm = [
        ("v", "answer", "Qwen/Qwen2.5-VL-7B-Instruct-AWQ", f"fp_3f2a-{letter}", n, 0)
        for letter, n in sorted(letters.items())
        if n
    ]
    # The baseline names itself, and sends no fingerprint.
    assert _served(first) == [("always-a", "answer", "roadeval/always-a", None, items, 0), *vllm]

    # A rerun reuses every answer, and says what served them when they were bought.
    second = _run(panel, store)
    assert len(server.hits_for("vllm")) == items
    assert _served(second) == [
        (model, role, name, fingerprint, 0, n)
        for model, role, name, fingerprint, n, _ in _served(first)
    ]
    copied = query_csv(
        str(store),
        "select count(*) from responses "
        f"where run_id = '{second['run_id']}' and model = 'v' and cached "
        "and system_fingerprint like 'fp_3f2a-%'",
    )
    assert copied[1:] == [str(items)]

    # The provider moves the model to another build: the next run that asks it says so.
    server.rules["vllm"] = served("fp_9c1d")
    fresh = write_panel(
        tmp_path / "fresh.yaml", source, models, name="served", reuse_for="never", **ENGINES
    )
    third = _run(fresh, store)
    assert {e["system_fingerprint"][:7] for e in third["served"] if e["model"] == "v"} == {
        "fp_9c1d"
    }
    assert sum(e["answers"] for e in third["served"] if e["model"] == "v") == items

    # Where a person compares runs, the change is shown for v alone; the baseline is the same.
    for args in (["diff", second["run_id"], third["run_id"]], ["changes", third["run_id"]]):
        compared = invoke(*args, "--store", str(store))
        assert compared.exit_code == 0, compared.output
        assert "what served the answers: changed for 1 of 2" in compared.output, compared.output
        rows = {line.split("│")[1].strip(): line for line in _table_lines(compared.output)}
        assert "changed" in rows["v"] and "fp_3f2a-" in rows["v"] and "fp_9c1d-" in rows["v"]
        assert rows["always-a"].rstrip("│ ").endswith("same")
    steady = invoke("diff", first["run_id"], second["run_id"], "--store", str(store))
    assert "what served the answers: changed for 0 of 2" in steady.output, steady.output


def _table_lines(output: str) -> list[str]:
    """The rows of the printed table of what served the answers."""
    section = output.split("what served the answers", 1)[1]
    return [line for line in section.splitlines() if line.startswith("│ ") and "│ answer" in line]


def test_a_store_whose_responses_predate_the_columns_still_queries(
    tmp_path: Path, server: ModelServer
) -> None:
    source, gold = trip_gold(tmp_path)
    server.rules["old"] = gold_rule(gold)
    models = [{"model": "openai/old", "name": "old", "api_base": server.api_base}]
    store = tmp_path / "store"
    panel = write_panel(tmp_path / "p.yaml", source, models, name="old", **ENGINES)
    items = _run(panel, store)["suites"][0]["items"]
    # The parts as code before these columns wrote them.
    new = ("answered_at", "replaced_stale", "served_model", "system_fingerprint")
    parts = list((store / "tables" / "responses").rglob("*.parquet"))
    assert parts
    for part in parts:
        table = pq.read_table(part)
        pq.write_table(table.drop_columns(list(new)), part)
    forget_parts()
    lines = query_csv(
        str(store),
        "select count(*), count(served_model), count(answered_at), "
        "count(*) filter (where replaced_stale is null) from responses",
    )
    assert lines[1:] == [f"{items},0,0,{items}"]
    assert set(new) <= set(SCHEMAS["responses"].names)
    # A rerun against it reads its answers (of no known age: reused forever) and asks nothing.
    again = _run(panel, store)
    assert len(server.hits_for("old")) == items
    assert again["counts"][0]["cached"] == items
