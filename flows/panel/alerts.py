"""The panel's `alerts:`: a webhook that receives a run's alarms (drift found, failed, crashed,
stopped at its budget, finished with items in model errors) as JSON, for teams that watch a
panel without a Prefect automation.

A webhook's URL often carries its token (Slack's and Discord's in the path, others in the
query), so it is a secret: held as one (never dumped, never in a message), shown as its scheme
and host only, or read from an environment variable (`webhook_env`) as a model's key is.
"""

from __future__ import annotations

import os
from enum import StrEnum
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)

from roadeval.bounds import Bound


class AlarmKind(StrEnum):
    """What a run announces; the Prefect event is `roadeval.run.<kind>`."""

    DRIFT = "drift"
    FAILED = "failed"
    CRASHED = "crashed"
    BUDGET_STOPPED = "budget_stopped"
    # A finished run with items in model errors: an endpoint down or a key refused ends a run
    # `finished` (what landed is kept), and a scheduled panel's watchers need to hear it.
    ERRORS = "errors"


WEBHOOK_TIMEOUT_S = Bound(
    0.1,
    60,
    "seconds the webhook may take to answer: the run waits for it at its end, so a receiver "
    "that hangs holds a finished run back by this much at most",
)


def webhook_problem(url: str) -> str | None:
    """Why `url` cannot be a webhook (an http(s) URL with a host), or None; the message never
    shows the URL, which may hold a token."""
    if any(c.isspace() or not c.isprintable() for c in url):
        return "holds spaces or control characters; expected an http(s) URL"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "is not an http(s) URL with a host and a port from 1 to 65535"
    if parts.scheme.lower() not in ("http", "https"):
        return "is not an http:// or https:// URL (it is not shown: it may hold a token)"
    if not parts.hostname:
        return "names no host (it is not shown: it may hold a token)"
    if port == 0:
        return "the port is not a number from 1 to 65535"
    return None


def shown_url(url: str) -> str:
    """What may be shown of a webhook's URL: its scheme and host (and port); its user, path
    and query, where tokens are, as `[redacted]`."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}/[redacted]"


def url_secrets(url: str) -> dict[str, str]:
    """The parts of a webhook's URL to redact from any text (a log line, an error): the URL,
    its path with the query, and its user info, for a `Redactor`."""
    parts = urlsplit(url)
    found = {"alerts.webhook": url}
    tail = parts.path + (f"?{parts.query}" if parts.query else "")
    if tail.strip("/"):
        found["alerts.webhook path"] = tail
    if parts.password:
        found["alerts.webhook password"] = parts.password
    return found


class Alerts(BaseModel):
    """`alerts: {webhook: URL | webhook_env: VAR, alarms: [...], timeout_s: S}`: where a run's
    alarms are POSTed and which of them (all by default)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    webhook: SecretStr | None = None
    webhook_env: str | None = None
    # Not `on`: YAML reads an unquoted `on:` key as the boolean true.
    alarms: list[AlarmKind] = Field(default_factory=lambda: list(AlarmKind), min_length=1)
    timeout_s: Annotated[float, AfterValidator(WEBHOOK_TIMEOUT_S)] = 10.0

    @field_validator("webhook")
    @classmethod
    def _webhook_is_a_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and (problem := webhook_problem(value.get_secret_value())):
            raise ValueError(problem)
        return value

    @field_validator("alarms")
    @classmethod
    def _each_once(cls, value: list[AlarmKind]) -> list[AlarmKind]:
        repeated = sorted({kind.value for kind in value if value.count(kind) > 1})
        if repeated:
            raise ValueError(f"an alarm may appear once; repeated: {', '.join(repeated)}")
        return value

    @model_validator(mode="after")
    def _one_webhook(self) -> Alerts:
        if (self.webhook is None) == (self.webhook_env is None):
            raise ValueError(
                "give exactly one of 'webhook' (its URL) or 'webhook_env' (the environment "
                "variable that holds it)"
            )
        return self

    @property
    def missing_webhook(self) -> str | None:
        """Why the webhook cannot be called for want of its variable (now), or None."""
        if self.webhook_env is None:
            return None
        value = os.environ.get(self.webhook_env)
        if not value:
            return f"alerts: its webhook_env, {self.webhook_env}, is not set in the environment"
        if (problem := webhook_problem(value)) is not None:
            return f"alerts: the webhook in {self.webhook_env} {problem}"
        return None

    def url(self) -> str:
        """The webhook's URL (from the environment for `webhook_env`)."""
        if self.webhook is not None:
            return self.webhook.get_secret_value()
        assert self.webhook_env is not None
        return os.environ.get(self.webhook_env, "")
