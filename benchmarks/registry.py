"""Registries: suites by name, offline baselines by (name, suite, task).

Suites plug in by entry points. A distribution declares each suite it ships in the group
`roadeval.suites`, `<name> = "<module>:<Suite subclass>"`, the name being the class's `name`;
roadeval's own five are declared so in its pyproject.toml. A suite is loaded by name on first use
(its module imported, which registers the suite's baselines too), so a run imports only the suites
it evaluates: RoadBench's geometry (shapely, scipy) never loads for a TRIP run. Baselines that
answer for any suite (the offline judge) are declared in the group `roadeval.baselines`,
`<baseline name> = "<module>"`, and loaded when a baseline of that name is asked for.

A Suite subclass that is not installed (a notebook's, a test's) is registered in process with
`@register_suite`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any, TypeVar

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.suite import Suite

# The entry-point groups plugins declare themselves in.
SUITE_GROUP = "roadeval.suites"
BASELINE_GROUP = "roadeval.baselines"

_SUITES: dict[str, type[Suite]] = {}

S = TypeVar("S", bound=type[Suite])


def register_suite(cls: S) -> S:
    """Class decorator: make a Suite subclass available under its `name` (a class attribute).
    A suite's entry point, once loaded, is registered through here as well."""
    if not (isinstance(cls, type) and issubclass(cls, Suite)):
        raise TypeError(
            f"register_suite takes a Suite subclass (`@register_suite`, no arguments; the name "
            f"is the class attribute `name`), got {cls!r}"
        )
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"suite class {cls.__name__} declares no name (class attribute `name`)")
    if name in _SUITES and _SUITES[name] is not cls:
        raise ValueError(f"suite {name!r} is already registered by {_SUITES[name].__name__}")
    from roadeval.storage.records import register_tables

    # The suite's own store tables exist from here on (their schemas derived now).
    register_tables(cls.tables)
    _SUITES[name] = cls
    return cls


def get_suite(name: str, **options: Any) -> Suite:
    """A configured instance of the suite registered under `name`."""
    cls = load_suite(name)
    if cls is None:
        known = ", ".join(suite_names()) or "none"
        raise KeyError(f"unknown suite {name!r} (known: {known})")
    return cls(**options)


def suite_names() -> list[str]:
    """Every suite that can be asked for: those installed (found by entry point, not imported for
    this) and any registered in process."""
    return sorted({ep.name for ep in entry_points(group=SUITE_GROUP)} | set(_SUITES))


def suite_module(name: str) -> str | None:
    """The module whose import loads suite `name` (to import it ahead, in the background), found
    without importing it; None for a suite that is not installed."""
    found = _entry_point(SUITE_GROUP, name)
    return found.module if found is not None else None


@dataclass(frozen=True)
class BaselineCall:
    """What an offline baseline sees: the item as its prompt shows it (the gold answer withheld,
    so no baseline can read it), the seed, the attempt and the key of the request it answers.

    A baseline's answer is a function of its request, as a cached model's is: whatever it draws
    at random it draws from `rng()`, seeded by the request key (which covers the model, its
    params with the seed, the exact messages and the attempt), never by the item's id. Two items
    whose prompts are the same send one request and get one answer."""

    item: Item
    seed: int = 0
    attempt: int = 1
    request_key: str = ""

    @classmethod
    def blind(
        cls, item: Item, seed: int = 0, attempt: int = 1, request_key: str = ""
    ) -> BaselineCall:
        return cls(item.model_copy(update={"reference": None}), seed, attempt, request_key)

    def rng(self) -> random.Random:
        """The generator of this call's random draws, seeded by its request key: the same
        request draws the same answer, in any process, on any run."""
        if not self.request_key:
            raise ValueError(
                f"baseline call for {self.suite} item {self.item_id!r} has no request key: a "
                "baseline that draws at random answers a request, and is seeded by its key "
                "(BaselineCall.blind(item, seed, attempt, request_key))"
            )
        return random.Random(self.request_key)

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
    # Why its answers measure nothing, for a stand-in that only keeps the pipeline running
    # offline (the midpoint judge); None for a baseline whose answers mean something.
    placeholder: str | None = None

    def covers(self, task: str) -> bool:
        return self.tasks is None or task in self.tasks


_BASELINES: dict[tuple[str, str], list[Baseline]] = {}


