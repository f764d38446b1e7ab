"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests, answering each model by a rule.

A rule can also make the server misbehave the ways real endpoints do: slow replies, error statuses,
dropped connections, truncated bodies and bodies trickled out a few bytes at a time. A model can
also be rate-limited as OpenAI does it (`server.limits[model] = ServerLimits(rpm=..., tpm=...)`):
429 with Retry-After past the limit, `x-ratelimit-*` headers on every reply, and the exact peak of
every 60-second window recorded, so a test can assert that a client never broke a limit.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Fault(StrEnum):
    """How a reply goes wrong on the wire."""

    DROP = "drop"  # close the connection without sending anything
    TRUNCATE = "truncate"  # announce the whole body, send half of it, close
    TRICKLE = "trickle"  # send the body a few bytes at a time, `trickle_s` apart


@dataclass(frozen=True)
class Reply:
    text: str = ""
    status: int = 200
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    prompt_tokens: int = 10
    completion_tokens: int = 1
    fault: Fault | None = None
    trickle_s: float = 0.05
    # Per output token: (token, logprob, [(alternative, logprob), ...]), sent as OpenAI does:
    # the likeliest alternatives first, as many as the request's `top_logprobs` (when it has one).
    logprobs: list[tuple[str, float, list[tuple[str, float]]]] | None = None
    # What the reply says served it: the `model` it names (the request's unless set, as a
    # vLLM or SGLang server names its served model) and a `system_fingerprint` (none unless set).
    served_model: str | None = None
    system_fingerprint: str | None = None

    def served_by(self, body: dict[str, Any]) -> dict[str, Any]:
        """The reply body's `model` (and `system_fingerprint`, when set) for request `body`."""
        named: dict[str, Any] = {"model": self.served_model or body.get("model")}
        if self.system_fingerprint is not None:
            named["system_fingerprint"] = self.system_fingerprint
        return named


@dataclass(frozen=True)
class ServerLimits:
    """A model's limits as a provider enforces them, over a sliding window of `window_s` seconds.

    A request's tokens are what OpenAI counts against a limit: the reply's prompt tokens plus the
    request's `max_tokens` (or `max_completion_tokens`; 0 if neither). With `enforce=False` the
    server only counts (headers and peaks) and never answers 429, so a test can check that a
    client kept to a limit by itself.
    """

    rpm: int | None = None
    tpm: int | None = None
    enforce: bool = True
    window_s: float = 60.0

    def __post_init__(self) -> None:
        if self.rpm is None and self.tpm is None:
            raise ValueError("ServerLimits needs rpm, tpm or both")
        for name, value in (("rpm", self.rpm), ("tpm", self.tpm), ("window_s", self.window_s)):
            if value is not None and value <= 0:
                raise ValueError(f"ServerLimits.{name} must be positive, not {value!r}")


@dataclass(frozen=True)
class WindowPeaks:
    """The most admitted requests and admitted tokens seen in any one window of a model."""

    requests: int
    tokens: int


def openai_duration(seconds: float) -> str:
    """A duration as OpenAI's reset headers spell it (Go's style): "250ms", "1s", "6m0s"."""
    ms = max(0, math.ceil(seconds * 1000 - 1e-6))
    if ms < 1000:
        return f"{ms}ms"
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs = f"{rest / 1000:.3f}".rstrip("0").rstrip(".")
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{minutes}m{secs}s"
    return f"{secs}s"


def request_tokens(body: dict[str, Any], reply: Reply) -> int:
    """What a request counts against a token limit: prompt tokens plus the output it reserves."""
    reserved = body.get("max_tokens")
    if reserved is None:
        reserved = body.get("max_completion_tokens")
    return reply.prompt_tokens + int(reserved or 0)


@dataclass(frozen=True)
class _Verdict:
    """The limiter's answer to one request: admitted or not, and the headers to send."""

    admitted: bool
    headers: dict[str, str]
    retry_after_s: float | None = None  # None with a 429: the request can never fit
    kind: str = ""  # the limit broken: "requests" or "tokens" (OpenAI's error type)
    message: str = ""


