"""Model requests and responses as records, and the request key the response cache is keyed by."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.messages import key_default
from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.suite import Message


@dataclass(frozen=True)
class ModelRequest:
    """Exactly what is sent: the model, its endpoint, decoding parameters, messages and attempt."""

    model: str
    params: dict[str, Any]
    messages: list[Message]
    attempt: int = 1
    api_base: str | None = None
    # Which independent sample of the prompt (the panel's `samples:`): part of the key from 2.
    sample: int = 1
    # Routing only (who asks, for which item); not part of the request key.
    role: str = "answer"
    item: Item | None = field(default=None, compare=False, repr=False)
    # Input tokens (text and images) as the provider will count them, when the plan counted
    # them: what the limits and the budget reserve before the request is sent.
    tokens_in_est: int | None = field(default=None, compare=False, repr=False)
    # `messages` as the key encodes them, when the caller has them encoded (a prompt shared by
    # every model and attempt is encoded once, not once per request).
    messages_json: str | None = field(default=None, compare=False, repr=False)

    @property
    def suite(self) -> str:
        return self.item.suite if self.item is not None else ""

    @property
    def task(self) -> str:
        return self.item.task if self.item is not None else ""

    @property
    def item_id(self) -> str:
        return self.item.item_id if self.item is not None else ""

    @property
    def key(self) -> str:
        """The request key (`request_key`), computed once: prompts run to kilobytes."""
        # Kept in the instance's own dict, as functools.cached_property keeps it, but without
        # its lock: Python 3.11's is one lock for every instance, and the plan threads queued
        # on it behind each other's hashing.
        found = self.__dict__.get("_key")
        if found is None:
            found = self.__dict__["_key"] = request_key(
                self.model,
                self.params,
                self.messages,
                self.attempt,
                self.api_base,
                self.sample,
                messages_json=self.messages_json,
            )
        return found


def normalize_api_base(api_base: str | None) -> str | None:
    """One spelling per endpoint: `http://h:8000/v1/` and `http://h:8000/v1` are the same server."""
    return api_base.rstrip("/") if api_base else None


def _key_json(value: Any) -> str:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=key_default
    )


def messages_key_json(messages: Sequence[Message]) -> str:
    """The messages as the request key (and the prompt hash) encode them."""
    return _key_json(list(messages))


# Encoded params by the dict's identity (the dict kept, so its id is not reused while cached):
# requests of one protocol setting share one params dict, never mutated (`ModelClient`), and
# a large plan computes hundreds of thousands of keys.
_PARAMS_JSON: dict[int, tuple[dict[str, Any], str]] = {}
_PARAMS_JSON_MAX = 4096


def _params_json(params: dict[str, Any]) -> str:
    found = _PARAMS_JSON.get(id(params))
    if found is not None and found[0] is params:
        return found[1]
    text = _key_json(params)
    if len(_PARAMS_JSON) >= _PARAMS_JSON_MAX:
        _PARAMS_JSON.clear()
    _PARAMS_JSON[id(params)] = (params, text)
    return text


@functools.lru_cache(maxsize=4096)
def _key_frame(
    model: str, endpoint: str | None, attempt: int, sample: int, params_json: str
) -> tuple[str, str]:
    """The key's text before and after its messages, the same for every prompt."""
    head = []
    if endpoint:
        head.append('"api_base":' + _key_json(endpoint))
    head.append(f'"attempt":{_key_json(attempt)}')
    tail = ['"model":' + _key_json(model), '"params":' + params_json]
    if sample != 1:
        tail.append(f'"sample":{_key_json(sample)}')
    return "{" + ",".join(head) + ',"messages":', "," + ",".join(tail) + "}"


def request_key(
    model: str,
    params: dict[str, Any],
    messages: list[Message],
    attempt: int,
    api_base: str | None = None,
    sample: int = 1,
    *,
    messages_json: str | None = None,
) -> str:
    """sha256 over the model, its endpoint, its parameters, the exact messages (each image by
    the sha256 of the bytes sent) and the attempt: everything that decides an answer, and
    nothing else (not the panel's label for the model, so renaming a model does not pay for it
    again; not where an image file lives).

    The attempt is part of the key because a re-ask sends the same messages again and must not be
    answered from the cache by the reply it is re-asking about; so is the sample (from the
    second on), because independent samples of one prompt must not share an answer. The endpoint
    enters only when set, so a provider's default endpoint keeps the keys it always had.

    The text hashed is `json.dumps` of {model, params, messages, attempt[, sample][, api_base]}
    with sorted keys, compact: written out member by member here, so that `messages_json`
    (`messages_key_json(messages)`, for a prompt many requests share) is spliced in as it is.
    """
    head, tail = _key_frame(
        model, normalize_api_base(api_base), attempt, sample, _params_json(params)
    )
    encoded = messages_json if messages_json is not None else messages_key_json(messages)
    text = head + encoded + tail
    return hashlib.sha256(text.encode()).hexdigest()


def sample_keys(request: ModelRequest, samples: Iterable[int]) -> Iterator[str]:
    """The request key of `request` asked as each of `samples` (`request_key` with only the
    sample changed): the text before the sample, the prompt included, is hashed once, so a
    hundred samples of a long prompt cost one pass over it, not a hundred."""
    endpoint = normalize_api_base(request.api_base)
    params = _params_json(request.params)
    head, _ = _key_frame(request.model, endpoint, request.attempt, 1, params)
    encoded = request.messages_json
    if encoded is None:
        encoded = messages_key_json(request.messages)
    before = hashlib.sha256((head + encoded).encode())
    for sample in samples:
        _, tail = _key_frame(request.model, endpoint, request.attempt, sample, params)
        key = before.copy()
        key.update(tail.encode())
        yield key.hexdigest()


