"""A suite's scoring key: a digest of what decides its scores besides its answers. A rerun copies
a suite's baseline scores only where its key is the baseline's (`flows.rerun.comparison`); the
manifest records it per suite."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from roadeval.benchmarks.suite import Suite


def scoring_key(suite: Suite, judge: dict[str, Any] | None) -> str:
    """A digest of what decides a suite's scores besides its answers: its scorer version, its
    options, and for a judged suite the judge's model, endpoint and settings."""
    body: dict[str, Any] = {"version": suite.scorer_version, "options": suite.options()}
    if suite.uses_judge and judge is not None:
        body["judge"] = {k: judge.get(k) for k in ("model", "api_base", "params")}
    text = json.dumps(body, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