def register_baseline(
    name: str, suite: str, tasks: Iterable[str] | None = None, placeholder: str | None = None
) -> Callable[[BaselineFn], BaselineFn]:
    """Function decorator: `fn(call) -> reply text` (or a `BaselineReply`) answers for `suite`
    (optionally some tasks). `placeholder`: why its answers measure nothing, for a stand-in
    whose numbers the reports then mark wherever they show."""

    def wrap(fn: BaselineFn) -> BaselineFn:
        covered = frozenset(tasks) if tasks is not None else None
        entry = Baseline(name, suite, covered, fn, placeholder)
        _BASELINES.setdefault((name, suite), []).append(entry)
        return fn

    return wrap


# The suite name of a baseline that answers for any suite (the offline judge).
ANY_SUITE = "*"

# Baseline names whose `roadeval.baselines` entry points have been looked up (and loaded).
_BASELINE_PLUGINS: set[str] = set()


def find_baseline(name: str, suite: str, task: str) -> Baseline | None:
    """The baseline `name` for this suite's task: the suite's own (loaded with the suite), else
    one that answers for any suite (loaded by its name)."""
    load_suite(suite)
    for entry in _BASELINES.get((name, suite), []):
        if entry.covers(task):
            return entry
    _load_baseline_plugin(name)
    for entry in _BASELINES.get((name, ANY_SUITE), []):
        if entry.covers(task):
            return entry
    return None


def placeholder_reason(name: str) -> str | None:
    """Why the baseline `name` measures nothing, when it is a placeholder (the offline judge);
    None for any other baseline, or a name nothing registers."""
    _load_baseline_plugin(name)
    for (found, _), entries in _BASELINES.items():
        for entry in entries if found == name else ():
            if entry.placeholder is not None:
                return entry.placeholder
    return None


def baseline_names() -> list[str]:
    _load_all()
    return sorted({name for name, _ in _BASELINES})


def registry_snapshot() -> dict[str, Any]:
    """Suites and baselines known now, every installed one loaded, for `roadeval suites` and for
    debugging."""
    _load_all()
    return {
        "suites": sorted(_SUITES),
        "baselines": sorted(f"{name}@{suite}" for name, suite in _BASELINES),
    }


def _entry_point(group: str, name: str) -> EntryPoint | None:
    """The one entry point `name` of `group`; two distributions declaring it differently is an
    error (which one a run loads would depend on the order of sys.path)."""
    declared = {ep.value: ep for ep in entry_points(group=group, name=name)}
    if len(declared) > 1:
        raise ValueError(
            f"{name!r} is declared by more than one entry point in group {group}: "
            + ", ".join(sorted(declared))
        )
    return next(iter(declared.values()), None)


def load_suite(name: str) -> type[Suite] | None:
    """The suite class registered under `name`, loaded from its entry point on first use; None
    when no suite has that name."""
    if name in _SUITES:
        return _SUITES[name]
    found = _entry_point(SUITE_GROUP, name)
    if found is None:
        return None
    where = f"entry point {name} = {found.value!r} (group {SUITE_GROUP})"
    # Importing the suite's module runs its decorators (the suite's and its baselines').
    loaded = found.load()
    if not (isinstance(loaded, type) and issubclass(loaded, Suite)):
        raise TypeError(f"{where} loads {loaded!r}, not a Suite subclass (give `module:Class`)")
    declared = getattr(loaded, "name", None)
    if declared != name:
        raise ValueError(
            f"{where} loads {loaded.__name__}, whose name is {declared!r}: the entry point's "
            "name and the class's `name` must be the same"
        )
    return register_suite(loaded)


def _load_baseline_plugin(name: str) -> None:
    """Load the `roadeval.baselines` entry point named `name`, once; it must register a baseline
    of that name."""
    if name in _BASELINE_PLUGINS:
        return
    found = _entry_point(BASELINE_GROUP, name)
    if found is not None:
        found.load()
        if not any(known == name for known, _ in _BASELINES):
            raise ValueError(
                f"entry point {name} = {found.value!r} (group {BASELINE_GROUP}) registers no "
                f"baseline named {name!r}"
            )
    _BASELINE_PLUGINS.add(name)


def _load_all() -> None:
    for name in suite_names():
        load_suite(name)
    for ep in entry_points(group=BASELINE_GROUP):
        _load_baseline_plugin(ep.name)