class ErrorKind:
    """Why a request produced no answer. An error is never scored as a wrong answer."""

    RATE_LIMIT = "rate_limit"
    SERVER = "server_error"
    CONNECTION = "connection"  # no connection at all: refused, unknown host
    DROPPED = "connection_dropped"  # connected, then the server hung up or reset
    TRUNCATED = "truncated_reply"  # a reply cut short: fewer bytes than announced, broken JSON
    TIMEOUT = "timeout"
    BAD_REQUEST = "bad_request"
    AUTH = "auth"
    EMPTY = "empty_response"
    UNREACHABLE = "model_unreachable"  # not sent: the model was declared unreachable
    AUTH_FAILED = "auth_failed"  # not sent: the model's key was refused too often (see `auth`)
    OVER_LIMIT = "over_limit"  # not sent: it needs more tokens than the model's whole tpm
    INTERRUPTED = "interrupted"  # cancelled in flight because the run was stopped
    NOT_STORED = "not_stored"  # not sent: a rescore asks no model, and the store has no answer
    OTHER = "other"


# Kinds after which a request was sent and may have been billed although no answer came back.
MAY_BE_BILLED = {ErrorKind.TIMEOUT, ErrorKind.INTERRUPTED, ErrorKind.DROPPED, ErrorKind.TRUNCATED}


class CorruptCacheEntry(ValueError):
    """A stored response that cannot be read back; treated as a miss and reported."""


@dataclass(frozen=True)
class ModelCall:
    """One HTTP request's outcome (the model's output, or the error), or an answer reused from
    the store (`cached`), which cost this run nothing."""

    request_key: str
    model: str
    attempt: int
    output: ModelOutput | None = None
    latency_s: float = 0.0
    error_kind: str | None = None
    error_message: str | None = None
    cached: bool = False
    # Which HTTP try of this request it was (1 = first); 0 when nothing was sent.
    try_number: int = 1
    api_base: str | None = None
    # The run that paid for this answer (this run, unless it was reused).
    origin_run_id: str | None = None
    # "answer" for the model under test, "judge" for a model scoring answers.
    role: str = "answer"
    # When the answer was bought (None: an error, or an answer kept before answers had a time):
    # what decides whether a later run may still reuse it (`freshness`).
    answered_at: datetime | None = None
    # Asked (again) because the answer the store held was older than the model's `reuse_for`.
    replaced_stale: bool = False

    @property
    def ok(self) -> bool:
        return self.error_kind is None and self.output is not None

    @property
    def text(self) -> str | None:
        return self.output.text if self.output is not None else None

    @property
    def sent(self) -> bool:
        """Whether an HTTP request was made for this record (not a reuse, not a skipped call)."""
        return not self.cached and self.try_number > 0

    @property
    def may_be_billed(self) -> bool:
        return self.sent and self.error_kind in MAY_BE_BILLED

    @property
    def cost_usd(self) -> float | None:
        """What the answer cost when it was bought; a failed request, nothing known."""
        return self.output.cost_usd if self.output is not None else 0.0

    @property
    def cost_this_run(self) -> float | None:
        """What this run paid for it: nothing for a reused answer."""
        return 0.0 if self.cached else self.cost_usd

    def to_cache(self) -> bytes:
        assert self.output is not None, "only answers are cached"
        body = {
            "request_key": self.request_key,
            "model": self.model,
            "attempt": self.attempt,
            "api_base": self.api_base,
            "origin_run_id": self.origin_run_id,
            "answered_at": self.answered_at.isoformat() if self.answered_at else None,
            "output": self.output.to_json(),
        }
        return json.dumps(body, ensure_ascii=False).encode()

    @classmethod
    def from_cache(cls, data: bytes, request_key: str) -> ModelCall:
        """The stored answer to `request_key`, whole (log-probabilities included);
        CorruptCacheEntry when it cannot be that."""
        try:
            body: Any = json.loads(data)
            if not isinstance(body, dict):
                raise CorruptCacheEntry("not a JSON object")
            # Entries written before outputs were records kept the output's fields flat.
            output = ModelOutput.from_json(body.get("output", body))
            answered_at = body.get("answered_at")
            call = cls(
                request_key=body["request_key"],
                model=body["model"],
                attempt=int(body["attempt"]),
                output=output,
                api_base=body.get("api_base"),
                origin_run_id=body.get("origin_run_id"),
                cached=True,
                try_number=0,
                answered_at=_utc(answered_at) if answered_at is not None else None,
            )
        except (UnicodeDecodeError, json.JSONDecodeError, TypeError, KeyError, ValueError) as exc:
            raise CorruptCacheEntry(f"unreadable: {exc}") from None
        if call.request_key != request_key:
            raise CorruptCacheEntry(f"holds the answer to another request ({call.request_key})")
        if not isinstance(output.text, str) or not output.text:
            raise CorruptCacheEntry("holds no answer text")
        return call


def _utc(text: object) -> datetime:
    """An entry's `answered_at` (ISO 8601 with its zone); ValueError when it is not one."""
    try:
        moment = datetime.fromisoformat(text) if isinstance(text, str) else None
    except ValueError:
        moment = None
    if moment is None:
        raise ValueError(f"answered_at is not a time: {text!r}")
    if moment.tzinfo is None:
        raise ValueError(f"answered_at has no time zone: {text!r}")
    return moment
