"""Announcing a run's alarms: a finished run that found drift, a run that failed or stopped at
its budget, and a run found dead by the next run of its panel. Each alarm goes to Prefect's
events (under Prefect; an inline run has none, and that is no error) and to the panel's
webhook (`alerts:`, for the kinds it names).

Each (run, kind) is announced once: its record, `alarms/<run_id>/<kind>.json`, is created
before anything is sent (a conditional write), so two runs that find the same dead run send
one alarm; after sending, the record says where it went and how. Nothing here fails a run: an
alarm that cannot be sent or recorded is a warning, in the run's log and on its terminal.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime

from roadeval.flows.panel.alerts import AlarmKind, Alerts, url_secrets
from roadeval.flows.panel.file import Panel
from roadeval.flows.record.log import run_logger
from roadeval.flows.record.summary import RunSummary
from roadeval.flows.run.alarm import Alarm, crash_alarm, drift_alarm, errors_alarm, stop_alarm
from roadeval.flows.run.webhook import Delivery, post_alarm
from roadeval.flows.stages.orchestration import Orchestrator
from roadeval.storage.store import ConditionalWritesUnsupported, Store
from roadeval.tasks.calls.secrets import Redactor
from roadeval.tasks.results.history import Step
from roadeval.tasks.results.manifest import HorizonRecord, RunManifest

ALARMS = "alarms/"


def alarm_key(run_id: str, kind: AlarmKind) -> str:
    """Where the record of run `run_id`'s alarm of `kind` lives."""
    return f"{ALARMS}{run_id}/{kind.value}.json"


def _redactor(panel: Panel) -> Redactor:
    """The run's own redactor (its keys' variables and every secret-named one), as its record
    uses: an alarm carries the run's message, which may quote a provider's echo."""
    return Redactor.from_environment(s.api_key_env for s in panel.all_models if s.api_key_env)


def _record(alarm: Alarm, deliveries: Sequence[Delivery]) -> bytes:
    return json.dumps(
        {
            "alarm": alarm.model_dump(mode="json"),
            "recorded_at": datetime.now(UTC).isoformat(),
            "deliveries": [vars(d) for d in deliveries],
        },
        indent=2,
    ).encode()


def _claim(store: Store, alarm: Alarm) -> tuple[bool, str | None]:
    """Create the alarm's record (sent by nobody yet): False when another run has; and a
    warning when the store cannot tell (an S3 endpoint without conditional writes)."""
    key = alarm_key(alarm.run_id, alarm.kind)
    try:
        return store.create(key, _record(alarm, [])), None
    except ConditionalWritesUnsupported as exc:
        if store.exists(key):
            return False, None
        store.put(key, _record(alarm, []))
        return True, f"{exc}: two runs at once may both send this alarm"


def announce(
    alarm: Alarm, store: Store, alerts: Alerts | None, orchestrator: Orchestrator
) -> list[str]:
    """Send `alarm` once (see the module) and record how it went; the lines a person is told
    (what was sent, and a warning per channel that failed), none when it was sent before."""
    claimed, warning = _claim(store, alarm)
    if not claimed:
        return []
    deliveries: list[Delivery] = []
    try:
        if orchestrator.announce(alarm.announcement()):
            deliveries.append(Delivery("prefect", "events"))
    except Exception as exc:
        deliveries.append(Delivery("prefect", "events", f"{type(exc).__name__}: {exc}"))
    if alerts is not None and alarm.kind in alerts.alarms:
        deliveries.append(post_alarm(alerts, alarm.model_dump_json().encode()))
    key = alarm_key(alarm.run_id, alarm.kind)
    lines = [f"warning: alarm {alarm.event}: {warning}"] if warning else []
    try:
        store.put(key, _record(alarm, deliveries))
    except Exception as exc:
        lines.append(f"warning: alarm {alarm.event}: its record could not be written: {exc}")
    for d in deliveries:
        if d.error is None:
            lines.append(f"alarm {alarm.event} sent: {_channel(d)}")
        else:
            lines.append(
                f"warning: alarm {alarm.event} not taken by {_channel(d)}: {d.error} "
                f"(recorded in {store.location(key)}; the run's end is unchanged)"
            )
    if not deliveries:
        # A webhook that is there but not asked for this kind is named: "no webhook" would
        # send the reader looking for a missing `alerts:` block.
        webhook = (
            f"the webhook takes only {', '.join(alerts.alarms)} (alerts.alarms)"
            if alerts is not None
            else "no webhook to send it to"
        )
        lines.append(
            f"alarm {alarm.event} raised, recorded in {store.location(key)}: no Prefect API, "
            f"and {webhook}"
        )
    return lines


