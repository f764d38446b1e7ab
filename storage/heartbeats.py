"""A running run's heartbeat: one small object it rewrites every few seconds.

Tables are immutable, so a run cannot update its `running` row; the heartbeat is how a reader
tells a run that is still going from one that died (kill -9, power loss) without finishing.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta

from roadeval.environment import seconds_from_env
from roadeval.storage.liveness import writer_alive
from roadeval.storage.store import Store

DEFAULT_INTERVAL_S = 15.0
# A run is presumed dead once this many beats in a row are missing.
MISSED_BEATS = 3


def heartbeat_key(run_id: str) -> str:
    return f"runs/{run_id}/heartbeat.json"


def interval_s() -> float:
    """The heartbeat period: ROADEVAL_HEARTBEAT_S, else 15 s."""
    return seconds_from_env("ROADEVAL_HEARTBEAT_S", DEFAULT_INTERVAL_S)


@dataclass(frozen=True)
class Heartbeat:
    run_id: str
    at: datetime
    interval_s: float
    host: str
    pid: int

    @classmethod
    def now(cls, run_id: str, interval: float) -> Heartbeat:
        return cls(run_id, datetime.now(UTC), interval, socket.gethostname(), os.getpid())

    def to_json(self) -> bytes:
        return json.dumps({**asdict(self), "at": self.at.isoformat()}).encode()

    @classmethod
    def from_json(cls, data: bytes) -> Heartbeat:
        body = json.loads(data)
        return cls(**{**body, "at": datetime.fromisoformat(body["at"])})

    def alive(self, now: datetime | None = None) -> bool:
        """Beating recently, and not seen dead (a run on this machine whose process is gone)."""
        if writer_alive(self.host, self.pid) is False:
            return False
        now = now or datetime.now(UTC)
        return now - self.at <= timedelta(seconds=MISSED_BEATS * self.interval_s)


def read_heartbeat(store: Store, run_id: str) -> Heartbeat | None:
    """The run's last heartbeat, or None if it never wrote one (or it cannot be read)."""
    try:
        return Heartbeat.from_json(store.get(heartbeat_key(run_id)))
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError):
        # Half a heartbeat cannot be written (puts are atomic); a foreign file is no heartbeat.
        return None


def run_liveness(
    store: Store,
    run_id: str,
    started_at: datetime,
    heartbeat_s: float | None,
    now: datetime | None = None,
) -> tuple[datetime, bool]:
    """A `running` run's last sign of life, and whether it still goes (else it died): its
    heartbeat's, or for a run with no beat to read, its start judged by its beat period (the
    first beat is written before the `running` event, so that is a foreign or damaged store).
    The one rule: `runs` reads a run `died` by it, and so does `--against`."""
    now = now or datetime.now(UTC)
    beat = read_heartbeat(store, run_id)
    if beat is None:
        living = (now - started_at).total_seconds() <= MISSED_BEATS * (heartbeat_s or 0)
        return started_at, living
    return beat.at, beat.alive(now)
