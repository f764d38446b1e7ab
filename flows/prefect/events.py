"""A run's alarms as Prefect events (`roadeval.run.drift`, ...), which a Prefect automation
can act on (docs/scheduling.md). Prefect's events worker adds the flow run, its flow and its
deployment as related resources, and sends the event in the background."""

from __future__ import annotations

from roadeval.flows.stages.orchestration import Announcement


class EventNotSent(RuntimeError):
    """Prefect took no event: no events client (no API), or it could not build or queue it."""


def emit(announcement: Announcement) -> None:
    """Queue `announcement` for the Prefect API; EventNotSent when Prefect would not."""
    from prefect.events import emit_event

    sent = emit_event(
        event=announcement.event,
        resource=announcement.resource,
        related=announcement.related,
        payload=announcement.payload,
    )
    if sent is None:
        raise EventNotSent(
            f"Prefect sent no {announcement.event} event (no events client for this API, or "
            "the event could not be made: see Prefect's log)"
        )
