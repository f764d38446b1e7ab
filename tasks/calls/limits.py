"""Per-model call limits: concurrency, requests and tokens per minute, shared by every caller of a
model in the process that holds them (the run's authority for that model).

Requests are spaced `60/rpm` apart and, like tokens, also held to a sliding 60-second window with a
small guard, so a provider that counts either way (a bucket refilled per second, or an exact window
at its end of the wire) never sees more than the panel allows. A request reserves its prompt plus
its maximum output at admission, as providers count it, and is reconciled with the prompt the
provider reports. The provider's `x-ratelimit-*` headers and a 429's Retry-After pause every
caller of the model, so one 429 does not become thirty-two.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass

WINDOW_S = 60.0
# Added to the window: a provider's clock starts when a request arrives, a little after ours.
GUARD_S = 0.5
_POLL_S = 0.2
# Ends kept at most (a limit of 100,000 requests a minute is beyond any provider's).
_KEPT = 100_000


class OverLimit(ValueError):
    """A request that needs more tokens than the model's whole per-minute limit."""


_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def parse_duration_s(text: str | None) -> float | None:
    """Seconds in an OpenAI-style reset duration ("1s", "6m0s", "250ms", "1h2m3.5s", "20")."""
    if not text:
        return None
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        pass
    parts = _PART.findall(text)
    if not parts or "".join(number + unit for number, unit in parts) != text:
        return None
    return sum(float(number) * _UNIT_S[unit] for number, unit in parts)


@dataclass(frozen=True)
class RateHeaders:
    """What a provider's `x-ratelimit-*` headers say is left, and when it refills."""

    remaining_requests: int | None = None
    reset_requests_s: float | None = None
    remaining_tokens: int | None = None
    reset_tokens_s: float | None = None
    limit_requests: int | None = None
    limit_tokens: int | None = None

    @classmethod
    def read(cls, headers: Mapping[str, str] | None) -> RateHeaders | None:
        if not headers:
            return None
        lower = {str(k).lower(): str(v) for k, v in headers.items()}

        def count(name: str) -> int | None:
            value = lower.get(name)
            try:
                return int(float(value)) if value is not None else None
            except ValueError:
                return None

        found = cls(
            count("x-ratelimit-remaining-requests"),
            parse_duration_s(lower.get("x-ratelimit-reset-requests")),
            count("x-ratelimit-remaining-tokens"),
            parse_duration_s(lower.get("x-ratelimit-reset-tokens")),
            count("x-ratelimit-limit-requests"),
            count("x-ratelimit-limit-tokens"),
        )
        return None if found == cls() else found


@dataclass
class Admission:
    """A request let through: it holds a concurrency slot and its tokens in the window."""

    started: float
    tokens: int


