"""A caller's side of the run's authority (`calls.authority`), in a process other than the
driver's: a gate whose budget and limits are the authority's, and call counters passed on to the
driver's progress display."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from roadeval.tasks.calls.admission import Cost, request_cost, reserves_tokens
from roadeval.tasks.calls.authority import AuthorityLink, stop_reason_of
from roadeval.tasks.calls.budget import Reservation
from roadeval.tasks.calls.limits import OverLimit
from roadeval.tasks.calls.reachability import AuthFailed, Unreachable
from roadeval.tasks.calls.stats import CallStats
from roadeval.tasks.requests.model_spec import ModelSpec
from roadeval.tasks.requests.request import ModelRequest


class RemoteStats(CallStats):
    """A worker's call counters: passed on to the driver's (the progress display is there),
    not kept here too, where nobody reads them."""

    def __init__(self, link: AuthorityLink, model: str) -> None:
        super().__init__(model)
        self.link = link

    def record(self, *, ok: bool, cost_usd: float | None, rate_limited: int = 0) -> None:
        self.link.tally(self.model, ok=ok, cost_usd=cost_usd, rate_limited=rate_limited)


def _rate_headers(headers: Mapping[str, str] | None) -> dict[str, str] | None:
    """The headers the authority's gate reads (`limits.RateHeaders`), the rest left out."""
    if not headers:
        return None
    kept = {k: v for k, v in headers.items() if str(k).lower().startswith("x-ratelimit-")}
    return kept or None


@dataclass
class RemotePass:
    """A request the authority let through; `number` names it there."""

    number: int


class RemoteGate:
    """A gate whose budget and limits are the authority's: same use as `admission.Gate`."""

    def __init__(self, spec: ModelSpec, link: AuthorityLink, budgeted: bool) -> None:
        self.spec = spec
        self.link = link
        self.stop = link.stop
        self.budgeted = budgeted
        self.counts_tokens = reserves_tokens(budgeted, spec.tpm)

    def cost_of(self, request: ModelRequest) -> Cost:
        return request_cost(self.spec, request, budgeted=self.budgeted, tokens=self.counts_tokens)

    async def enter(self, request: ModelRequest) -> RemotePass | None:
        # An UnboundedCost stops the run (the gateway's stop, relayed to the authority).
        cost = self.cost_of(request)
        reply = await self.link.enter(self.spec.label, cost)
        if "stop" in reply:
            self.link.hear(stop_reason_of(reply["stop"]))
        if "over_limit" in reply:
            raise OverLimit(str(reply["over_limit"]))
        if "auth_failed" in reply:
            raise AuthFailed(str(reply["auth_failed"]))
        if "unreachable" in reply:
            raise Unreachable(str(reply["unreachable"]))
        return RemotePass(int(reply["pass"])) if "pass" in reply else None

    def leave(
        self,
        held: RemotePass,
        cost_usd: float | None,
        *,
        prompt_tokens: int | None = None,
        headers: Mapping[str, str] | None = None,
        retry_after_s: float | None = None,
        key_accepted: bool | None = None,
    ) -> None:
        self.link.send(
            {
                "op": "leave",
                "pass": held.number,
                "cost_usd": cost_usd,
                "prompt_tokens": prompt_tokens,
                "headers": _rate_headers(headers),
                "retry_after_s": retry_after_s,
                "key_accepted": key_accepted,
            }
        )

    def declare_unreachable(self, verdict: str) -> None:
        self.link.send({"op": "unreachable", "model": self.spec.label, "verdict": verdict})

    def reserve_now(self, request: ModelRequest) -> Reservation | None:
        raise RuntimeError("batch submissions are made by the driver, never a remote caller")

    def settle(self, reservation: Reservation | None, cost_usd: float | None) -> None:
        raise RuntimeError("batch submissions are made by the driver, never a remote caller")
