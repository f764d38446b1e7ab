"""Fixtures for the storage tests: tables (and suites) registered for one test only."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from roadeval.benchmarks import registry
from roadeval.benchmarks.suite import Suite
from roadeval.storage import records

RegisterTables = Callable[[Mapping[str, type[Any]]], None]
RegisterSuite = Callable[[type[Suite]], type[Suite]]


def _forget(names: list[str]) -> None:
    # The registry has no way out (a table, once registered, stays for the process): tests only.
    for name in names:
        record = records._RECORDS.pop(name, None)
        records._SCHEMAS.pop(name, None)
        records._TABLE_OF.pop(record, None)  # type: ignore[arg-type]


@pytest.fixture
def temporary_tables() -> Iterator[RegisterTables]:
    """`register(tables)`: register tables now (as a suite's registration does); they leave the
    registry when the test ends."""
    added: list[str] = []

    def register(tables: Mapping[str, type[Any]]) -> None:
        new = [name for name in tables if name not in records.TABLES]
        records.register_tables(tables)
        added.extend(new)

    yield register
    _forget(added)


@pytest.fixture
def temporary_suite() -> Iterator[RegisterSuite]:
    """`register(cls)`: `@register_suite` for one test; the suite and its tables leave the
    registries when the test ends."""
    added: list[tuple[str, list[str]]] = []

    def register(cls: type[Suite]) -> type[Suite]:
        new = [name for name in cls.tables if name not in records.TABLES]
        registry.register_suite(cls)
        added.append((cls.name, new))
        return cls

    yield register
    for name, tables in added:
        registry._SUITES.pop(name, None)
        _forget(tables)
