"""What a request waits for before it is sent, in order: the run's budget holds its worst-case
cost, then the model's limits admit it (a concurrency slot, requests and tokens per minute). When
it ends, the budget settles at its real cost and the limits learn what the provider counted.

A `Gate` lives with the authority for its model: the driver, or the process a remote caller asks
through `tasks.calls.authority`; every caller of the model in the run passes the same one."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from roadeval.tasks.calls.budget import (
    OUT_OF_BUDGET,
    OUT_OF_BUDGET_EXIT,
    Budget,
    BudgetExhausted,
    Reservation,
)
from roadeval.tasks.calls.limits import Admission, CallLimiter
from roadeval.tasks.calls.reachability import AuthFailed, KeyRefusals, Unreachable
from roadeval.tasks.calls.stopping import StopReason, StopSignal
from roadeval.tasks.requests.model_spec import CallMode, ModelSpec
from roadeval.tasks.requests.pricing import max_output_tokens, prices_for
from roadeval.tasks.requests.request import ModelRequest

_BUDGET_POLL_S = 0.05


def reserves_tokens(budgeted: bool, tpm: float | None) -> bool:
    """The one rule of what a request reserves besides its slot: its tokens, when the run has a
    budget (the worst case is priced by tokens) or the model a tpm limit."""
    return budgeted or tpm is not None


class Admitting(Protocol):
    """What the gateway asks of a gate: this process's own (`Gate`), or the authority's
    (`tasks.calls.remote_gate.RemoteGate`) for a caller in another process."""

    @property
    def counts_tokens(self) -> bool:
        """Whether requests reserve tokens (a budget or a tpm limit): the plan counts them."""
        ...

    async def enter(self, request: ModelRequest) -> Any | None:
        """A pass for the request, or None when the run stops first; raises OverLimit for a
        request that can never fit, AuthFailed once the model's key is declared refused."""
        ...

    def leave(
        self,
        held: Any,
        cost_usd: float | None,
        *,
        prompt_tokens: int | None = None,
        headers: Mapping[str, str] | None = None,
        retry_after_s: float | None = None,
        key_accepted: bool | None = None,
    ) -> None:
        """The try ended at `cost_usd`; `key_accepted` says whether the provider accepted the
        model's key (True: it answered; False: it refused it; None: the try did not say)."""
        ...

    def declare_unreachable(self, verdict: str) -> None:
        """A caller found the model's endpoint gone: every caller of the run is told (their
        next request is refused with `Unreachable`)."""
        ...

    def reserve_now(self, request: ModelRequest) -> Reservation | None: ...

    def settle(self, reservation: Reservation | None, cost_usd: float | None) -> None: ...


class UnboundedCost(ValueError):
    """A request whose worst case cannot be known (unpriced model, no bound on its output), in a
    run with a budget: it cannot be reserved, so it is not sent."""


@dataclass(frozen=True)
class Cost:
    """What a request reserves: tokens for the limits, USD for the budget (None: no budget)."""

    tokens: int
    usd: float | None
    prompt_tokens: int | None


@dataclass
class Pass:
    """A request let through the gate, holding what it reserved until it leaves."""

    admission: Admission
    reservation: Reservation | None
    cost: Cost


def budget_problems(specs: Sequence[ModelSpec]) -> list[str]:
    """Why a run with a budget could not reserve some model's calls (no price known): checked
    before any call, so a capped run never starts what it cannot bound."""
    problems = []
    for spec in specs:
        if not spec.is_baseline and prices_for(spec, batch=spec.mode is CallMode.BATCH) is None:
            problems.append(
                f"model {spec.label} has no price (in the panel or LiteLLM's map), so a run "
                "with a budget cannot reserve its calls: give its input_cost_per_token and "
                "output_cost_per_token"
            )
    return problems


def request_cost(spec: ModelSpec, request: ModelRequest, *, budgeted: bool, tokens: bool) -> Cost:
    """The most `request` can cost: its planned input tokens (counted now for requests made
    after the plan, such as the judge's) and every output token it may ask for. Tokens are
    counted only when something needs them (`tokens`: a tpm limit or a budget)."""
    if not (tokens or budgeted) or spec.is_baseline:
        return Cost(0, 0.0 if budgeted else None, request.tokens_in_est)
    tokens_in = request.tokens_in_est
    if tokens_in is None:
        from roadeval.tasks.requests.tokens import input_tokens

        tokens_in = input_tokens(spec.model, request.messages)
    max_out = max_output_tokens(spec, request.params)
    usd = None
    if budgeted:
        prices = prices_for(spec, batch=spec.mode is CallMode.BATCH)
        if prices is None:
            raise UnboundedCost(
                f"model {spec.label} has no price (in the panel or LiteLLM's map), so a run "
                "with a budget cannot reserve its calls: give its input_cost_per_token and "
                "output_cost_per_token"
            )
        if max_out is None:
            raise UnboundedCost(
                f"model {spec.label}: a request has no max_tokens and the price map gives no "
                "max_output_tokens, so its worst case is unbounded: set params.max_tokens"
            )
        usd = tokens_in * prices.input + max_out * prices.output
    return Cost(tokens_in + (max_out or 0), usd, tokens_in)


