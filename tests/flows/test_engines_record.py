"""The manifest's `engines` and the `runs` row's engine columns: which engine drew and scored,
the clusters' addresses as given (never a user or password a URL carries), how much went to
each, and the Prefect API a run under Prefect reported to."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from roadeval.flows.panel.file import (
    PanelError,
    panel_from_dict,
    with_answer_ray_address,
    with_dask_address,
    with_ray_address,
)
from roadeval.flows.run.manifest import engines_used
from roadeval.flows.run.parts import RunContext
from roadeval.flows.run.record import engine_columns
from roadeval.flows.stages.orchestration import OrchestratorKind
from roadeval.storage.store import open_store
from roadeval.tasks.results.engines import (
    AnsweringRecord,
    EngineRecord,
    EnginesRecord,
    NodeRecord,
    bare_address,
)
from roadeval.tasks.results.manifest import RunManifest, Totals
from roadeval.tasks.shard.scoring_choice import HeavyWork, choose_scoring


def _context(tmp_path: Path, kind: OrchestratorKind, **panel: Any) -> RunContext:
    loaded = panel_from_dict(
        {"suites": [{"name": "trip", "demo": True}], "models": [{"model": "roadeval/random"}]}
        | panel,
        source="panel.yaml",
        base_dir=tmp_path,
    )
    orchestrator: Any = SimpleNamespace(kind=kind, flow_run=None)
    store = open_store(str(tmp_path / "store"))
    return RunContext("run-1", datetime.now(UTC), loaded, store, orchestrator, False)


def test_a_run_under_prefect_on_clusters_records_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PREFECT_API_URL", "https://ops:hunter2@prefect.example:4200/api")
    context = _context(tmp_path, OrchestratorKind.PREFECT)
    panel = with_dask_address(context.panel, "tcp://10.0.0.5:8786")
    panel = with_answer_ray_address(panel, "10.0.0.6:6379")
    context = replace(context, panel=with_ray_address(panel, "10.0.0.6:6379"))
    loaded: Any = [SimpleNamespace(drawings={"drawn": 5, "on_cluster": 5})]
    chosen = choose_scoring(context.panel.scoring, HeavyWork(0, 0.0))
    assert engines_used(context, loaded, chosen, 12) == EnginesRecord(
        render=EngineRecord(engine="dask", address="tcp://10.0.0.5:8786", on_cluster=5),
        scoring=EngineRecord(
            engine="ray",
            address="10.0.0.6:6379",
            on_cluster=12,
            reason="a Ray cluster was given (scoring.address, --ray-address)",
        ),
        answering=AnsweringRecord(engine="ray", address="10.0.0.6:6379"),
        prefect_api_url="https://prefect.example:4200/api",
    )


def test_an_inline_run_in_process_records_local_engines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:4200/api")  # not used: inline
    context = _context(
        tmp_path, OrchestratorKind.INLINE, render={"engine": "local"}, scoring={"engine": "local"}
    )
    loaded: Any = [SimpleNamespace(drawings={"drawn": 3, "on_cluster": 0})]
    engines = engines_used(
        context, loaded, choose_scoring(context.panel.scoring, HeavyWork(9, 1e6)), 0
    )
    assert engines == EnginesRecord(
        render=EngineRecord(engine="local"),
        scoring=EngineRecord(engine="local", reason="scoring.engine is local"),
        answering=AnsweringRecord(engine="local"),
    )


def test_the_runs_row_repeats_the_manifests_engines() -> None:
    engines = EnginesRecord(
        render=EngineRecord(engine="dask", address="tcp://s:8786", on_cluster=2),
        scoring=EngineRecord(engine="ray", address="h:6379", on_cluster=4, reason="why"),
        answering=AnsweringRecord(
            engine="ray",
            address="h:6379",
            nodes=[
                NodeRecord(node="10.0.0.6/8c1e5b2a", shards=3, calls=40),
                NodeRecord(node="10.0.0.7/3f2a91c0", shards=0, calls=0),
            ],
        ),
        prefect_api_url="http://p:4200/api",
    )
    manifest = RunManifest(
        run_id="r",
        panel="p",
        started_at=datetime.now(UTC),
        ended_at=None,
        code_version="0",
        store="/s",
        suites=[],
        models=[],
        judge=None,
        generation=[],
        not_covered=[],
        planned_items=0,
        counts=[],
        totals=Totals(),
        orchestrator="prefect",
        engines=engines,
    )
    assert engine_columns(manifest) == {
        "render_engine": "dask",
        "render_address": "tcp://s:8786",
        "scoring_engine": "ray",
        "scoring_address": "h:6379",
        "scoring_reason": "why",
        "answering_engine": "ray",
        "answering_address": "h:6379",
        # Nodes that landed a shard; the requests each sent.
        "answering_nodes": 1,
        "answering_calls_per_node": "10.0.0.6/8c1e5b2a=40, 10.0.0.7/3f2a91c0=0",
        "prefect_api_url": "http://p:4200/api",
    }
    # A manifest from before engines were recorded: the columns stay empty.
    assert engine_columns(manifest.model_copy(update={"engines": None})) == {}


def test_addresses_are_recorded_bare() -> None:
    assert bare_address("tls://sched:8786") == "tls://sched:8786"
    assert bare_address("http://u:p@host:4200/api") == "http://host:4200/api"
    assert bare_address(None) is None


def test_answering_and_scoring_on_two_ray_clusters_is_refused(tmp_path: Path) -> None:
    context = _context(tmp_path, OrchestratorKind.INLINE)
    panel = with_ray_address(context.panel, "10.0.0.6:6379")
    with pytest.raises(PanelError, match=r"--answer-ray-address: answering.address \(10.0.0.7"):
        with_answer_ray_address(panel, "10.0.0.7:6379")
