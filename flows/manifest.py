"""The run manifest: everything needed to audit or reproduce a run, as one JSON document."""

from __future__ import annotations

import json
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

import roadeval
from roadeval.flows.panel_file import Panel
from roadeval.flows.suites import LoadedSuite
from roadeval.storage.store import Store
from roadeval.storage.tables import write_part

_TOTALS = ("calls", "cached", "errors", "abnormal", "unparsed")


def code_version() -> str:
    """The package version, plus the git commit when running from a checkout."""
    version = roadeval.__version__
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(roadeval.__file__).resolve().parent,
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


def build_manifest(
    run_id: str,
    panel: Panel,
    loaded: list[LoadedSuite],
    counts: dict[str, dict[str, Any]],
    not_covered: list[dict[str, Any]],
    started: datetime,
    ended: datetime,
    store_uri: str,
) -> dict[str, Any]:
    """Suites with versions and hashes, models with decoding parameters, counts and times."""
    totals: dict[str, Any] = {k: sum(c[k] for c in counts.values()) for k in _TOTALS}
    totals["cost_usd"] = sum(c["cost_usd"] for c in counts.values())
    return {
        "run_id": run_id,
        "status": "completed" if totals["errors"] == 0 else "completed_with_errors",
        "panel": panel.name,
        "started_at": started.isoformat(),
        "ended_at": ended.isoformat(),
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
            }
            for s in loaded
        ],
        "models": [redact_model(spec.model_dump(mode="json")) for spec in panel.models],
        "not_covered": not_covered,
        "counts": list(counts.values()),
        "totals": totals,
    }


def land_manifest(store: Store, manifest: dict[str, Any]) -> str:
    """Publish the manifest as JSON and as the run's row in the `runs` table; returns its key."""
    run_id, totals = manifest["run_id"], manifest["totals"]
    key = f"runs/{run_id}/manifest.json"
    store.put(key, json.dumps(manifest, indent=2, ensure_ascii=False).encode())
    row = {
        "run_id": run_id,
        "status": manifest["status"],
        "started_at": datetime.fromisoformat(manifest["started_at"]),
        "ended_at": datetime.fromisoformat(manifest["ended_at"]),
        "panel": manifest["panel"],
        "code_version": manifest["code_version"],
        **{f"n_{k}": totals[k] for k in _TOTALS},
        "cost_usd": totals["cost_usd"],
        "manifest_json": json.dumps(manifest, ensure_ascii=False),
    }
    write_part(store, "runs", run_id, [row])
    return key