class CallLimiter:
    """Admits a call when a slot is free and the model's request and token limits allow it."""

    def __init__(
        self,
        max_concurrency: int,
        rpm: float | None,
        tpm: float | None = None,
        *,
        window_s: float = WINDOW_S,
        guard_s: float = GUARD_S,
    ) -> None:
        self.max_concurrency = max_concurrency
        self.rpm = rpm
        self.tpm = tpm
        self.window_s = window_s
        self._slots = asyncio.Semaphore(max_concurrency)
        self._interval = window_s / rpm if rpm else 0.0
        self._span = window_s + guard_s
        self._next_start = 0.0
        # A request counts in the window from its admission until `span` after it ENDS: the
        # provider counts it from its arrival, somewhere in between, however late it gets there.
        self._flying: set[int] = set()
        self._flying_tokens = 0
        self._ended: deque[tuple[float, int]] = deque()  # (end, tokens), in order of ending
        self._ended_tokens = 0
        self._paused_until = 0.0
        # Tokens the provider says are left until a refill: the next request waits if it needs more.
        self._provider_tokens: tuple[int, float] | None = None
        self._lock = asyncio.Lock()

    @property
    def in_flight(self) -> int:
        return len(self._flying)

    async def acquire(
        self, tokens: int = 0, stopped: Callable[[], bool] | None = None
    ) -> Admission | None:
        """Wait for a slot and for the limits; None if `stopped` turns true while waiting."""
        if self.tpm is not None and tokens > self.tpm:
            raise OverLimit(
                f"the request needs {tokens} tokens (prompt + max output), more than the "
                f"model's tpm of {self.tpm:g}: it could never be sent"
            )
        await self._slots.acquire()
        try:
            async with self._lock:
                while (wait := self._wait_s(tokens, time.monotonic())) > 0:
                    if stopped is not None and stopped():
                        self._slots.release()
                        return None
                    await asyncio.sleep(min(wait, _POLL_S))
                now = time.monotonic()
                admission = Admission(now, tokens)
                self._next_start = max(now, self._next_start) + self._interval
                self._flying.add(id(admission))
                self._flying_tokens += tokens
                if self._provider_tokens is not None:
                    left, until = self._provider_tokens
                    self._provider_tokens = (left - tokens, until)
        except BaseException:
            self._slots.release()
            raise
        return admission

    def _wait_s(self, tokens: int, now: float) -> float:
        horizon = now - self._span
        ended = self._ended
        while ended and (ended[0][0] <= horizon or len(ended) > _KEPT):
            self._ended_tokens -= ended.popleft()[1]
        waits = [self._paused_until - now, self._next_start - now]
        if self.rpm and len(self._flying) + len(ended) >= self.rpm:
            # The oldest ended requests must leave the window; requests in flight only can.
            must_leave = len(self._flying) + len(ended) - int(self.rpm) + 1
            waits.append(
                ended[must_leave - 1][0] + self._span - now if must_leave <= len(ended) else _POLL_S
            )
        if self.tpm is not None:
            excess = self._flying_tokens + self._ended_tokens + tokens - self.tpm
            if excess > 0:
                at = None
                for end, held in ended:
                    excess -= held
                    if excess <= 0:
                        at = end + self._span
                        break
                waits.append(at - now if at is not None else _POLL_S)
        if self._provider_tokens is not None:
            left, until = self._provider_tokens
            if until <= now:
                self._provider_tokens = None
            elif tokens > left:
                waits.append(until - now)
        return max(waits)

    def release(
        self,
        admission: Admission,
        *,
        prompt_tokens: int | None = None,
        prompt_estimate: int | None = None,
        headers: Mapping[str, str] | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        """The request ended: free its slot, correct its tokens by the prompt the provider
        counted, and heed what the provider said about its limits."""
        now = time.monotonic()
        if id(admission) not in self._flying:
            return
        self._flying.discard(id(admission))
        self._flying_tokens -= admission.tokens
        self._slots.release()
        if self.rpm or self.tpm is not None:
            tokens = admission.tokens
            if prompt_tokens is not None and prompt_estimate is not None:
                tokens += prompt_tokens - prompt_estimate
            self._ended.append((now, tokens))
            self._ended_tokens += tokens
        if retry_after_s is not None and retry_after_s > 0:
            self._paused_until = max(self._paused_until, now + retry_after_s)
        said = RateHeaders.read(headers)
        if said is None:
            return
        # The provider's own limits, once it states them, bind as the panel's do: requests are
        # then spaced by the tighter of the two instead of being found out by 429s.
        if said.limit_requests and (self.rpm is None or said.limit_requests < self.rpm):
            self.rpm = float(said.limit_requests)
            self._interval = self.window_s / self.rpm
        if said.limit_tokens and (self.tpm is None or said.limit_tokens < self.tpm):
            self.tpm = float(said.limit_tokens)
        if said.remaining_requests is not None and said.remaining_requests <= 0:
            reset = said.reset_requests_s if said.reset_requests_s is not None else 1.0
            self._paused_until = max(self._paused_until, now + reset)
        if said.remaining_tokens is not None and said.reset_tokens_s is not None:
            self._provider_tokens = (said.remaining_tokens, now + said.reset_tokens_s)
