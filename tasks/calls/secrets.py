"""Keeping secrets out of everything roadeval writes: stores, manifests, logs, the terminal.

Providers echo keys back in error messages ("Incorrect API key provided: sk-..."). Every text
that comes from outside (error messages, reply text) passes through a Redactor before it is
recorded, and the same Redactor filters log records.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable

# Environment variables whose values are secrets whatever the panel says.
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)", re.IGNORECASE)
# Shorter values are too likely to be ordinary words ("none", "true", a region).
MIN_SECRET_LENGTH = 8


class Redactor:
    """Replaces each known secret with `[redacted:<its variable>]`."""

    def __init__(self, secrets: dict[str, str]) -> None:
        # Longest first, so a secret that contains another is replaced whole.
        self._secrets = sorted(
            ((value, name) for name, value in secrets.items() if len(value) >= MIN_SECRET_LENGTH),
            key=lambda pair: -len(pair[0]),
        )
        self._pattern = (
            re.compile("|".join(re.escape(value) for value, _ in self._secrets))
            if self._secrets
            else None
        )
        self._names = dict(self._secrets)

    @classmethod
    def from_environment(cls, key_variables: Iterable[str] = ()) -> Redactor:
        """The values of `key_variables` (a panel's `api_key_env`s) and of every variable whose
        name says it holds a secret."""
        wanted = set(key_variables)
        secrets = {
            name: value
            for name, value in os.environ.items()
            if value and (name in wanted or _SECRET_NAME.search(name))
        }
        return cls(secrets)

    def __call__(self, text: str | None) -> str | None:
        if text is None or self._pattern is None:
            return text
        return self._pattern.sub(lambda m: f"[redacted:{self._names[m.group(0)]}]", text)

    def text(self, text: str) -> str:
        """`self(text)` for a text known not to be None."""
        redacted = self(text)
        assert redacted is not None
        return redacted


class RedactingFilter(logging.Filter):
    """A log filter that redacts the formatted message before any handler sees it."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = self.redactor.text(message)
        if redacted != message or record.exc_info:
            record.msg, record.args = redacted, None
            if record.exc_info:
                # A traceback's text holds the exception message too: format it redacted.
                formatted = logging.Formatter().formatException(record.exc_info)
                record.msg = f"{redacted}\n{self.redactor.text(formatted)}"
                record.exc_info, record.exc_text = None, None
        return True


def install_log_redaction(redactor: Redactor) -> list[tuple[logging.Handler, logging.Filter]]:
    """Attach a redacting filter to every handler configured now (root, Prefect, LiteLLM);
    returns what was attached so that it can be removed."""
    attached: list[tuple[logging.Handler, logging.Filter]] = []
    known = logging.root.manager.loggerDict.values()
    loggers = [logging.getLogger(), *(lg for lg in known if isinstance(lg, logging.Logger))]
    for logger in loggers:
        for handler in logger.handlers:
            flt = RedactingFilter(redactor)
            handler.addFilter(flt)
            attached.append((handler, flt))
    return attached


def remove_log_redaction(attached: list[tuple[logging.Handler, logging.Filter]]) -> None:
    for handler, flt in attached:
        handler.removeFilter(flt)
