"""The one call path to every model: LiteLLM's async API behind limits, retries and cost accounting.

All calls of a process run on one background event loop, so a model's limits hold across every
shard that calls it, whichever thread the shard runs in. Every HTTP try is returned as its own
record, so the store says how many requests were really sent.
"""

from __future__ import annotations

import asyncio
import os
import random
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from roadeval.benchmarks.generation import GenerationSettings, effective_params
from roadeval.benchmarks.item import Item
from roadeval.benchmarks.messages import Message, encode_messages, has_images
from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.registry import BaselineCall
from roadeval.tasks.calls.admission import Admitting, Gate, UnboundedCost
from roadeval.tasks.calls.budget import Budget, Reservation
from roadeval.tasks.calls.errors import RETRYABLE, classify, retry_after_s
from roadeval.tasks.calls.limits import OverLimit
from roadeval.tasks.calls.litellm_setup import completion_task, ready_litellm
from roadeval.tasks.calls.reachability import (
    NO_KEY,
    AuthFailed,
    Reachability,
    Unreachable,
    key_source,
)
from roadeval.tasks.calls.secrets import Redactor
from roadeval.tasks.calls.stats import CallStats
from roadeval.tasks.calls.stopping import StopReason, StopSignal
from roadeval.tasks.requests import freshness
from roadeval.tasks.requests.model_spec import MissingKeyError, ModelSpec
from roadeval.tasks.requests.pricing import LITELLM, cost_of_usage, prices_for
from roadeval.tasks.requests.provider_output import read_output
from roadeval.tasks.requests.request import ErrorKind, ModelCall, ModelRequest, normalize_api_base

T = TypeVar("T")

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
            _LOOP = _Loop()
    return _LOOP.run(coro)


@dataclass
class CallOutcome:
    """Every HTTP try of one request, in order; `stopped` when the run's stop cut it short."""

    tries: list[ModelCall] = field(default_factory=list)
    stopped: bool = False

    @property
    def final(self) -> ModelCall | None:
        return self.tries[-1] if self.tries else None


