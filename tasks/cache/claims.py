"""Claims on requests being asked, kept in the store, so that two runs sharing a store and a
model pay for each request once: the second waits for the first's answer.

A claim is a lease: it expires unless its holder renews it, so a run killed mid-request does not
block the others for long (and not at all on its own machine, where a dead holder's process is
seen to be gone). Leases are numbered per request key (a generation); taking over an
expired one means creating the next number, which only one taker can do, because creating a key
that exists fails (an exclusive create locally, a conditional PUT on S3).
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from dataclasses import dataclass
from typing import Any

from roadeval.environment import seconds_from_env
from roadeval.storage.liveness import writer_alive
from roadeval.storage.store import Store

DEFAULT_TTL_S = 30.0
DEFAULT_POLL_S = 0.25


def ttl_s() -> float:
    """How long a claim holds without renewal: ROADEVAL_CLAIM_TTL_S, else 30 s."""
    return seconds_from_env("ROADEVAL_CLAIM_TTL_S", DEFAULT_TTL_S)


@dataclass(frozen=True)
class Lease:
    request_key: str
    generation: int
    key: str  # the store key of this claim


class RequestClaims:
    """Claims held by one owner (a run); thread-safe, since every call is a store operation."""

    def __init__(self, store: Store, owner: str, ttl: float | None = None) -> None:
        self.store = store
        self.owner = f"{owner}/{os.getpid()}/{uuid.uuid4().hex[:8]}"
        self.ttl_s = ttl if ttl is not None else ttl_s()
        # A waiter looks again quickly at first, then less often, up to a few times a TTL.
        self.poll_s = min(DEFAULT_POLL_S, self.ttl_s / 4)
        self.max_poll_s = max(self.poll_s, min(2.0, self.ttl_s / 3))

    @staticmethod
    def prefix(request_key: str) -> str:
        """Claims on a request are keys <prefix><generation>: no folder per request."""
        return f"cache/claims/{request_key[:2]}/{request_key}."

    def _body(self) -> bytes:
        return json.dumps(
            {
                "owner": self.owner,
                "host": socket.gethostname(),
                "pid": os.getpid(),
                "expires_at": time.time() + self.ttl_s,
            }
        ).encode()

    def try_acquire(self, request_key: str) -> Lease | None:
        """A lease on `request_key`, or None while someone else holds a live one."""
        prefix = self.prefix(request_key)
        generations = sorted(
            int(name) for key in self.store.list(prefix) if (name := key[len(prefix) :]).isdigit()
        )
        if generations:
            newest = generations[-1]
            try:
                live = _live(json.loads(self.store.get(f"{prefix}{newest}")))
            except FileNotFoundError:
                return None  # released while we looked: look again next time
            except (ValueError, KeyError, TypeError):
                live = False  # an unreadable claim protects nothing
            if live:
                return None
            generation = newest + 1
        else:
            generation = 1
        key = f"{prefix}{generation}"
        if not self.store.create(key, self._body()):
            return None  # another taker won this generation
        for older in generations:
            self.store.delete(f"{prefix}{older}")
        return Lease(request_key, generation, key)

    def renew(self, lease: Lease) -> None:
        self.store.put(lease.key, self._body())

    def release(self, lease: Lease) -> None:
        self.store.delete(lease.key)


def _live(held: dict[str, Any]) -> bool:
    """A claim holds until it expires, or until its holder is seen to have died."""
    if float(held["expires_at"]) <= time.time():
        return False
    return writer_alive(held.get("host"), held.get("pid")) is not False
