"""What a model call returned, as suites see it: the text, and everything about it worth keeping
(usage, cost, latency, the output tokens' log-probabilities, provider extras)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class TokenLogprob:
    """One output token, its log-probability, and the provider's top alternatives there."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "token": self.token,
            "logprob": self.logprob,
            "top": [{"token": t, "logprob": lp} for t, lp in self.top],
        }

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> TokenLogprob:
        top = tuple((entry["token"], float(entry["logprob"])) for entry in body.get("top", []))
        return cls(body["token"], float(body["logprob"]), top)


@dataclass(frozen=True)
class ModelOutput:
    """One answer. `logprobs` is None when the provider gave none (never invented)."""

    text: str
    finish_reason: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    latency_s: float = 0.0
    logprobs: tuple[TokenLogprob, ...] | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    def top_logprobs(self, position: int = 0) -> dict[str, float] | None:
        """{token: logprob} of the alternatives at an output position (the first by default),
        the chosen token included; None when there are no log-probabilities there."""
        if not self.logprobs or position >= len(self.logprobs):
            return None
        token = self.logprobs[position]
        return {**dict(token.top), token.token: token.logprob}

    def to_json(self) -> dict[str, Any]:
        body = asdict(self)
        body["logprobs"] = None if self.logprobs is None else [t.to_json() for t in self.logprobs]
        return body

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> ModelOutput:
        logprobs = body.get("logprobs")
        return cls(
            text=body["text"],
            finish_reason=body.get("finish_reason"),
            tokens_in=body.get("tokens_in"),
            tokens_out=body.get("tokens_out"),
            cost_usd=body.get("cost_usd"),
            latency_s=float(body.get("latency_s") or 0.0),
            logprobs=None
            if logprobs is None
            else tuple(TokenLogprob.from_json(entry) for entry in logprobs),
            extras=dict(body.get("extras") or {}),
        )
