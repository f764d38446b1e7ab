"""Which run's start a run measures `reuse_for` from (its horizon).

To resume a run that did not finish, a user runs the same command again ([resuming]
(docs/runs.md)): the new run continues it. A run whose panel's latest run (dry runs aside)
stopped (its budget, Ctrl-C, a stop), failed or died takes that run's horizon, so the answers
the chain already bought stay fresh for it and a resume under `reuse_for: never` or a short
duration pays for none of them twice; a run after a finished run, or beside a running one
(their claims keep both from paying twice), measures from its own start.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from roadeval.flows.rerun.baseline import latest_events
from roadeval.storage.heartbeats import run_liveness
from roadeval.storage.records import RunStatus
from roadeval.storage.store import Store
from roadeval.tasks.results.manifest import HorizonRecord, RunManifest

# What an earlier run ended as, for this run to continue it (`died`: a `running` run whose
# heartbeat stopped).
UNFINISHED = frozenset({RunStatus.INTERRUPTED, RunStatus.OUT_OF_BUDGET, RunStatus.FAILED, "died"})


def _ended_as(store: Store, event: dict[str, Any]) -> str:
    """What a run's latest event says it is, a silent `running` run read as `died` by the
    liveness rule `runs` reads."""
    if event["status"] != RunStatus.RUNNING:
        return str(event["status"])
    _, living = run_liveness(store, event["run_id"], event["started_at"], event["heartbeat_s"])
    return RunStatus.RUNNING if living else "died"


def horizon_of(store: Store, panel: str, run_id: str, started: datetime) -> HorizonRecord:
    """The horizon of run `run_id` of `panel`, begun at `started`: that of the panel's latest
    earlier run when it did not finish (the first run of the chain it began), else its own."""
    own = HorizonRecord(run_id=run_id, started_at=started)
    earlier = [
        event
        for event in latest_events(store).values()
        if event["panel"] == panel
        and event["run_id"] != run_id
        and event["status"] != RunStatus.PLANNED
    ]
    if not earlier:
        return own
    last = max(earlier, key=lambda event: (event["started_at"], event["run_id"]))
    status = _ended_as(store, last)
    if status not in UNFINISHED:
        return own
    continued = RunManifest.from_json(last["manifest_json"])
    first = continued.horizon or HorizonRecord(
        run_id=continued.run_id, started_at=continued.started_at
    )
    return HorizonRecord(
        run_id=first.run_id,
        started_at=first.started_at,
        continues=continued.run_id,
        continued_status=status,
    )
