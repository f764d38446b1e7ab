"""The run health table of `run`, `demo` and `show`: per suite x model, its items and what
became of them (calls, answers reused, errors, answers not read), its cost; judge calls, items
whose scorer raised, stale answers asked again and items a stop left unfinished where there
are any. Suite and model read whole at any width; the counts that do not fit give way in the
order below and are named."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.table import Table

from roadeval.tasks.results.fitting import FitColumn, captioned, fitted_table
from roadeval.tasks.results.manifest import PairCounts
from roadeval.tasks.results.money import cost_text
from roadeval.tasks.shard.counts import COUNT_HEADINGS

HEALTH_TITLE = "run health"


def _count(name: str) -> Callable[[PairCounts], str]:
    return lambda c: f"{int(getattr(c, name)):,}"


def _unfinished(c: PairCounts) -> str:
    return f"{c.interrupted + c.not_run:,}"


def _cost(c: PairCounts) -> str:
    # Requests of unknown cost: how many, or some (a manifest from before they were counted).
    return cost_text(c.cost_usd, c.unknown_cost if c.unknown_cost or c.cost_known else None)


@dataclass(frozen=True)
class _Count:
    """A column: its heading, how a suite x model's cell reads, and whether the run needs it
    (a column of zeros for every run only when it is one of the usual counts)."""

    heading: str
    read: Callable[[PairCounts], str]
    shown: Callable[[Sequence[PairCounts]], bool] = lambda counts: True


def _any(*names: str) -> Callable[[Sequence[PairCounts]], bool]:
    return lambda counts: any(getattr(c, name) for c in counts for name in names)


def _heading(name: str) -> _Count:
    return _Count(COUNT_HEADINGS[name], _count(name))


_JUDGED = _any("judge_calls", "judge_cached", "unscored")

# The counts in the order they give way to a narrow terminal (suite and model never do).
_COUNTS = (
    _heading("items"),
    _heading("calls"),
    _heading("cached"),
    _heading("errors"),
    _Count("items not finished", _unfinished, _any("interrupted", "not_run")),
    _Count(COUNT_HEADINGS["scorer_errors"], _count("scorer_errors"), _any("scorer_errors")),
    # Stored answers too old to reuse (the model's `reuse_for`), asked again.
    *(_Count(COUNT_HEADINGS[name], _count(name), _any(name)) for name in ("stale", "judge_stale")),
    _Count("cost", _cost),
    _heading("unparsed"),
    _heading("abnormal"),
    _heading("requests"),
    _heading("reasks"),
    *(
        _Count(COUNT_HEADINGS[name], _count(name), _JUDGED)
        for name in ("judge_calls", "judge_cached", "unscored")
    ),
)


def health_table(counts: Sequence[PairCounts], width: int) -> Table:
    """The run's counts per suite x model in a table at most `width` wide, suite and model
    whole; the counts that do not fit named under it."""
    columns = [
        FitColumn("suite", tuple(c.suite for c in counts), whole=True, kept=True),
        FitColumn("model", tuple(c.who for c in counts), whole=True, kept=True),
        *(
            FitColumn(count.heading, tuple(count.read(c) for c in counts), numeric=True)
            for count in _COUNTS
            if count.shown(counts)
        ),
    ]
    fitted = fitted_table(columns, width, HEALTH_TITLE, edge=True)
    return captioned(fitted, width)