class ModelClient:
    """Calls one model. Limits, retries, reachability, refused keys, deadlines and cost live
    here alone (limits, the budget and refused keys counted by the model's gate)."""

    def __init__(
        self,
        spec: ModelSpec,
        *,
        stop: StopSignal | None = None,
        redact: Redactor | None = None,
        run_id: str | None = None,
        budget: Budget | None = None,
        gate: Admitting | None = None,
        fresh_from: datetime | None = None,
    ) -> None:
        self.spec = spec
        # The run's horizon (`flows.rerun.continuation`); None: its run id's start.
        self.fresh_from = fresh_from
        self.budget = budget
        self.api_base = normalize_api_base(spec.api_base)
        self.stop = stop or StopSignal()
        # This process's own gate, unless the run's authority holds the model's (`gate`).
        self.gate: Admitting = gate if gate is not None else Gate(spec, self.stop, budget)
        # Requests being asked at once (claimed, called, kept): no more than can be in flight,
        # so that a run claims only what it is about to send and leaves the rest to others.
        self.asking = asyncio.Semaphore(spec.max_concurrency)
        self.reachability = Reachability(spec.unreachable_after_s)
        self.redact = redact or Redactor.from_environment([spec.api_key_env or ""])
        self.run_id = run_id
        self.stats = CallStats(spec.label)
        self._params_by_settings: dict[GenerationSettings, dict[str, Any]] = {}
        self._priced_here: bool | None = None

    @property
    def fresh_since(self) -> datetime | None:
        """The oldest a stored answer of this model may have been bought to be reused in this
        run (its `reuse_for` back from the run's horizon, else its start; from now for a client
        outside a run); None: any may."""
        started = self.fresh_from
        if started is None and self.run_id:
            started = freshness.run_start(self.run_id)
        return freshness.fresh_since(self.spec.reuse_for, started or freshness.now())

    def request(
        self,
        messages: list[Message],
        attempt: int = 1,
        *,
        item: Item | None = None,
        settings: GenerationSettings | None = None,
        role: str = "answer",
        tokens_in_est: int | None = None,
        sample: int = 1,
        messages_json: str | None = None,
    ) -> ModelRequest:
        """The request this model is sent: the messages at an attempt (of one sample), with
        the protocol's settings merged under the panel's params (see `benchmarks.generation`)."""
        return ModelRequest(
            model=self.spec.model,
            params=self._params(settings or GenerationSettings()),
            messages=messages,
            attempt=attempt,
            api_base=self.api_base,
            sample=sample,
            role=role,
            item=item,
            tokens_in_est=tokens_in_est,
            messages_json=messages_json,
        )

    def _params(self, settings: GenerationSettings) -> dict[str, Any]:
        # One dict per protocol setting, shared by every request that sends it (never mutated):
        # a large run holds hundreds of thousands of requests.
        params = self._params_by_settings.get(settings)
        if params is None:
            params = effective_params(settings, self.spec.params)
            self._params_by_settings[settings] = params
        return params

    def reserve_for(self, request: ModelRequest) -> Reservation | None:
        """Hold the request's worst-case cost against the run's budget now (a batch about to be
        submitted); None when the run has no budget; BudgetExhausted when it would cross it."""
        return self.gate.reserve_now(request)

    def settle(self, reservation: Reservation | None, cost_usd: float | None) -> None:
        """A `reserve_for` reservation ended at `cost_usd` (None: unknown, worst case kept)."""
        self.gate.settle(reservation, cost_usd)

    def litellm_kwargs(self, request: ModelRequest, messages: list[Message]) -> dict[str, Any]:
        """The keyword arguments of `litellm.acompletion` for `request` (messages as sent)."""
        spec = self.spec
        kwargs: dict[str, Any] = {
            "model": spec.model,
            "messages": messages,
            "timeout": spec.timeout_s,
            # Retries are ours, so that every HTTP try is counted and Retry-After is honoured;
            # max_retries stops the OpenAI client's own hidden retries.
            "num_retries": 0,
            "max_retries": 0,
            **request.params,
        }
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if spec.api_key_env:
            key = os.environ.get(spec.api_key_env)
            if not key:
                raise MissingKeyError(spec.missing_key or spec.api_key_env)
            kwargs["api_key"] = key
        elif self.api_base and not spec.is_baseline:
            kwargs["api_key"] = NO_KEY
        # Priced here (`priced_here`), but passed on: a LiteLLM callback, if any, prices with them.
        if spec.input_cost_per_token is not None:
            kwargs["input_cost_per_token"] = spec.input_cost_per_token
        if spec.output_cost_per_token is not None:
            kwargs["output_cost_per_token"] = spec.output_cost_per_token
        if spec.is_baseline:
            if request.item is None:
                raise ValueError(f"baseline {spec.label}: a request without its item")
            # The baseline answers from the item as its prompt shows it, gold answer withheld.
            call = BaselineCall.blind(request.item, spec.seed, request.attempt, request.key)
            kwargs["metadata"] = {"roadeval": {"call": call}}
        return kwargs

    async def complete(self, request: ModelRequest) -> CallOutcome:
        """One answer or one error, after retrying transient errors with backoff; each HTTP try
        is a record of its own. No try starts once the run's stop is requested."""
        outcome = await self._complete(request)
        final = outcome.final
        if final is not None and final.sent:
            limited = sum(t.error_kind == ErrorKind.RATE_LIMIT for t in outcome.tries)
            cost = sum(t.cost_usd or 0.0 for t in outcome.tries)
            self.stats.record(ok=final.ok, cost_usd=cost, rate_limited=limited)
        return outcome

    async def _complete(self, request: ModelRequest) -> CallOutcome:
        outcome = CallOutcome()
        retries = 0
        # Images become data URLs now, once for every try, and off the loop (base64 is CPU).
        sent = request.messages
        if has_images(sent):
            sent = await asyncio.to_thread(encode_messages, sent)
        while True:
            if self.stop.requested:
                outcome.stopped = True
                return outcome
            try:
                held = await self.gate.enter(request)
            except OverLimit as over:
                outcome.tries.append(self._error(request, 0, ErrorKind.OVER_LIMIT, str(over), 0.0))
                return outcome
            except AuthFailed as refused:
                # The model's key was refused too often (over the whole run): not sent.
                if self.stop.requested:
                    outcome.stopped = True
                else:
                    kind = ErrorKind.AUTH_FAILED
                    outcome.tries.append(self._error(request, 0, kind, str(refused), 0.0))
                return outcome
            except Unreachable as gone:
                # Another caller of the run (maybe on another node) found the endpoint gone.
                if self.reachability.verdict is None:
                    self.reachability.verdict = str(gone)
                outcome.tries.append(self._unreachable(request))
                return outcome
            except UnboundedCost as unbounded:
                # A panel the budget cannot cover: every request would fail alike.
                self.stop.request(StopReason(str(unbounded), 2, "failed"))
                outcome.stopped = True
                return outcome
            if held is None:
                outcome.stopped = True
                return outcome
            # Checked with a slot held: calls queued behind a failing one see the verdict.
            if self.reachability.unreachable or self.stop.requested:
                self.gate.leave(held, 0.0)
                if self.stop.requested:
                    outcome.stopped = True
                else:
                    outcome.tries.append(self._unreachable(request))
                return outcome
            response, exc = await self._try_through(held, request, sent, retries + 1)
            outcome.tries.append(response)
            if response.ok:
                self.reachability.succeeded()
                return outcome
            kind = response.error_kind or ErrorKind.OTHER
            if kind == ErrorKind.INTERRUPTED:
                outcome.stopped = True
                return outcome
            self.reachability.failed(kind)
            if kind in RETRYABLE and retries < self.spec.num_retries:
                retries += 1
                await self._sleep_unless_stopped(self._backoff(retries, exc))
                continue
            self.reachability.gave_up(kind)
            if self.reachability.verdict is not None:
                self.gate.declare_unreachable(self.reachability.verdict)
            return outcome

    async def _try_through(
        self, held: Any, request: ModelRequest, messages: list[Message], number: int
    ) -> tuple[ModelCall, BaseException | None]:
        """One try, then out of the gate with what it cost and what the provider said."""
        response: ModelCall | None = None
        exc: BaseException | None = None
        headers: dict[str, str] | None = None
        try:
            response, exc, headers = await self._try(request, messages, number)
        finally:
            if response is None:  # cancelled: nothing is known of what it may cost
                self.gate.leave(held, None)
            else:
                output = response.output
                self.gate.leave(
                    held,
                    _try_cost(response),
                    prompt_tokens=output.tokens_in if output is not None else None,
                    headers=headers,
                    retry_after_s=retry_after_s(exc) if exc is not None else None,
                    key_accepted=_key_accepted(response),
                )
        return response, exc

    async def _try(
        self, request: ModelRequest, messages: list[Message], number: int
    ) -> tuple[ModelCall, BaseException | None, dict[str, str] | None]:
        """One HTTP request under the whole-call deadline `timeout_s` (a server trickling bytes
        cannot stretch it) and the run's stop (which cancels it after the grace)."""
        started = time.monotonic()
        # LiteLLM only now, at the process's first request (see `litellm_setup`).
        litellm = ready_litellm()
        call = completion_task(
            litellm, self.litellm_kwargs(request, messages), priced_by_caller=self.priced_here
        )
        self.stop.track(call)
        try:
            await asyncio.wait({call}, timeout=self.spec.timeout_s)
        except asyncio.CancelledError:
            call.cancel()  # whoever awaited this request gave up on it: so does the request
            raise
        latency = time.monotonic() - started
        if not call.done():
            call.cancel()
            await asyncio.gather(call, return_exceptions=True)
            message = f"no complete reply within timeout_s={self.spec.timeout_s:g} s"
            return self._error(request, number, ErrorKind.TIMEOUT, message, latency), None, None
        exc = None if call.cancelled() else call.exception()
        if exc is None and not call.cancelled():
            result = call.result()
            headers = (getattr(result, "_hidden_params", None) or {}).get("headers")
            return self._success(request, number, result, latency), None, headers
        if self.stop.aborted:
            message = "cancelled in flight: the run was stopped"
            error = self._error(request, number, ErrorKind.INTERRUPTED, message, latency)
            return error, exc, None
        assert exc is not None
        kind = classify(exc)
        message = f"{type(exc).__name__}: {exc}"
        if kind == ErrorKind.AUTH:
            # Which key was refused, by its variable: what the run's report shows to fix.
            message = f"{message} ({key_source(self.spec)})"
        error = self._error(request, number, kind, message, latency)
        return error, exc, _error_headers(exc)

    async def _sleep_unless_stopped(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not self.stop.requested and (left := deadline - time.monotonic()) > 0:
            await asyncio.sleep(min(left, 0.2))

    def _backoff(self, retry: int, exc: BaseException | None) -> float:
        hinted = retry_after_s(exc) if exc is not None else None
        if hinted is not None:
            return min(hinted, MAX_RETRY_WAIT_S)
        base = self.spec.retry_backoff_s * (2 ** (retry - 1))
        return min(base * (0.5 + random.random() / 2), MAX_RETRY_WAIT_S)

    def _unreachable(self, request: ModelRequest) -> ModelCall:
        where = self.api_base or "its provider"
        message = (
            f"model {self.spec.label} is unreachable at {where} "
            f"({self.reachability.verdict}); remaining calls skipped"
        )
        return self._error(request, 0, ErrorKind.UNREACHABLE, message, 0.0)

    def _success(
        self, request: ModelRequest, number: int, response: Any, latency: float
    ) -> ModelCall:
        output = read_output(response, latency, self._cost(response), self.redact)
        if output is None:
            message = "the model returned no text"
            return self._error(request, number, ErrorKind.EMPTY, message, latency)
        return self.record(request.key, request.attempt, request.role, number, latency, output)

    @property
    def priced_here(self) -> bool:
        """Whether this model's calls are priced from their usage here: at the panel's prices,
        at none (an unpriced model), or free (a baseline). A model priced by LiteLLM's map keeps
        LiteLLM's own figure, which knows that provider's cached-token and tiered rates. Looked
        up at the first call: the map is LiteLLM's, imported only by a process that calls."""
        if self._priced_here is None:
            prices = prices_for(self.spec)
            self._priced_here = prices is None or prices.source != LITELLM
        return self._priced_here

    def _cost(self, response: Any) -> float | None:
        """The call's price: from its usage when `priced_here`, else LiteLLM's figure (run once
        per call, as it built the response), or the usage at the map's prices if it had none."""
        if self.spec.is_baseline:
            return 0.0
        if not self.priced_here:
            hidden = getattr(response, "_hidden_params", {}) or {}
            cost = hidden.get("response_cost")
            if cost is not None:
                return float(cost)
        usage = getattr(response, "usage", None)
        return cost_of_usage(
            self.spec,
            getattr(usage, "prompt_tokens", None),
            getattr(usage, "completion_tokens", None),
        )

    def _error(
        self, request: ModelRequest, number: int, kind: str, message: str, latency: float
    ) -> ModelCall:
        return self.record(
            request.key, request.attempt, request.role, number, latency, error=(kind, message)
        )

    def record(
        self,
        request_key: str,
        attempt: int,
        role: str,
        try_number: int,
        latency: float,
        output: ModelOutput | None = None,
        *,
        error: tuple[str, str] | None = None,
        origin_run_id: str | None = None,
    ) -> ModelCall:
        """The record of one try of a request to this model, online or in a batch: its answer,
        or its error `(kind, message)` with the message redacted. The one place calls are made.
        A failed request costs nothing we know of; one that timed out or was cut off may still
        be billed, which its `may_be_billed` records rather than guesses at."""
        kind, message = error if error is not None else (None, None)
        return ModelCall(
            request_key=request_key,
            model=self.spec.label,
            attempt=attempt,
            output=output,
            latency_s=latency,
            error_kind=kind,
            error_message=self.redact(message) if message is not None else None,
            try_number=try_number,
            api_base=self.api_base,
            origin_run_id=origin_run_id or self.run_id,
            role=role,
            answered_at=freshness.now() if output is not None else None,
        )


def _try_cost(call: ModelCall) -> float | None:
    """What one try cost: its answer's price; nothing for a refusal; unknown (None) for a try
    the provider may bill although no answer came back (a timeout, a cut-off reply)."""
    if call.ok:
        return call.cost_usd
    return None if call.may_be_billed else 0.0


def _key_accepted(call: ModelCall) -> bool | None:
    """What one try said of the model's key: accepted (the provider answered, if only with
    nothing), refused (`auth`), or nothing (any other failure)."""
    if call.ok or call.error_kind == ErrorKind.EMPTY:
        return True
    return False if call.error_kind == ErrorKind.AUTH else None


def _error_headers(exc: BaseException) -> dict[str, str] | None:
    """The provider's response headers on a failed call (a 429's rate-limit headers)."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        return {str(k).lower(): str(v) for k, v in headers.items()}
    except Exception:
        return None
