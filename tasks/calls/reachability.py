"""When a model counts as unreachable: its endpoint is really gone, not merely flaky.

Three transport failures in a row mean little when many requests run at once: a server that
drops a few connections under load is still serving. A model is declared unreachable only when

- no connection could be made at all (refused, unknown host) before any request succeeded, after
  that request's retries; or
- requests have failed on the transport (no connection, dropped, truncated, timed out) for a
  whole window with no success in between.

Then its remaining requests are skipped, so a dead endpoint does not cost the run its timeouts.

Its sibling verdict is a refused key (`KeyRefusals`): a model whose key is refused (401, 403, an
invalid-key error) a few times with no success between is declared auth_failed, by name and by
its key's variable, and its remaining requests are skipped rather than each sent to be refused.
"""

from __future__ import annotations

import time

from roadeval.tasks.calls.errors import TRANSPORT
from roadeval.tasks.requests.model_spec import ModelSpec
from roadeval.tasks.requests.request import ErrorKind

DEFAULT_WINDOW_S = 60.0
# Sent as the key to an endpoint that needs none: the OpenAI client insists on some key, and
# the alternative, the environment's OPENAI_API_KEY, would hand a real key to any api_base.
NO_KEY = "no-key"


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


class Unreachable(Exception):
    """Raised by a model's gate instead of admitting a request: a caller of the model, in any
    process of the run, declared its endpoint unreachable; the message is that verdict."""


class AuthFailed(Exception):
    """Raised by a model's gate instead of admitting a request: the model's key was refused too
    often (`KeyRefusals`), so the request is not sent. The message names the key's variable."""


def key_source(spec: ModelSpec) -> str:
    """Which key a model's requests carry, by the variable's name (never its value)."""
    if spec.api_key_env:
        return f"key from api_key_env {spec.api_key_env}"
    if spec.api_base and not spec.is_baseline:
        return f"no key variable (api_key_env unset; the placeholder key {NO_KEY} was sent)"
    return "no key variable (api_key_env unset)"


class KeyRefusals:
    """Per model, run-wide: whether its key is refused (401, 403, an invalid-key error).

    Held by the model's gate, which every caller of the model in the run passes (this process's,
    or the authority's for callers in other processes). After `after` refusals with no success
    between, the model is declared auth_failed: every later request is refused at the gate and
    not sent. Requests already in flight when the verdict lands still end as they end.
    """

    def __init__(self, spec: ModelSpec) -> None:
        self.label = spec.label
        self.source = key_source(spec)
        self.after = spec.auth_failed_after
        self.refused = 0  # since the last success
        self.verdict: str | None = None

    @property
    def failed(self) -> bool:
        return self.verdict is not None

    def note(self, accepted: bool | None) -> None:
        """One try ended: the key was accepted (an answer), refused, or the try said nothing."""
        if accepted is None or self.failed:
            return
        if accepted:
            self.refused = 0
            return
        self.refused += 1
        if self.refused >= self.after:
            self.verdict = (
                f"model {self.label} failed authentication: its key was refused "
                f"{self.refused} times (401, 403 or an invalid key) with no success between "
                f"({self.source}); remaining calls skipped"
            )
