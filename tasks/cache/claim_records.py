"""The records behind claims: one numbered object per batch of requests being asked, per endpoint.

`cache/claims/<endpoint id>/<number / 100>/<number>.json`, zero-padded so that keys sort as numbers.
Numbers are taken in order with a conditional create (If-None-Match: *), one above the highest
that exists, so a lower number was always taken earlier: that order is what decides which of two
claims on one request holds it. A record says which requests its batch holds (`held`, rewritten
byte for byte to renew it: its write time is its lease) and, once the batch is over, which of
them it answered (`done`). Records are never deleted but by the sweep of those older than the
retention, and the highest-numbered record is never swept: numbers are never taken twice.
All calls here are store operations: run them in a thread (see `store_calls`).
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from enum import StrEnum

from roadeval.storage.store import ConditionalWritesUnsupported, Entry, Listing, Store

_log = logging.getLogger("roadeval")
# Stores whose endpoint refused a conditional write (this process warned once for each).
_UNCONDITIONAL: set[str] = set()

# How long records are kept: a run asking for longer than this (less a margin) checks each
# request's answer in the response cache before it sends it (see `claims.ClaimBook`).
RETENTION_S = 6 * 3600.0
_DIGITS = 12
_GROUP = 100


class ClaimState(StrEnum):
    HELD = "held"
    DONE = "done"


class BadClaimRecord(ValueError):
    """A claim record that cannot be read (damaged, or not roadeval's)."""


@dataclass(frozen=True)
class ClaimRecord:
    """One batch's claim: who holds it, on which requests, and when over, what it answered."""

    owner: str
    host: str
    pid: int
    keys: frozenset[str]
    state: ClaimState = ClaimState.HELD
    answered: frozenset[str] = frozenset()

    def to_json(self) -> bytes:
        # Deterministic bytes: a renewal rewrites the very same object (same ETag).
        return json.dumps(
            {
                "owner": self.owner,
                "host": self.host,
                "pid": self.pid,
                "state": self.state.value,
                "keys": sorted(self.keys),
                "answered": sorted(self.answered),
            },
            sort_keys=True,
        ).encode()

    @classmethod
    def from_json(cls, data: bytes) -> ClaimRecord:
        try:
            body = json.loads(data)
            return cls(
                owner=str(body["owner"]),
                host=str(body["host"]),
                pid=int(body["pid"]),
                keys=frozenset(str(k) for k in body["keys"]),
                state=ClaimState(body["state"]),
                answered=frozenset(str(k) for k in body.get("answered", ())),
            )
        except (UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
            raise BadClaimRecord(str(exc)) from None


def endpoint_folder(model: str, api_base: str | None) -> str:
    """The claims of one model at one endpoint: a request key names both, so two requests
    with one key always meet in the same folder."""
    digest = hashlib.sha256(f"{model}\n{api_base or ''}".encode()).hexdigest()[:32]
    return f"cache/claims/{digest}/"


@dataclass(frozen=True)
class Numbered:
    """A listed record: its number and its entry (tag and write time)."""

    number: int
    entry: Entry


class ClaimLog:
    """The claim records of one endpoint in one store."""

    def __init__(self, store: Store, folder: str) -> None:
        self.store = store
        self.folder = folder

    def key(self, number: int) -> str:
        # In groups of a hundred: a folder lists from a number without reading every name.
        return f"{self.folder}{number // _GROUP:0{_DIGITS}d}/{number:0{_DIGITS}d}.json"

    def number(self, key: str) -> int | None:
        group, _, name = key[len(self.folder) :].removesuffix(".json").partition("/")
        if not (name.isdigit() and len(name) == _DIGITS and group.isdigit()):
            return None
        number = int(name)
        return number if int(group) == number // _GROUP else None

    def create(self, number: int, record: ClaimRecord) -> bool:
        """Take `number` for `record`; False when it was taken already. On an endpoint that
        refuses conditional writes, written plainly (once a warning says what that costs)."""
        if self.store.uri not in _UNCONDITIONAL:
            try:
                return self.store.create(self.key(number), record.to_json())
            except ConditionalWritesUnsupported as exc:
                _UNCONDITIONAL.add(self.store.uri)
                _log.warning(
                    "%s; claims are written without it there: two runs sharing this store at "
                    "the same moment may both pay for a request (see docs/store.md)",
                    exc,
                )
        self.store.put(self.key(number), record.to_json())
        return True

    def write(self, number: int, record: ClaimRecord) -> None:
        """Rewrite one's own record (renewed, narrowed or done)."""
        self.store.put(self.key(number), record.to_json())

    def read(self, number: int) -> ClaimRecord | None:
        """The record, or None when it is gone (swept) or unreadable (it then protects
        nothing, as an expired one: its requests are checked in the response cache)."""
        try:
            return ClaimRecord.from_json(self.store.get(self.key(number)))
        except (FileNotFoundError, BadClaimRecord):
            return None

    def listing(self, above: int | None = None) -> tuple[list[Numbered], Listing]:
        """The records numbered above `above` (all: None), in order."""
        after = None if above is None else self.key(above)
        listed = self.store.list_entries(self.folder, start_after=after)
        found = [
            Numbered(number, entry)
            for entry in listed.entries
            if (number := self.number(entry.key)) is not None
        ]
        return found, listed

    def sweep(self, numbers: list[int]) -> None:
        self.store.delete_many(self.key(n) for n in numbers)
