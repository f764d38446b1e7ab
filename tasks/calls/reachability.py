"""When a model counts as unreachable: its endpoint is really gone, not merely flaky.

Three transport failures in a row mean little when many requests run at once: a server that
drops a few connections under load is still serving. A model is declared unreachable only when

- no connection could be made at all (refused, unknown host) before any request succeeded, after
  that request's retries; or
- requests have failed on the transport (no connection, dropped, truncated, timed out) for a
  whole window with no success in between.

Then its remaining requests are skipped, so a dead endpoint does not cost the run its timeouts.
"""

from __future__ import annotations

import time

from roadeval.tasks.calls.errors import TRANSPORT
from roadeval.tasks.requests.request import ErrorKind

DEFAULT_WINDOW_S = 60.0


class Reachability:
    """Per model: what its requests have shown about its endpoint so far."""

    def __init__(self, window_s: float = DEFAULT_WINDOW_S) -> None:
        self.window_s = window_s
        self.ever_succeeded = False
        self.failing_since: float | None = None
        self.verdict: str | None = None

    @property
    def unreachable(self) -> bool:
        return self.verdict is not None

    def succeeded(self) -> None:
        self.ever_succeeded = True
        self.failing_since = None

    def failed(self, kind: str, now: float | None = None) -> None:
        """Note one failed HTTP try (before any retry of it)."""
        if kind in TRANSPORT and self.failing_since is None:
            self.failing_since = time.monotonic() if now is None else now

    def gave_up(self, kind: str, now: float | None = None) -> None:
        """A request failed for good (its retries spent): decide whether the endpoint is gone."""
        if kind not in TRANSPORT or self.unreachable:
            return
        now = time.monotonic() if now is None else now
        if kind == ErrorKind.CONNECTION and not self.ever_succeeded:
            self.verdict = "no connection could be made"
        elif self.failing_since is not None and now - self.failing_since >= self.window_s:
            self.verdict = f"no request succeeded for {now - self.failing_since:.0f} s"
