"""Registries by decorator: suites by name, offline baselines by (name, suite, task).

The built-in suites are imported by name on first use (`benchmarks.builtin`), so that a run
imports only the suites it evaluates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import import_module
from typing import Any, TypeVar

from roadeval.benchmarks.builtin import ANY_SUITE_MODULES, BUILTIN_SUITES
from roadeval.benchmarks.item import Item
from roadeval.benchmarks.suite import Suite

_SUITES: dict[str, type[Suite]] = {}

S = TypeVar("S", bound=type[Suite])


def register_suite(name: str) -> Callable[[S], S]:
    """Class decorator: make a Suite subclass available under `name`."""

    def wrap(cls: S) -> S:
        if name in _SUITES and _SUITES[name] is not cls:
            raise ValueError(f"suite {name!r} is already registered by {_SUITES[name].__name__}")
        cls.name = name
        _SUITES[name] = cls
        return cls

    return wrap


def get_suite(name: str, **options: Any) -> Suite:
    """A configured instance of the suite registered under `name`."""
    _load_suite(name)
    if name not in _SUITES:
        known = ", ".join(suite_names()) or "none"
        raise KeyError(f"unknown suite {name!r} (known: {known})")
    return _SUITES[name](**options)


def suite_names() -> list[str]:
    """Every suite that can be asked for: the built-in ones (not imported for this) and any
    registered by other code."""
    return sorted(set(BUILTIN_SUITES) | set(_SUITES))


@dataclass(frozen=True)
class BaselineCall:
    """What an offline baseline sees: the item as its prompt shows it (the gold answer withheld,
    so no baseline can read it), the seed and the attempt."""

    item: Item
    seed: int = 0
    attempt: int = 1

    @classmethod
    def blind(cls, item: Item, seed: int = 0, attempt: int = 1) -> BaselineCall:
        return cls(item.model_copy(update={"reference": None}), seed, attempt)

    @property
    def suite(self) -> str:
        return self.item.suite

    @property
    def task(self) -> str:
        return self.item.task

    @property
    def item_id(self) -> str:
        return self.item.item_id


@dataclass(frozen=True)
class BaselineReply:
    """A baseline's answer with the distribution it drew its first token from, which it reports
    as log-probabilities when a request asks for them (as a provider would)."""

    text: str
    first_token_logprobs: dict[str, float]


BaselineFn = Callable[[BaselineCall], str | BaselineReply]


@dataclass(frozen=True)
class Baseline:
    name: str
    suite: str
    tasks: frozenset[str] | None  # None: every task of the suite
    fn: BaselineFn

    def covers(self, task: str) -> bool:
        return self.tasks is None or task in self.tasks


_BASELINES: dict[tuple[str, str], list[Baseline]] = {}


def register_baseline(
    name: str, suite: str, tasks: Iterable[str] | None = None
) -> Callable[[BaselineFn], BaselineFn]:
    """Function decorator: `fn(call) -> reply text` (or a `BaselineReply`) answers for `suite`
    (optionally some tasks)."""

    def wrap(fn: BaselineFn) -> BaselineFn:
        entry = Baseline(name, suite, frozenset(tasks) if tasks is not None else None, fn)
        _BASELINES.setdefault((name, suite), []).append(entry)
        return fn

    return wrap


# The suite name of a baseline that answers for any suite (the offline judge).
ANY_SUITE = "*"


def find_baseline(name: str, suite: str, task: str) -> Baseline | None:
    _load_suite(suite)
    for module in ANY_SUITE_MODULES:
        import_module(module)
    for entry in [*_BASELINES.get((name, suite), []), *_BASELINES.get((name, ANY_SUITE), [])]:
        if entry.covers(task):
            return entry
    return None


def baseline_names() -> list[str]:
    _load_builtin()
    return sorted({name for name, _ in _BASELINES})


def _load_suite(name: str) -> None:
    # Importing a built-in suite's package runs its decorators (the suite's and its baselines').
    module = BUILTIN_SUITES.get(name)
    if module is not None:
        import_module(module)


def _load_builtin() -> None:
    for module in (*BUILTIN_SUITES.values(), *ANY_SUITE_MODULES):
        import_module(module)


def registry_snapshot() -> dict[str, Any]:
    """Suites and baselines known now, for `roadeval suites` and for debugging."""
    _load_builtin()
    return {
        "suites": sorted(_SUITES),
        "baselines": sorted(f"{name}@{suite}" for name, suite in _BASELINES),
    }
