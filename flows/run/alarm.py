"""What a run's alarm says: the same JSON for a panel's webhook and as a Prefect event's payload,
and that event's resources (the run; the panel, the models and the metrics as related ones).

Made from the run's manifest as landed (redacted once already: a provider's echo of a key
never reaches an alarm), plus, for drift, the history's flags of this run against the panel's
finished run before it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from roadeval.flows.panel.alerts import AlarmKind
from roadeval.flows.stages.orchestration import Announcement
from roadeval.storage.records import RunStatus
from roadeval.tasks.calls.budget import OUT_OF_BUDGET
from roadeval.tasks.results.history import Step, labelled_models
from roadeval.tasks.results.manifest import RunManifest

EVENT_PREFIX = "roadeval.run."
# The status a run that stopped records, and the alarm it raises (an interrupted run was
# stopped on purpose: Ctrl-C, a cancel; no alarm).
STOP_ALARMS = {RunStatus.FAILED: AlarmKind.FAILED, OUT_OF_BUDGET: AlarmKind.BUDGET_STOPPED}
DIED = "died"


class DriftFlag(BaseModel):
    """One headline that moved beyond noise while the model string and items did not."""

    model_config = ConfigDict(frozen=True)

    suite: str
    task: str
    model: str
    metric: str
    baseline_run_id: str
    before: float
    after: float
    difference: float
    ci_low: float
    ci_high: float
    items: int
    p_value: float | None
    p_holm: float | None
    regressed: int
    improved: int
    served_before: str
    served_after: str

    @classmethod
    def of(cls, step: Step) -> DriftFlag:
        row = step.row
        return cls(
            suite=row.suite,
            task=row.task,
            model=row.model,
            metric=row.metric,
            baseline_run_id=row.baseline_run_id,
            before=row.baseline_value,
            after=row.new_value,
            difference=row.difference,
            ci_low=row.ci_low,
            ci_high=row.ci_high,
            items=row.n,
            p_value=row.p_value,
            p_holm=step.p_adjusted,
            regressed=row.regressed,
            improved=row.improved,
            served_before=step.served_before,
            served_after=step.served_after,
        )


class Alarm(BaseModel):
    """A run's alarm. `models` (label -> model string): the drifting ones for drift, every
    model of the run otherwise; `metrics`: 'suite/metric' of the drift flags; `reported_by`:
    the run that sent it (a crashed run's alarm is sent by the run that found it dead)."""

    model_config = ConfigDict(frozen=True)

    event: str
    kind: AlarmKind
    panel: str
    run_id: str
    status: str
    message: str | None
    started_at: datetime
    ended_at: datetime | None
    store: str
    models: dict[str, str]
    metrics: list[str]
    drift: list[DriftFlag]
    items_answered: int
    items_left: int
    errors: int
    cost_usd: float
    budget_usd: float | None
    flow_run_id: str | None
    deployment: str | None
    report: str | None
    history_page: str | None
    reported_by: str

    def announcement(self) -> Announcement:
        """The alarm as a Prefect event: about the run, related to its panel, models and
        metrics; the whole alarm as its payload."""
        resource = {
            "prefect.resource.id": f"roadeval.run.{self.run_id}",
            "prefect.resource.name": self.run_id,
            "roadeval.panel": self.panel,
            "roadeval.status": self.status,
        }
        related = [
            {
                "prefect.resource.id": f"roadeval.panel.{self.panel}",
                "prefect.resource.role": "panel",
                "prefect.resource.name": self.panel,
            },
            *(
                {
                    "prefect.resource.id": f"roadeval.model.{model}",
                    "prefect.resource.role": "model",
                    "prefect.resource.name": label,
                }
                for label, model in sorted(self.models.items())
            ),
            *(
                {
                    "prefect.resource.id": f"roadeval.metric.{metric}",
                    "prefect.resource.role": "metric",
                    "prefect.resource.name": metric,
                }
                for metric in self.metrics
            ),
        ]
        return Announcement(self.event, resource, related, self.model_dump(mode="json"))


def _alarm(
    kind: AlarmKind, manifest: RunManifest, reported_by: str, status: str, **fields: Any
) -> Alarm:
    totals = manifest.totals
    values: dict[str, Any] = {
        "models": labelled_models(manifest.models),
        "metrics": [],
        "drift": [],
        "report": None,
        "history_page": None,
        **fields,
    }
    return Alarm(
        event=EVENT_PREFIX + kind.value,
        kind=kind,
        panel=manifest.panel,
        run_id=manifest.run_id,
        status=status,
        message=manifest.message,
        started_at=manifest.started_at,
        ended_at=manifest.ended_at,
        store=manifest.store,
        items_answered=totals.answered,
        items_left=totals.left,
        errors=totals.errors,
        cost_usd=totals.cost_usd,
        budget_usd=manifest.budget_usd,
        flow_run_id=manifest.flow_run_id,
        deployment=manifest.deployment,
        reported_by=reported_by,
        **values,
    )


def drift_alarm(
    manifest: RunManifest,
    steps: Sequence[Step],
    report: str | None = None,
    history_page: str | None = None,
) -> Alarm | None:
    """The drift alarm of a finished run: its drift flags against the panel's finished run
    before it (None when it has none)."""
    flags = [DriftFlag.of(s) for s in steps if s.drift and s.row.run_id == manifest.run_id]
    if not flags:
        return None
    everyone = labelled_models(manifest.models)
    drifted = {flag.model for flag in flags}
    return _alarm(
        AlarmKind.DRIFT,
        manifest,
        manifest.run_id,
        str(manifest.status),
        models={label: model for label, model in everyone.items() if label in drifted},
        metrics=sorted({f"{flag.suite}/{flag.metric}" for flag in flags}),
        drift=flags,
        report=report,
        history_page=history_page,
    )


def stop_alarm(manifest: RunManifest) -> Alarm | None:
    """The alarm of a run that stopped (failed, or at its budget); None for one stopped on
    purpose (interrupted)."""
    kind = STOP_ALARMS.get(str(manifest.status))
    if kind is None:
        return None
    return _alarm(kind, manifest, manifest.run_id, str(manifest.status))


def errors_alarm(manifest: RunManifest, report: str | None = None) -> Alarm | None:
    """The alarm of a finished run whose items ended in model errors (an endpoint down, a key
    refused, calls timing out); None when none did."""
    if not manifest.totals.errors:
        return None
    return _alarm(AlarmKind.ERRORS, manifest, manifest.run_id, str(manifest.status), report=report)


def crash_alarm(manifest: RunManifest, found_by: str) -> Alarm:
    """The alarm of a run that died (its last record says running, its heartbeat stopped),
    sent by run `found_by`, which found it so."""
    return _alarm(AlarmKind.CRASHED, manifest, found_by, DIED)
