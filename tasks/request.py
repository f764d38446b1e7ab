"""Model requests and responses as records, and the request key the response cache is keyed by."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from roadeval.benchmarks.suite import Message


@dataclass(frozen=True)
class ModelRequest:
    """Exactly what is sent: the model, its decoding parameters, the messages and the attempt."""

    model: str
    params: dict[str, Any]
    messages: list[Message]
    attempt: int = 1
    # Routing only (which item this is for); not part of the request key.
    suite: str = ""
    task: str = ""
    item_id: str = ""

    @cached_property
    def key(self) -> str:
        # Cached: hashing the messages (images inline) is the costly part of a cache look-up.
        return request_key(self.model, self.params, self.messages, self.attempt)


def request_key(model: str, params: dict[str, Any], messages: list[Message], attempt: int) -> str:
    """sha256 over the model, its parameters, the exact messages (media bytes inside) and attempt.

    The attempt is part of the key because a re-ask sends the same messages again and must not be
    answered from the cache by the reply it is re-asking about.
    """
    body = {"model": model, "params": params, "messages": messages, "attempt": attempt}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


class ErrorKind:
    """Why a call produced no answer. An error is never scored as a wrong answer."""

    RATE_LIMIT = "rate_limit"
    SERVER = "server_error"
    CONNECTION = "connection"
    TIMEOUT = "timeout"
    BAD_REQUEST = "bad_request"
    AUTH = "auth"
    EMPTY = "empty_response"
    UNREACHABLE = "model_unreachable"
    OTHER = "other"


@dataclass(frozen=True)
class ModelResponse:
    """One call's outcome: the raw text or the error, with usage, cost and latency."""

    request_key: str
    model: str
    attempt: int
    text: str | None
    finish_reason: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    latency_s: float = 0.0
    error_kind: str | None = None
    error_message: str | None = None
    cached: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error_kind is None

    def to_cache(self) -> bytes:
        body = {
            "request_key": self.request_key,
            "model": self.model,
            "attempt": self.attempt,
            "text": self.text,
            "finish_reason": self.finish_reason,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost_usd": self.cost_usd,
            "latency_s": self.latency_s,
        }
        return json.dumps(body, ensure_ascii=False).encode()

    @classmethod
    def from_cache(cls, data: bytes) -> ModelResponse:
        body = json.loads(data)
        return cls(**body, cached=True)