class Gate:
    """One model's budget reservations and limits, for every caller of that model in the run."""

    def __init__(self, spec: ModelSpec, stop: StopSignal, budget: Budget | None = None) -> None:
        self.spec = spec
        self.stop = stop
        self.budget = budget if budget is not None and budget.capped else None
        self.limiter = CallLimiter(spec.max_concurrency, spec.rpm, spec.tpm)
        # Whether the model's key is refused, counted over every caller of the model in the run.
        self.keys = KeyRefusals(spec)
        # A caller's verdict that the model's endpoint is gone (`reachability`), for all of them.
        self.unreachable: str | None = None

    def declare_unreachable(self, verdict: str) -> None:
        if self.unreachable is None:
            self.unreachable = verdict

    @property
    def counts_tokens(self) -> bool:
        return reserves_tokens(self.budget is not None, self.limiter.tpm)

    @property
    def in_flight(self) -> int:
        """Requests let through and not yet ended, from every caller of the model."""
        return self.limiter.in_flight

    def cost_of(self, request: ModelRequest) -> Cost:
        return request_cost(
            self.spec, request, budgeted=self.budget is not None, tokens=self.counts_tokens
        )

    async def enter(self, request: ModelRequest) -> Pass | None:
        """Reserve, then wait for the limits; None when the run stops first (the budget's own
        stop included, which it requests here)."""
        return await self.admit(self.cost_of(request))

    async def admit(self, cost: Cost) -> Pass | None:
        """`enter` for a cost already worked out (by a caller in another process)."""
        self._check_key()
        reservation = None
        if self.budget is not None:
            reservation = await self._reserve(cost)
            if reservation is None:
                return None
        try:
            admission = await self.limiter.acquire(
                cost.tokens,
                lambda: self.stop.requested or self.keys.failed or self.unreachable is not None,
            )
        except BaseException:
            self._settle(reservation, 0.0)
            raise
        if admission is not None and (
            self.keys.failed or self.unreachable is not None or self.stop.requested
        ):
            # Declared, or the run stopped, while this request waited for its slot (or as the
            # answer whose slot it takes could not be kept): it is not sent either.
            self.limiter.release(admission)
            admission = None
        if admission is None:
            self._settle(reservation, 0.0)
            self._check_key()
            return None
        return Pass(admission, reservation, cost)

    def _check_key(self) -> None:
        if self.keys.verdict is not None:
            raise AuthFailed(self.keys.verdict)
        if self.unreachable is not None:
            raise Unreachable(self.unreachable)

    def reserve_now(self, request: ModelRequest) -> Reservation | None:
        """Reserve without waiting (a batch about to be submitted): None when the run has no
        budget; BudgetExhausted, with the run's stop requested, when it would cross it."""
        if self.budget is None:
            return None
        cost = self.cost_of(request)
        assert cost.usd is not None
        try:
            reservation = self.budget.try_reserve(cost.usd)
            if reservation is None:  # only requests in flight stand in the way: not for a batch
                raise BudgetExhausted(self.budget.limit_usd or 0.0, self.budget.spent_usd, cost.usd)
        except BudgetExhausted as exc:
            self._stop_for(exc)
            raise
        return reservation

    def _stop_for(self, exc: BudgetExhausted) -> None:
        self.stop.request(StopReason(str(exc), OUT_OF_BUDGET_EXIT, OUT_OF_BUDGET, drain=True))

    async def _reserve(self, cost: Cost) -> Reservation | None:
        assert self.budget is not None and cost.usd is not None
        while True:
            if self.stop.requested:
                return None
            try:
                reservation = self.budget.try_reserve(cost.usd)
            except BudgetExhausted as exc:
                self._stop_for(exc)
                return None
            if reservation is not None:
                return reservation
            # Over the cap only with requests in flight: they may settle for less.
            await asyncio.sleep(_BUDGET_POLL_S)

    def leave(
        self,
        held: Pass,
        cost_usd: float | None,
        *,
        prompt_tokens: int | None = None,
        headers: Mapping[str, str] | None = None,
        retry_after_s: float | None = None,
        key_accepted: bool | None = None,
    ) -> None:
        """The try ended at `cost_usd` (None: unknown, e.g. a timeout a provider may bill);
        `key_accepted`: whether the provider accepted the key (None: the try did not say)."""
        self.keys.note(key_accepted)
        self.limiter.release(
            held.admission,
            prompt_tokens=prompt_tokens,
            prompt_estimate=held.cost.prompt_tokens,
            headers=headers,
            retry_after_s=retry_after_s,
        )
        self._settle(held.reservation, cost_usd)

    def settle(self, reservation: Reservation | None, cost_usd: float | None) -> None:
        """A reservation made with `reserve_now` ended at `cost_usd`."""
        self._settle(reservation, cost_usd)

    def _settle(self, reservation: Reservation | None, cost_usd: float | None) -> None:
        if self.budget is not None and reservation is not None:
            self.budget.settle(reservation, cost_usd)