class _Window:
    """One model's admitted requests in the current window, with its running peaks.

    The peaks are exact: any window's count (or token sum) is at most that of the window ending
    at its last admission, and every admission's window is measured here when it happens.
    """

    def __init__(self, limits: ServerLimits) -> None:
        self.limits = limits
        self.admitted: deque[tuple[float, int]] = deque()  # (monotonic time, tokens)
        self.tokens = 0
        self.peaks = WindowPeaks(0, 0)
        self.rejected = 0
        self.log: list[float] = []  # every admission's time, for rates over a whole run

    def _expire(self, now: float) -> None:
        # The window is (now - window_s, now]: an admission exactly window_s ago has left it.
        horizon = now - self.limits.window_s
        while self.admitted and self.admitted[0][0] <= horizon:
            self.tokens -= self.admitted.popleft()[1]

    def decide(self, now: float, tokens: int) -> _Verdict:
        """Admit (and count) a request of `tokens` arriving at `now`, or refuse it."""
        self._expire(now)
        limits = self.limits
        waits: dict[str, float] = {}  # per limit broken: seconds until enough of it frees
        too_large = limits.tpm is not None and tokens > limits.tpm
        if limits.rpm is not None and len(self.admitted) >= limits.rpm:
            # The oldest admissions must leave until one more request fits.
            waits["requests"] = self._expiry(len(self.admitted) - limits.rpm, now)
        if limits.tpm is not None and not too_large and self.tokens + tokens > limits.tpm:
            freed, leaving = 0, 0
            while self.tokens - freed + tokens > limits.tpm:
                freed += self.admitted[leaving][1]
                leaving += 1
            waits["tokens"] = self._expiry(leaving - 1, now)
        if (too_large or waits) and limits.enforce:
            self.rejected += 1
            if too_large:
                message = f"Request too large: {tokens} tokens asked, limit {limits.tpm}"
                return _Verdict(False, self._headers(now), None, "tokens", message)
            kind = max(waits, key=lambda k: waits[k])
            message = f"Rate limit reached for {kind}: limit {self._limit(kind)} per window"
            return _Verdict(False, self._headers(now), waits[kind], kind, message)
        self.admitted.append((now, tokens))
        self.log.append(now)
        self.tokens += tokens
        self.peaks = WindowPeaks(
            max(self.peaks.requests, len(self.admitted)), max(self.peaks.tokens, self.tokens)
        )
        return _Verdict(True, self._headers(now))

    def _limit(self, kind: str) -> int | None:
        return self.limits.rpm if kind == "requests" else self.limits.tpm

    def _expiry(self, index: int, now: float) -> float:
        """Seconds until the admission at `index` (oldest first) leaves the window."""
        return max(0.0, self.admitted[index][0] + self.limits.window_s - now)

    def _headers(self, now: float) -> dict[str, str]:
        """OpenAI's `x-ratelimit-*` headers; reset is the time until the window is empty again
        (OpenAI: "until the rate limit resets to its initial state")."""
        headers: dict[str, str] = {}
        until_empty = self._expiry(len(self.admitted) - 1, now) if self.admitted else 0.0
        if self.limits.rpm is not None:
            headers["x-ratelimit-limit-requests"] = str(self.limits.rpm)
            remaining = max(0, self.limits.rpm - len(self.admitted))
            headers["x-ratelimit-remaining-requests"] = str(remaining)
            headers["x-ratelimit-reset-requests"] = openai_duration(until_empty)
        if self.limits.tpm is not None:
            headers["x-ratelimit-limit-tokens"] = str(self.limits.tpm)
            headers["x-ratelimit-remaining-tokens"] = str(max(0, self.limits.tpm - self.tokens))
            headers["x-ratelimit-reset-tokens"] = openai_duration(until_empty)
        return headers


# (request body, this model's hit number from 1) -> reply. The body carries two extra keys:
# "_path" (the request path, which tells endpoints apart) and "_headers" (lower-cased names).
Rule = Callable[[dict[str, Any], int], Reply]


def prompt_text(body: dict[str, Any]) -> str:
    """All text parts of the request's messages, joined."""
    chunks = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            chunks.append(content)
        elif isinstance(content, list):
            chunks.extend(p.get("text", "") for p in content if p.get("type") == "text")
    return "\n".join(chunks)


