"""The one call path to every model: LiteLLM's async API behind limits, retries and cost accounting.

All calls of a process run on one background event loop, so a model's limits hold across every
shard that calls it, whichever thread the shard runs in.
"""

from __future__ import annotations

import asyncio
import os
import random
import threading
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

import litellm

from roadeval.tasks import baseline_provider
from roadeval.tasks.limits import CallLimiter
from roadeval.tasks.model_spec import ModelSpec
from roadeval.tasks.request import ErrorKind, ModelRequest, ModelResponse

T = TypeVar("T")

_RETRYABLE = {ErrorKind.RATE_LIMIT, ErrorKind.SERVER, ErrorKind.CONNECTION, ErrorKind.TIMEOUT}
# After this many connection failures in a row a model is declared unreachable for the run.
UNREACHABLE_AFTER = 3
MAX_RETRY_WAIT_S = 60.0


class _Loop:
    """A daemon thread running the event loop that every model call is scheduled on."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="roadeval-gateway", daemon=True
        )
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()


_LOOP: _Loop | None = None
_LOOP_LOCK = threading.Lock()


def run_on_gateway(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine on the shared gateway loop and wait for its result (from any thread)."""
    global _LOOP
    with _LOOP_LOCK:
        if _LOOP is None:
            baseline_provider.install()
            litellm.suppress_debug_info = True
            _LOOP = _Loop()
    return _LOOP.run(coro)


def _is_connection_failure(exc: BaseException) -> bool:
    # LiteLLM reports a refused connection as an InternalServerError; the cause chain tells.
    seen: BaseException | None = exc
    while seen is not None:
        name = type(seen).__name__
        if name in {"APIConnectionError", "ConnectError", "ConnectTimeout"} and not isinstance(
            seen, litellm.Timeout
        ):
            return True
        seen = seen.__cause__ or seen.__context__
    return "Connection error" in str(exc)


def classify(exc: BaseException) -> str:
    """Map a LiteLLM exception to an ErrorKind."""
    if isinstance(exc, litellm.RateLimitError):
        return ErrorKind.RATE_LIMIT
    if isinstance(exc, litellm.Timeout):
        return ErrorKind.TIMEOUT
    if isinstance(exc, litellm.APIConnectionError) or _is_connection_failure(exc):
        return ErrorKind.CONNECTION
    if isinstance(exc, litellm.AuthenticationError | litellm.PermissionDeniedError):
        return ErrorKind.AUTH
    if isinstance(exc, litellm.BadRequestError | litellm.NotFoundError):
        return ErrorKind.BAD_REQUEST
    if isinstance(
        exc, litellm.InternalServerError | litellm.ServiceUnavailableError | litellm.APIError
    ):
        status = getattr(exc, "status_code", None)
        return ErrorKind.SERVER if status is None or status >= 500 else ErrorKind.OTHER
    return ErrorKind.OTHER


