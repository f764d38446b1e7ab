"""Batches submitted to a provider, recorded in the store before they are first polled, so a run
that dies while a batch is pending (kill -9, a crash, Ctrl-C) is resumed by polling that batch,
never by submitting (and paying for) its requests again.

One JSON object per batch, `batches/<endpoint id>/<batch id>.json`, where the endpoint id is a
sha256 of the model string and its api_base: every run of that model at that endpoint sees it.
Before the batch is created, a `submitting` record (`upload-<input file id>.json`) says a create
is under way: if its reply never comes back (a crash, a lost connection), a later run asks the
provider for the batch made from that file rather than paying for its requests again.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from enum import StrEnum

from roadeval.storage.store import Store


class BatchState(StrEnum):
    """`submitting` while its create is under way (no batch id yet); `pending` until its
    answers are in the response cache; then `done` (or `failed`: the provider ended it failed,
    expired or cancelled, so its requests may be asked again)."""

    SUBMITTING = "submitting"
    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"


class BadBatchRecord(ValueError):
    """A batch record in the store that cannot be read; the message names its key."""


@dataclass(frozen=True)
class BatchRecord:
    """One submitted batch: what to poll, for which model and endpoint, holding which requests."""

    batch_id: str
    input_file_id: str
    model: str
    api_base: str | None
    run_id: str | None
    request_keys: tuple[str, ...]
    # Each request's attempt, in the order of request_keys (an answer is cached with it).
    attempts: tuple[int, ...]
    submitted_at: str
    state: BatchState = BatchState.PENDING
    # Why a failed batch failed (the provider's status), for whoever reads the record.
    reason: str | None = None
    # Who wrote a submitting record: while that process lives, its create may be under way.
    host: str | None = None
    pid: int | None = None

    def to_json(self) -> bytes:
        body = asdict(self)
        body["request_keys"] = list(self.request_keys)
        body["attempts"] = list(self.attempts)
        return json.dumps(body, indent=1).encode()

    @classmethod
    def from_json(cls, data: bytes, key: str) -> BatchRecord:
        try:
            body = json.loads(data)
            return cls(
                batch_id=str(body["batch_id"]),
                input_file_id=str(body["input_file_id"]),
                model=str(body["model"]),
                api_base=body.get("api_base"),
                run_id=body.get("run_id"),
                request_keys=tuple(str(k) for k in body["request_keys"]),
                attempts=tuple(int(a) for a in body["attempts"]),
                submitted_at=str(body["submitted_at"]),
                state=BatchState(body["state"]),
                reason=body.get("reason"),
                host=body.get("host"),
                pid=body.get("pid"),
            )
        except (UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
            raise BadBatchRecord(f"batch record {key}: unreadable: {exc}") from None

    def __post_init__(self) -> None:
        if len(self.attempts) != len(self.request_keys):
            raise ValueError(f"batch {self.batch_id}: one attempt per request key")

    @property
    def submitted(self) -> datetime:
        return datetime.fromisoformat(self.submitted_at)

    @property
    def name(self) -> str:
        """The record's name in its folder: the batch id, or its upload's before it has one."""
        return self.batch_id if self.batch_id else f"upload-{self.input_file_id}"

    def ended(self, state: BatchState, reason: str | None = None) -> BatchRecord:
        return replace(self, state=state, reason=reason)

    def created(self, batch_id: str) -> BatchRecord:
        """The record of the batch a submitting record's create made."""
        return replace(self, batch_id=batch_id, state=BatchState.PENDING, host=None, pid=None)


def endpoint_id(model: str, api_base: str | None) -> str:
    """The folder of a model's batches at one endpoint."""
    return hashlib.sha256(f"{model}\n{api_base or ''}".encode()).hexdigest()[:32]


class BatchRecords:
    """The batch records of one model at one endpoint, in one store (call from a thread)."""

    def __init__(self, store: Store, model: str, api_base: str | None) -> None:
        self.store = store
        self.prefix = f"batches/{endpoint_id(model, api_base)}/"

    def key(self, record: BatchRecord) -> str:
        return f"{self.prefix}{record.name}.json"

    def write(self, record: BatchRecord) -> None:
        self.store.put(self.key(record), record.to_json())

    def delete(self, record: BatchRecord) -> None:
        self.store.delete(self.key(record))

    def keys(self) -> list[str]:
        return [k for k in self.store.list(self.prefix) if k.endswith(".json")]

    def read(self, key: str) -> BatchRecord | None:
        """The record under `key`; None if it is gone (a submitting record once settled)."""
        try:
            data = self.store.get(key)
        except FileNotFoundError:
            return None
        return BatchRecord.from_json(data, self.store.location(key))


def now_iso() -> str:
    return datetime.now(UTC).isoformat()