class _QuietServer(ThreadingHTTPServer):
    """A client that gave up (a timeout test) closes its socket mid-reply; that is expected."""

    # socketserver's default backlog of 5 drops connections under a burst of concurrent calls,
    # which the client then retries a second later: a real server's backlog is far larger.
    request_queue_size = 256

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class ModelServer:
    """Start with `start()`, point LiteLLM at `api_base`, inspect `hits`; `stop()` when done.

    `limits[model] = ServerLimits(...)` rate-limits a model (setting it anew starts its count
    afresh); `window_peaks(model)` and `rejected(model)` say what the limiter saw. Its windows
    run on `clock` (time.monotonic, the clock a client's limiter keeps, unless a test sets
    another: a `support.clock.ManualClock` makes every window exact whatever the machine's load).
    """

    def __init__(self) -> None:
        self.rules: dict[str, Rule] = {}
        self.limits: dict[str, ServerLimits] = {}
        self.clock: Callable[[], float] = time.monotonic
        self.hits: list[dict[str, Any]] = []
        self._hit_numbers: Counter[str] = Counter()
        self._windows: dict[str, _Window] = {}
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def root(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def api_base(self) -> str:
        return f"{self.root}/v1"

    def api_base_at(self, prefix: str) -> str:
        """Another endpoint on the same server (e.g. a fine-tuned model's); see `hits_for`."""
        return f"{self.root}/{prefix}/v1"

    def hits_for(self, model: str, prefix: str | None = None) -> list[dict[str, Any]]:
        """Requests for `model`; with `prefix`, only those sent to `api_base_at(prefix)`."""
        with self._lock:
            return [
                h
                for h in self.hits
                if h.get("model") == model
                and (prefix is None or h["_path"].startswith(f"/{prefix}/"))
            ]

    def window_peaks(self, model: str) -> WindowPeaks:
        """The most requests and tokens admitted for `model` in any one window (exact)."""
        with self._lock:
            return self._window(model).peaks

    def rejected(self, model: str) -> int:
        """How many requests for `model` were answered 429 for its limits."""
        with self._lock:
            return self._window(model).rejected

    def admission_times(self, model: str) -> list[float]:
        """When each admitted request for `model` arrived (by `clock`), oldest first."""
        with self._lock:
            return list(self._window(model).log)

    def reset(self) -> None:
        with self._lock:
            self.hits.clear()
            self.rules.clear()
            self.limits.clear()
            self.clock = time.monotonic
            self._hit_numbers.clear()
            self._windows.clear()

    def _window(self, model: str) -> _Window:
        # Called with the lock held. A window belongs to one ServerLimits value.
        limits = self.limits.get(model)
        if limits is None:
            raise KeyError(f"model {model!r} has no ServerLimits on this server")
        window = self._windows.get(model)
        if window is None or window.limits is not limits:
            window = self._windows[model] = _Window(limits)
        return window

    def _handle(self, body: dict[str, Any]) -> tuple[Reply, _Verdict | None]:
        """The rule's reply, and for a limited model the limiter's verdict on the request."""
        model = body.get("model", "")
        with self._lock:
            self.hits.append(body)
            self._hit_numbers[model] += 1
            number = self._hit_numbers[model]
            rule = self.rules.get(model)
        if rule is None:
            return Reply(status=404, text=f"no rule for model {model!r}"), None
        # The rule runs first: its reply's prompt tokens are part of what the request counts.
        reply = rule(body, number)
        with self._lock:
            if model not in self.limits:
                return reply, None
            # Timed under the lock, so that admissions are logged in time order.
            return reply, self._window(model).decide(self.clock(), request_tokens(body, reply))

    def start(self, port: int = 0) -> ModelServer:
        server_ref = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}}, Reply())
                    return
                body["_path"] = self.path
                body["_headers"] = {k.lower(): v for k, v in self.headers.items()}
                reply, verdict = server_ref._handle(body)
                limit_headers = verdict.headers if verdict is not None else {}
                if verdict is not None and not verdict.admitted:
                    self._refuse(verdict)
                    return
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.fault is Fault.DROP:
                    self.close_connection = True
                    return
                if reply.status != 200:
                    error = {
                        "error": {"message": reply.text or f"status {reply.status}", "type": "test"}
                    }
                    self._send(reply.status, error, reply, limit_headers)
                    return
                choice: dict[str, Any] = {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.text},
                    "finish_reason": "stop",
                }
                if reply.logprobs is not None:
                    asked = body.get("top_logprobs")
                    keep = asked if isinstance(asked, int) else None
                    choice["logprobs"] = {
                        "content": [
                            {
                                "token": token,
                                "logprob": logprob,
                                "bytes": None,
                                "top_logprobs": [
                                    {"token": t, "logprob": lp, "bytes": None}
                                    for t, lp in sorted(top, key=lambda alt: -alt[1])[:keep]
                                ],
                            }
                            for token, logprob, top in reply.logprobs
                        ]
                    }
                payload = {
                    "id": "chatcmpl-test",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    **reply.served_by(body),
                    "choices": [choice],
                    "usage": {
                        "prompt_tokens": reply.prompt_tokens,
                        "completion_tokens": reply.completion_tokens,
                        "total_tokens": reply.prompt_tokens + reply.completion_tokens,
                    },
                }
                self._send(200, payload, reply, limit_headers)

            def _refuse(self, verdict: _Verdict) -> None:
                """A 429 as OpenAI sends it: at once, with its error body and Retry-After."""
                headers = dict(verdict.headers)
                if verdict.retry_after_s is not None:
                    # Whole seconds (rounded up, so a client that waits them is admitted), and
                    # OpenAI's exact `retry-after-ms` beside them.
                    headers["retry-after"] = str(max(1, math.ceil(verdict.retry_after_s)))
                    headers["retry-after-ms"] = str(math.ceil(verdict.retry_after_s * 1000))
                error = {
                    "error": {
                        "message": verdict.message,
                        "type": verdict.kind,
                        "param": None,
                        "code": "rate_limit_exceeded",
                    }
                }
                self._send(429, error, Reply(), headers)

            def _send(
                self,
                status: int,
                payload: dict[str, Any],
                reply: Reply,
                extra_headers: dict[str, str] | None = None,
            ) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                # The rule's own headers win over the limiter's, so a test can still fake any.
                headers = {**(extra_headers or {}), **reply.headers}
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                if reply.fault is Fault.TRUNCATE:
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                elif reply.fault is Fault.TRICKLE:
                    for start in range(0, len(data), 4):
                        self.wfile.write(data[start : start + 4])
                        self.wfile.flush()
                        time.sleep(reply.trickle_s)
                else:
                    self.wfile.write(data)

        self._server = _QuietServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