def retry_after_s(exc: BaseException) -> float | None:
    """The server's Retry-After, in seconds, when it sent one."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    value = headers.get("retry-after") if hasattr(headers, "get") else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class ModelClient:
    """Calls one model. Limits, retries, unreachable detection and cost live here alone."""

    def __init__(self, spec: ModelSpec) -> None:
        self.spec = spec
        self.limiter = CallLimiter(spec.max_concurrency, spec.rpm)
        self.consecutive_connection_errors = 0
        self.calls = 0

    @property
    def unreachable(self) -> bool:
        return self.consecutive_connection_errors >= UNREACHABLE_AFTER

    def _kwargs(self, request: ModelRequest) -> dict[str, Any]:
        spec = self.spec
        kwargs: dict[str, Any] = {
            "model": spec.model,
            "messages": request.messages,
            "timeout": spec.timeout_s,
            "num_retries": 0,  # retries are ours, so that they are counted and honour Retry-After
            **spec.params,
        }
        if spec.api_base:
            kwargs["api_base"] = spec.api_base
        if spec.api_key_env:
            key = os.environ.get(spec.api_key_env)
            if not key:
                raise KeyError(
                    f"model {spec.label}: environment variable {spec.api_key_env} is not set"
                )
            kwargs["api_key"] = key
        elif spec.api_base and spec.model.startswith("openai/"):
            # OpenAI-compatible servers (vLLM, SGLang) often need no key; the client insists on one.
            kwargs["api_key"] = os.environ.get("OPENAI_API_KEY", "none")
        if spec.input_cost_per_token is not None:
            kwargs["input_cost_per_token"] = spec.input_cost_per_token
        if spec.output_cost_per_token is not None:
            kwargs["output_cost_per_token"] = spec.output_cost_per_token
        if spec.is_baseline:
            kwargs["metadata"] = {
                "roadeval": {
                    "suite": request.suite,
                    "task": request.task,
                    "item_id": request.item_id,
                    "attempt": request.attempt,
                }
            }
        return kwargs

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """One answer or one error; transient errors are retried with backoff first."""
        key = request.key
        attempt_errors = 0
        while True:
            started = time.monotonic()
            try:
                async with self.limiter:
                    # Checked with a slot held: calls queued behind a failing one see the verdict.
                    if self.unreachable:
                        return self._error(
                            request, key, ErrorKind.UNREACHABLE, self._unreachable_message(), 0.0
                        )
                    self.calls += 1
                    response = await litellm.acompletion(**self._kwargs(request))
            except Exception as exc:
                latency = time.monotonic() - started
                kind = classify(exc)
                if kind == ErrorKind.CONNECTION:
                    self.consecutive_connection_errors += 1
                if (
                    kind in _RETRYABLE
                    and attempt_errors < self.spec.num_retries
                    and not self.unreachable
                ):
                    attempt_errors += 1
                    await asyncio.sleep(self._backoff(attempt_errors, exc))
                    continue
                return self._error(request, key, kind, f"{type(exc).__name__}: {exc}", latency)
            self.consecutive_connection_errors = 0
            return self._success(request, key, response, time.monotonic() - started)

    def _backoff(self, retry: int, exc: BaseException) -> float:
        hinted = retry_after_s(exc)
        if hinted is not None:
            return min(hinted, MAX_RETRY_WAIT_S)
        base = self.spec.retry_backoff_s * (2 ** (retry - 1))
        return min(base * (0.5 + random.random() / 2), MAX_RETRY_WAIT_S)

    def _unreachable_message(self) -> str:
        where = self.spec.api_base or "its provider"
        return f"model {self.spec.label} is unreachable at {where}; remaining calls skipped"

    def _success(
        self, request: ModelRequest, key: str, response: Any, latency: float
    ) -> ModelResponse:
        choice = response.choices[0]
        text = choice.message.content
        usage = getattr(response, "usage", None)
        if text is None or text == "":
            return self._error(request, key, ErrorKind.EMPTY, "the model returned no text", latency)
        return ModelResponse(
            request_key=key,
            model=self.spec.label,
            attempt=request.attempt,
            text=text,
            finish_reason=choice.finish_reason,
            tokens_in=getattr(usage, "prompt_tokens", None),
            tokens_out=getattr(usage, "completion_tokens", None),
            cost_usd=self._cost(response),
            latency_s=latency,
        )

    def _cost(self, response: Any) -> float | None:
        if self.spec.is_baseline:
            return 0.0
        hidden = getattr(response, "_hidden_params", {}) or {}
        cost = hidden.get("response_cost")
        if cost is not None:
            return float(cost)
        try:
            return float(litellm.completion_cost(completion_response=response))
        except Exception:
            return None

    def _error(
        self, request: ModelRequest, key: str, kind: str, message: str, latency: float
    ) -> ModelResponse:
        return ModelResponse(
            request_key=key,
            model=self.spec.label,
            attempt=request.attempt,
            text=None,
            latency_s=latency,
            error_kind=kind,
            error_message=message,
        )
