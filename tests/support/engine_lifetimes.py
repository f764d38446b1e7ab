"""Session engines end after the last test that uses them, not when the session ends.

An engine left idle is not free: the external Ray and Dask clusters burn about a fifth of a core
doing nothing, the session's Ray and Prefect server a few percent each, and a run of the suite
goes on for minutes after their last user. `plan` notes each engine's last user in the order the
session runs its tests; `end_after` finishes the engine's fixture once that test is torn down.
A test that asks for the engine later (another order, or an xdist worker's share) starts it again
as the first user did: pytest runs a finished fixture anew.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pytest

# The session fixtures that cost CPU while idle (in the order they are checked).
IDLE_COSTLY = (
    "external_clusters",
    "answering_cluster",
    "ray_session",
    "dask_address",
    "prefect_server",
)


class EngineLifetimes:
    """Which test is the last user of each engine, and finishing the engine after it."""

    def __init__(self, engines: Sequence[str] = IDLE_COSTLY) -> None:
        self.engines = tuple(engines)
        self._last: dict[str, str] = {}

    def plan(self, items: Iterable[pytest.Item]) -> None:
        """Note each engine's last user among `items` (the session's tests, in run order)."""
        self._last = {}
        for item in items:
            for name in getattr(item, "fixturenames", ()):
                if name in self.engines:
                    self._last[name] = item.nodeid

    def last_user(self, engine: str) -> str | None:
        return self._last.get(engine)

    def end_after(self, item: pytest.Item) -> None:
        """`item` has been torn down: finish every engine it was the last user of."""
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            return
        for name in self.engines:
            if self._last.get(name) != item.nodeid:
                continue
            for fixturedef in info.name2fixturedefs.get(name, ()):
                if fixturedef.scope == "session":
                    # A no-op for a fixture not running; pytest starts it again if asked.
                    fixturedef.finish(item._request)  # type: ignore[attr-defined]
