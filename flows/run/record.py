"""A run's life in the store, recorded from its first moment.

A `running` event lands when the run starts, a heartbeat object is rewritten while it goes, and a
last event (finished, failed, interrupted, out_of_budget, or planned for a dry run, with its
counts) lands when it ends. A run killed before its last event keeps `running` with a heartbeat
that stops; readers call it `died`.
"""

from __future__ import annotations

import os
import socket
import threading
from typing import TypedDict

from roadeval.storage.heartbeats import Heartbeat, heartbeat_key, interval_s
from roadeval.storage.landing import Part, land
from roadeval.storage.records import RUN_COUNT_COLUMNS, RunEventRow, RunStatus
from roadeval.storage.store import Store
from roadeval.storage.tables import manifest_key
from roadeval.tasks.calls.secrets import Redactor
from roadeval.tasks.results.engines import AnsweringRecord
from roadeval.tasks.results.manifest import RunManifest


def event_row(landed: RunManifest, seq: int, heartbeat_s: float) -> RunEventRow:
    """The `run_events` row of a manifest as landed (its status and message set), the run's
    `seq`-th event, written by this process."""
    if landed.status is None:
        raise ValueError(f"run {landed.run_id}: an event is of a manifest with its status")
    totals = landed.totals
    counts = {f"n_{name}": getattr(totals, name) for name in RUN_COUNT_COLUMNS}
    # Planned from the start, so a running (or died) run says how big it is.
    counts["n_items"] = landed.planned_items
    return RunEventRow(
        run_id=landed.run_id,
        seq=seq,
        status=landed.status,
        started_at=landed.started_at,
        ended_at=landed.ended_at,
        panel=landed.panel,
        code_version=landed.code_version,
        host=socket.gethostname(),
        pid=os.getpid(),
        heartbeat_s=heartbeat_s,
        **counts,
        cost_usd=totals.cost_usd,
        message=landed.message,
        manifest_json=landed.model_dump_json(),
        orchestrator=landed.orchestrator,
        flow_run_id=landed.flow_run_id,
        deployment=landed.deployment,
        baseline_run_id=landed.baseline.run_id if landed.baseline else None,
        **engine_columns(landed),
    )


class RunRecord:
    """Writes one run's events, manifest and heartbeat."""

    def __init__(self, store: Store, run_id: str, redact: Redactor) -> None:
        self.store = store
        self.run_id = run_id
        # Manifests carry error messages from providers: redacted once more, as a whole.
        self.redact = redact
        self.interval_s = interval_s()
        self._seq = 0
        self._stopped = threading.Event()
        self._beating: threading.Thread | None = None

    def start(self, manifest: RunManifest) -> None:
        """Land the `running` event and start the heartbeat."""
        self._beat()
        self._event(RunStatus.RUNNING, manifest)
        self._beating = threading.Thread(
            target=self._beat_until_stopped, name=f"heartbeat-{self.run_id}", daemon=True
        )
        self._beating.start()

    def end(self, status: str, manifest: RunManifest, message: str | None = None) -> str:
        """Land the last event; returns the manifest's key."""
        self._stopped.set()
        if self._beating is not None:
            self._beating.join(timeout=5)
        return self._event(status, manifest, message)

    def _event(self, status: str, manifest: RunManifest, message: str | None = None) -> str:
        message = self.redact(message)
        # Manifests carry providers' error messages: the whole text is redacted once more.
        text = self.redact.text(
            manifest.model_copy(update={"status": status, "message": message}).to_json()
        )
        landed = RunManifest.from_json(text)
        key = manifest_key(self.run_id)
        self.store.put(key, text.encode())
        row = event_row(landed, self._seq, self.interval_s)
        land(self.store, f"{self.run_id}-event-{self._seq:03d}", [Part("run_events", [row])])
        self._seq += 1
        return key

    def _beat(self) -> None:
        beat = Heartbeat.now(self.run_id, self.interval_s)
        self.store.put(heartbeat_key(self.run_id), beat.to_json())

    def _beat_until_stopped(self) -> None:
        while not self._stopped.wait(self.interval_s):
            try:
                self._beat()
            except Exception:
                # A store that fails here fails the run's own writes too, which report it.
                continue


class EngineColumns(TypedDict, total=False):
    """The `runs` row's engine columns (`RunEventRow`)."""

    render_engine: str | None
    render_address: str | None
    scoring_engine: str | None
    scoring_address: str | None
    scoring_reason: str | None
    answering_engine: str | None
    answering_address: str | None
    answering_nodes: int | None
    answering_calls_per_node: str | None
    prefect_api_url: str | None


def engine_columns(manifest: RunManifest) -> EngineColumns:
    """The `runs` row's engine columns, from the manifest's `engines` (none before them)."""
    engines = manifest.engines
    if engines is None:
        return {}
    return EngineColumns(
        render_engine=engines.render.engine,
        render_address=engines.render.address,
        scoring_engine=engines.scoring.engine,
        scoring_address=engines.scoring.address,
        scoring_reason=engines.scoring.reason,
        **_answering_columns(engines.answering),
        prefect_api_url=engines.prefect_api_url,
    )


def _answering_columns(answering: AnsweringRecord | None) -> EngineColumns:
    if answering is None:
        return {}
    return EngineColumns(
        answering_engine=answering.engine,
        answering_address=answering.address,
        answering_nodes=answering.nodes_used,
        answering_calls_per_node=answering.calls_text(),
    )
