"""The run manifest: everything needed to audit or reproduce a run, as one JSON document."""

from __future__ import annotations

import subprocess
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from roadeval.benchmarks.generation import departures, effective_params
from roadeval.flows.panel_file import Panel
from roadeval.flows.suites import LoadedSuite
from roadeval.tasks.shard.counts import COUNTS, new_counts
from roadeval.tasks.shard.plan import Shard
from roadeval.tasks.shard.stages import ShardResult
from roadeval.version import __version__


def code_version() -> str:
    """The package version, plus the git commit when running from a checkout."""
    version = __version__
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return f"{version}+{commit}" if commit else version


def redact_model(spec_dump: dict[str, Any]) -> dict[str, Any]:
    """Specs carry only the name of a key's variable, never a key; keep it that way in artifacts."""
    return {k: v for k, v in spec_dump.items() if "key" not in k or k == "api_key_env"}


def count_table(results: Sequence[ShardResult]) -> list[dict[str, Any]]:
    """Counts, cost and errors per suite x model, in plan order."""
    table: dict[tuple[str, str], dict[str, Any]] = {}
    for r in results:
        entry = table.setdefault(
            (r.suite, r.model),
            {
                "suite": r.suite,
                "model": r.model,
                **new_counts(),
                "error_kinds": {},
                "cost_usd": 0.0,
                "cost_known": True,
                "first_error": None,
                "corrupt_cache_entries": [],
                "unscored_metrics": {},
            },
        )
        for name in COUNTS:
            entry[name] += r.counts[name]
        entry["cost_usd"] += r.cost_usd
        entry["cost_known"] = entry["cost_known"] and r.cost_known
        for kind, n in r.errors.items():
            entry["error_kinds"][kind] = entry["error_kinds"].get(kind, 0) + n
        entry["first_error"] = entry["first_error"] or r.first_error
        entry["corrupt_cache_entries"].extend(str(c) for c in r.corrupt_cache)
        for metric, n in r.unscored.items():
            unscored = entry["unscored_metrics"].setdefault(
                metric, {"items": 0, "first_reason": r.first_unscored[metric]}
            )
            unscored["items"] += n
    return list(table.values())


def totals(counts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    summed: Counter[str] = new_counts()
    for entry in counts:
        for name in COUNTS:
            summed[name] += entry[name]
    return {**summed, "cost_usd": sum(c["cost_usd"] for c in counts)}


def generation_in_force(shards: Sequence[Shard]) -> list[dict[str, Any]]:
    """Per suite x model: what the protocol states, what the panel set, what was sent, and
    where the two part (see `benchmarks.generation` for the rule)."""
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for shard in shards:
        suite, spec = shard.suite, shard.client.spec
        if (suite.name, spec.label) in seen:
            continue
        protocol = suite.generation
        seen[(suite.name, spec.label)] = {
            "suite": suite.name,
            "model": spec.label,
            "protocol": protocol.params(),
            "panel": spec.params,
            "sent": effective_params(protocol, spec.params),
            "departures": departures(protocol, spec.params),
        }
    return list(seen.values())


def build_manifest(
    run_id: str,
    panel: Panel,
    loaded: list[LoadedSuite],
    shards: Sequence[Shard],
    counts: list[dict[str, Any]],
    not_covered: list[dict[str, Any]],
    started: datetime,
    ended: datetime | None,
    store_uri: str,
) -> dict[str, Any]:
    """Suites with versions and hashes, models with decoding parameters, counts and times; the
    status is set by the run record when it lands the manifest."""
    return {
        "run_id": run_id,
        "panel": panel.name,
        "started_at": started.isoformat(),
        "ended_at": ended.isoformat() if ended else None,
        "code_version": code_version(),
        "store": store_uri,
        "suites": [
            {
                "name": s.suite.name,
                "source": str(s.source),
                "demo": s.entry.demo,
                "version": s.items[0].suite_version,
                "hash": s.hash,
                "items": len(s.items),
                "tasks": sorted({i.task for i in s.items}),
                "prompt_version": s.suite.prompt_version,
                "max_attempts": s.suite.max_attempts,
                "options": s.suite.options(),
                "skipped_items": [str(p) for p in s.skipped],
                "drawings": s.drawings,
                "unknown_fields": s.unknown_fields,
                "unknown_fields_message": s.unknown_fields_message,
            }
            for s in loaded
        ],
        "models": [redact_model(spec.model_dump(mode="json")) for spec in panel.models],
        "judge": redact_model(panel.judge.model_dump(mode="json")) if panel.judge else None,
        "generation": generation_in_force(shards),
        "not_covered": not_covered,
        # Item x model pairs the run set out to answer (its counts cover those it reached).
        "planned_items": sum(len(shard.items) for shard in shards),
        "count_meanings": COUNTS,
        "counts": counts,
        "totals": totals(counts),
    }
