"""The session's engines end after their last user (support.engine_lifetimes): checked on a
session of its own whose engine writes down when it starts and stops."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from support.engine_lifetimes import EngineLifetimes, module_of

pytest_plugins = ["pytester"]

_CONFTEST = """
import sys
from pathlib import Path

import pytest

sys.path.insert(0, {support!r})
from support.engine_lifetimes import EngineLifetimes

LOG = Path({log!r})
_ENGINES = EngineLifetimes(("engine",))


def pytest_collection_finish(session):
    _ENGINES.plan(session.items)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    try:
        return (yield)
    finally:
        _ENGINES.end_after(item)


@pytest.fixture(autouse=True)
def _note(request):
    with LOG.open("a") as log:
        log.write(f"test {{request.node.name}}\\n")


@pytest.fixture(scope="session")
def engine():
    with LOG.open("a") as log:
        log.write("start\\n")
    yield
    with LOG.open("a") as log:
        log.write("stop\\n")
"""

_TESTS = """
def test_a(engine): pass
def test_b(engine): pass
def test_c(): pass
def test_d(): pass
"""


def _session(pytester: pytest.Pytester, *args: str) -> list[str]:
    log = pytester.path / "engine.log"
    support = str(Path(__file__).parent)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makeconftest(_CONFTEST.format(support=support, log=str(log)))
    pytester.makepyfile(test_engine=_TESTS)
    pytester.runpytest_inprocess("-p", "no:cacheprovider", *args).assert_outcomes(
        passed=4 if not args else 3
    )
    return log.read_text().split("\n")[:-1]


def test_an_engine_stops_after_its_last_user_not_at_the_sessions_end(
    pytester: pytest.Pytester,
) -> None:
    assert _session(pytester) == [
        "start",
        "test test_a",
        "test test_b",
        "stop",
        "test test_c",
        "test test_d",
    ]


def test_the_last_user_is_the_last_one_that_runs(pytester: pytest.Pytester) -> None:
    # test_b deselected: test_a is the last user.
    assert _session(pytester, "-k", "not test_b") == [
        "start",
        "test test_a",
        "stop",
        "test test_c",
        "test test_d",
    ]


@dataclass(frozen=True)
class _Test:
    nodeid: str
    fixturenames: tuple[str, ...]


def test_on_an_xdist_worker_an_engine_used_in_two_units_ends_with_the_session() -> None:
    # Under --dist loadfile a worker may run b.py before a.py: ending the engine after b.py's
    # test (the last in collection order) would start it a second time for a.py's.
    tests = [
        _Test("a.py::t1", ("engine",)),
        _Test("b.py::t2", ("engine",)),
        _Test("c.py::t3", ("other",)),
        _Test("c.py::t4", ("other",)),
    ]
    lifetimes = EngineLifetimes(("engine", "other"))
    lifetimes.plan(tests, unit_of=module_of)  # type: ignore[arg-type]
    assert lifetimes.last_user("engine") is None
    assert lifetimes.last_user("other") == "c.py::t4"
    lifetimes.plan(tests)  # type: ignore[arg-type]
    assert lifetimes.last_user("engine") == "b.py::t2"