def _channel(delivery: Delivery) -> str:
    if delivery.channel == "prefect":
        return "Prefect event"
    status = f" ({delivery.status})" if delivery.status is not None else ""
    return f"webhook {delivery.target}{status}"


def _told(orchestrator: Orchestrator, lines: Sequence[str]) -> None:
    logger = run_logger(orchestrator)
    for line in lines:
        if line.startswith("warning: "):
            logger.warning("%s", line.removeprefix("warning: "))
        else:
            logger.info("%s", line)


def _safely(
    what: str, orchestrator: Orchestrator, alarm: Alarm | None, store: Store, panel: Panel
) -> list[str]:
    """Announce `alarm` (if any); whatever fails is a warning line, never the run's failure."""
    if alarm is None:
        return []
    redact = _redactor(panel)
    # The run's message and the served names come from outside: redacted once more, whole.
    alarm = Alarm.model_validate_json(redact.text(alarm.model_dump_json()))
    try:
        lines = announce(alarm, store, panel.alerts, orchestrator)
    except Exception as exc:
        lines = [f"warning: the {what} alarm could not be sent: {type(exc).__name__}: {exc}"]
    if panel.alerts is not None and (url := panel.alerts.url()):
        # An error's text never quotes the webhook's token (`post_alarm`); nor does a line.
        lines = [Redactor(url_secrets(url)).text(line) for line in lines]
    _told(orchestrator, lines)
    return lines


def announce_drift(
    summary: RunSummary,
    steps: Sequence[Step],
    store: Store,
    panel: Panel,
    orchestrator: Orchestrator,
    history_page: str | None,
) -> list[str]:
    """A finished run's drift alarm, when the history flags drift in it against the panel's
    finished run before it."""
    manifest = summary.manifest.model_copy(update={"status": summary.status})
    alarm = drift_alarm(manifest, steps, summary.report, history_page)
    return _safely("drift", orchestrator, alarm, store, panel)


def announce_errors(
    summary: RunSummary, store: Store, panel: Panel, orchestrator: Orchestrator
) -> list[str]:
    """A finished run's errors alarm, when items ended in model errors (the run exits 1)."""
    manifest = summary.manifest.model_copy(update={"status": summary.status})
    return _safely("errors", orchestrator, errors_alarm(manifest, summary.report), store, panel)


def announce_stop(
    summary: RunSummary,
    status: str,
    message: str,
    store: Store,
    panel: Panel,
    orchestrator: Orchestrator,
) -> list[str]:
    """A stopped run's alarm: failed or budget_stopped (an interrupted run raises none)."""
    manifest = summary.manifest.model_copy(update={"status": status, "message": message})
    return _safely(status, orchestrator, stop_alarm(manifest), store, panel)


def announce_died(
    horizon: HorizonRecord, run_id: str, store: Store, panel: Panel, orchestrator: Orchestrator
) -> list[str]:
    """The crashed alarm of the run this one continues, when that run died (found now: its
    last record says running and its heartbeat stopped); sent once, by whichever run finds
    it first."""
    if horizon.continued_status != "died" or horizon.continues is None:
        return []
    from roadeval.storage.tables import manifest_key

    try:
        manifest = RunManifest.from_json(store.get(manifest_key(horizon.continues)))
    except Exception as exc:
        lines = [
            f"warning: run {horizon.continues} died, and its manifest could not be read for "
            f"its alarm: {type(exc).__name__}: {exc}"
        ]
        _told(orchestrator, lines)
        return lines
    return _safely("crashed", orchestrator, crash_alarm(manifest, run_id), store, panel)
