"""POSTing an alarm to the panel's webhook: JSON, one attempt, within the panel's timeout.

What comes back is an outcome to record, never an exception: a receiver that is down, slow or
answers an error does not change how a run ended. The URL is never in an outcome (it may hold
a token): the receiver is shown by its scheme and host.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from dataclasses import dataclass

from roadeval.flows.panel.alerts import Alerts, shown_url, url_secrets
from roadeval.tasks.calls.secrets import Redactor

USER_AGENT = "roadeval-alarm"


@dataclass(frozen=True)
class Delivery:
    """Where an alarm went (`channel`: prefect, webhook; `target`, shown without secrets) and
    how it went: `error` is None when it was taken (a 2xx answer, an event queued)."""

    channel: str
    target: str
    error: str | None = None
    status: int | None = None


def post_alarm(alerts: Alerts, body: bytes) -> Delivery:
    """POST `body` (JSON) to the webhook, waiting at most `alerts.timeout_s` for each of the
    connection and the answer; a 2xx status is taken, anything else is an error."""
    url = alerts.url()
    target = shown_url(url)
    # An error's text may quote the URL (a redirect's, say): its secret parts never pass.
    redact = Redactor(url_secrets(url))
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={"Content-Type": "application/json", "User-Agent": USER_AGENT},
    )
    try:
        with urllib.request.urlopen(request, timeout=alerts.timeout_s) as reply:
            status = int(reply.status)
    except urllib.error.HTTPError as exc:
        return Delivery("webhook", target, redact.text(f"HTTP {exc.code} {exc.reason}"), exc.code)
    except (OSError, ValueError) as exc:
        # URLError, timeouts and refused connections are OSErrors.
        reason = getattr(exc, "reason", exc)
        return Delivery("webhook", target, redact.text(f"{type(exc).__name__}: {reason}"))
    if not 200 <= status < 300:
        return Delivery("webhook", target, f"HTTP {status}", status)
    return Delivery("webhook", target, None, status)
