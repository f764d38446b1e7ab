"""The `evaluate_panel` flow: every suite x every model of a panel, sharded, landed, summarised."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import PrefectFuture, as_completed
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from roadeval.benchmarks.registry import find_baseline
from roadeval.flows.manifest import build_manifest, land_manifest
from roadeval.flows.panel_file import Panel
from roadeval.flows.suites import LoadedSuite, load_entry
from roadeval.storage.store import Store, open_store
from roadeval.storage.tables import write_part
from roadeval.tasks.aggregate import aggregate
from roadeval.tasks.gateway import ModelClient
from roadeval.tasks.items_table import land_items
from roadeval.tasks.shard import Shard, ShardResult, run_shard


@dataclass
class RunSummary:
    """What a finished run hands back to the CLI: where it landed and what it measured."""

    run_id: str
    store_uri: str
    manifest_key: str
    metrics: list[dict[str, Any]]
    manifest: dict[str, Any]
    results: list[ShardResult] = field(default_factory=list)

    @property
    def n_errors(self) -> int:
        return sum(r.n_errors for r in self.results)


@task(name="load-suite", cache_policy=NO_CACHE)
def load_suite_task(panel: Panel, index: int) -> LoadedSuite:
    return load_entry(panel, panel.suites[index])


@task(
    name="answer-shard",
    cache_policy=NO_CACHE,
    task_run_name="{shard.suite.name}/{shard.client.spec.label}/{shard.index}",
)
def shard_task(shard: Shard, store: Store) -> ShardResult:
    return run_shard(shard, store)


def plan_shards(
    run_id: str, panel: Panel, loaded: list[LoadedSuite], clients: dict[str, ModelClient]
) -> tuple[list[Shard], list[dict[str, Any]]]:
    """Split suite x model into chunks; a baseline gets only the tasks it has an answer for."""
    shards: list[Shard] = []
    skipped: list[dict[str, Any]] = []
    for suite in loaded:
        for spec in panel.models:
            if spec.suites is not None and suite.suite.name not in spec.suites:
                continue
            items = suite.items
            if spec.is_baseline:
                items = [
                    item
                    for item in items
                    if find_baseline(spec.baseline_name, suite.suite.name, item.task) is not None
                ]
                if len(items) < len(suite.items):
                    skipped.append(
                        {
                            "suite": suite.suite.name,
                            "model": spec.label,
                            "items_not_covered": len(suite.items) - len(items),
                            "why": "the baseline has no rule for those tasks",
                        }
                    )
            for start in range(0, len(items), panel.chunk_size):
                shards.append(
                    Shard(
                        run_id=run_id,
                        index=len(shards),
                        suite=suite.suite,
                        client=clients[spec.label],
                        items=items[start : start + panel.chunk_size],
                    )
                )
    return shards, skipped


def _collect(futures: list[PrefectFuture[ShardResult]], total_items: int) -> list[ShardResult]:
    """Wait for every shard, showing on stderr how many items are answered so far."""
    progress = Progress(
        TextColumn("answering"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    with progress:
        bar = progress.add_task("items", total=total_items)
        for future in as_completed(futures):
            progress.advance(bar, future.result().n_items)
    # Results in plan order, so reports and manifests do not depend on timing.
    return [future.result() for future in futures]


def _counts(results: list[ShardResult]) -> dict[str, dict[str, Any]]:
    table: dict[str, dict[str, Any]] = {}
    for r in results:
        entry = table.setdefault(
            f"{r.suite}|{r.model}",
            {
                "suite": r.suite,
                "model": r.model,
                "items": 0,
                "calls": 0,
                "cached": 0,
                "errors": 0,
                "error_kinds": {},
                "abnormal": 0,
                "unparsed": 0,
                "reasks": 0,
                "cost_usd": 0.0,
                "cost_known": True,
                "first_error": None,
            },
        )
        for name in ("items", "calls", "cached", "errors", "abnormal", "unparsed", "reasks"):
            entry[name] += getattr(r, f"n_{name}")
        entry["cost_usd"] += r.cost_usd
        entry["cost_known"] = entry["cost_known"] and r.cost_known
        for kind, n in r.errors.items():
            entry["error_kinds"][kind] = entry["error_kinds"].get(kind, 0) + n
        entry["first_error"] = entry["first_error"] or r.first_error
    return table


@flow(name="evaluate-panel", log_prints=False)
def evaluate_panel(panel: Panel, store_uri: str | None = None) -> RunSummary:
    """Load suites, answer every item with every model (cached by request key), score, land."""
    started = datetime.now(UTC)
    run_id = started.strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:8]
    store = open_store(store_uri or panel.store)

    loaded = [load_suite_task(panel, i) for i in range(len(panel.suites))]
    for suite in loaded:
        land_items(store, suite.suite.name, suite.items, suite.hash)

    clients = {spec.label: ModelClient(spec) for spec in panel.models}
    shards, not_covered = plan_shards(run_id, panel, loaded, clients)
    futures = [shard_task.submit(shard, store) for shard in shards]
    results = _collect(futures, total_items=sum(len(shard.items) for shard in shards))

    metrics: list[dict[str, Any]] = []
    by_pair: dict[tuple[str, str], list] = {}
    for result in results:
        by_pair.setdefault((result.suite, result.model), []).extend(result.scored)
    suites = {s.suite.name: s.suite for s in loaded}
    for (suite_name, model), scored in sorted(by_pair.items()):
        metrics.extend(aggregate(suites[suite_name], model, run_id, scored))
    write_part(store, "metrics", run_id, metrics)

    manifest = build_manifest(
        run_id, panel, loaded, _counts(results), not_covered, started, datetime.now(UTC), store.uri
    )
    manifest_key = land_manifest(store, manifest)
    return RunSummary(run_id, store.uri, manifest_key, metrics, manifest, results)
