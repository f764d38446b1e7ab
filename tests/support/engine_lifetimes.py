"""Session engines end after the last test that uses them, not when the session ends.

An engine left idle is not free: the external Ray and Dask clusters burn about a fifth of a core
doing nothing, the session's Ray and Prefect server a few percent each, and a run of the suite
goes on for minutes after their last user. `plan` notes each engine's last user in the order the
session runs its tests; `end_after` finishes the engine's fixture once that test is torn down.
A test that asks for the engine later (another order) starts it again as the first user did:
pytest runs a finished fixture anew.

Under pytest-xdist a worker runs only its share, units of work in an order of the scheduler's
choosing: the last user in collection order may run before other users on the same worker. So
there (`unit_of` given) an engine ends early only when all its users are in one unit (a module,
under `--dist loadfile`), which one worker runs in collection order; another ends with the
worker's session.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import pytest

# The session fixtures that cost CPU while idle (in the order they are checked).
IDLE_COSTLY = (
    "external_clusters",
    "answering_cluster",
    "ray_session",
    "dask_address",
    "prefect_server",
)


def module_of(item: pytest.Item) -> str:
    """The unit of work holding `item` under `--dist loadfile`: its module."""
    return item.nodeid.split("::", 1)[0]


class EngineLifetimes:
    """Which test is the last user of each engine, and finishing the engine after it."""

    def __init__(self, engines: Sequence[str] = IDLE_COSTLY) -> None:
        self.engines = tuple(engines)
        self._last: dict[str, str] = {}

    def plan(
        self, items: Iterable[pytest.Item], unit_of: Callable[[pytest.Item], str] | None = None
    ) -> None:
        """Note each engine's last user among `items` (the session's tests, in run order); with
        `unit_of` (the unit of work holding a test), only for engines used in one unit."""
        self._last = {}
        units: dict[str, set[str]] = {}
        for item in items:
            for name in getattr(item, "fixturenames", ()):
                if name in self.engines:
                    self._last[name] = item.nodeid
                    if unit_of is not None:
                        units.setdefault(name, set()).add(unit_of(item))
        for name, used_in in units.items():
            if len(used_in) > 1:
                del self._last[name]

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
