"""Which tests share a pytest-xdist worker (the README's command runs the suite on two, with
`--dist loadgroup`): each test gets one `xdist_group`, and a group runs whole on one worker, its
tests in the order collected.

A module's tests share a group, so that its module-scoped fixtures (runs of the demo, built
stores) are made once, not once per worker. The modules that use an engine only a few tests need
(`ENGINE_GROUPS`: a local Ray, a Dask cluster, the external clusters) share one group with every
other module using it, so that one worker starts it, not each; modules linked through such an
engine join one group. The Prefect server and moto, which many modules use, start on each worker
that needs them instead (a worker's share of them costs less than one worker's queue of them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import pytest

# The session fixtures whose users all run on one worker.
ENGINE_GROUPS = ("ray_session", "dask_address", "external_clusters")


def group_names(
    modules: Mapping[str, Iterable[str]], engines: Sequence[str] = ENGINE_GROUPS
) -> dict[str, str]:
    """The group of each module, given the fixtures its tests use: the module's own path, or
    `engine:` and the engines of the modules joined through their engines."""
    uses = {module: {e for e in fixtures if e in engines} for module, fixtures in modules.items()}
    joined: dict[str, set[str]] = {}  # engine -> every engine its modules reach
    for used in uses.values():
        together = set(used).union(*(joined.get(e, set()) for e in used))
        for engine in together:
            joined[engine] = together
    return {
        module: "engine:" + "+".join(sorted(joined[min(used)])) if used else module
        for module, used in uses.items()
    }


def assign(items: Sequence[pytest.Item]) -> None:
    """Mark each test with its group (a test marked already keeps its own)."""
    modules: dict[str, set[str]] = {}
    for item in items:
        modules.setdefault(_module(item), set()).update(getattr(item, "fixturenames", ()))
    names = group_names(modules)
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(names[_module(item)]))


def unit_of(item: pytest.Item) -> str:
    """The unit of work a worker is given that holds `item`: its group."""
    mark = item.get_closest_marker("xdist_group")
    return str(mark.args[0]) if mark is not None and mark.args else item.nodeid


def _module(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]
