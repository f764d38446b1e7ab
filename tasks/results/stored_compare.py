"""Two landed runs of a panel compared per suite x model (`run_compare`), their scored items read
back from the store (`stored_scored`): what `roadeval compare` shows and a run lands against its
baseline (the `comparisons` table)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from contextlib import closing

import duckdb

from roadeval.benchmarks.registry import get_suite, load_suite
from roadeval.benchmarks.suite import ScoredItem
from roadeval.storage.catalog import connect
from roadeval.storage.store import Store
from roadeval.tasks.results.formats import SuiteRules
from roadeval.tasks.results.intervals import IntervalSettings
from roadeval.tasks.results.run_compare import ModelComparison, compare_model
from roadeval.tasks.results.stored_scored import landed_scores, scored_items

# The tables a comparison reads of each run.
SCORED_TABLES = ("items", "parses", "scores")

# What DuckDB raises for a part it cannot read as Parquet (damaged, cut short), when the view is
# made or queried: the message names the file.
_UNREADABLE = (duckdb.InvalidInputException, duckdb.IOException)


def compare_stored(
    store: Store,
    ids: tuple[str, str],
    pairs: Iterable[tuple[str, str]],
    unchanged: Mapping[str, Collection[str]] | None,
    settings: IntervalSettings,
) -> dict[tuple[str, str], ModelComparison]:
    """Run `ids[1]` against run `ids[0]`, per (suite, model) of `pairs` that both scored;
    `unchanged`: per suite, the ids whose content and prompt did not change (None: by content
    hash alone). A suite not installed here is left out (its statistics are its own); a pair
    whose items cannot be read back has no rows and says why (`ModelComparison.problem`)."""
    wanted = [(s, m) for s, m in sorted(set(pairs)) if load_suite(s) is not None]
    with closing(connect(store, runs=list(ids), tables=SCORED_TABLES)) as con:
        new: dict[tuple[str, str], Sequence[ScoredItem]] = {}
        unread: dict[tuple[str, str], ModelComparison] = {}
        for suite, model in wanted:
            landed = landed_scores(con, ids[1], suite, model)
            try:
                new[(suite, model)] = scored_items(con, landed, landed.values.keys())
            except ValueError as exc:
                unread[(suite, model)] = ModelComparison([], [], [], str(exc))
        return _against(con, ids, new, unchanged, settings) | unread


def compare_with_stored(
    store: Store,
    ids: tuple[str, str],
    new: Mapping[tuple[str, str], Sequence[ScoredItem]],
    unchanged: Mapping[str, Collection[str]] | None,
    settings: IntervalSettings,
) -> dict[tuple[str, str], ModelComparison]:
    """A run's own scored items (`new`, by suite x model, as it holds them at its end) against
    run `ids[0]`'s, read from the store: what the run lands against its baseline. A baseline
    part that cannot be read leaves the pairs it holds uncompared, each saying why."""
    try:
        con = connect(store, runs=[ids[0]], tables=SCORED_TABLES)
    except _UNREADABLE as exc:
        # DuckDB reads a part's footer when its view is made: no pair can be read back.
        problem = _unread(ids[0], exc)
        return {pair: ModelComparison([], [], [], problem) for pair in sorted(new)}
    with closing(con):
        return _against(con, ids, new, unchanged, settings)


def _unread(run_id: str, exc: Exception) -> str:
    """Why a run's scored items could not be read back: DuckDB's first line names the part."""
    return f"run {run_id}'s scored items could not be read back: {str(exc).splitlines()[0]}"


def _against(
    con: duckdb.DuckDBPyConnection,
    ids: tuple[str, str],
    new: Mapping[tuple[str, str], Sequence[ScoredItem]],
    unchanged: Mapping[str, Collection[str]] | None,
    settings: IntervalSettings,
) -> dict[tuple[str, str], ModelComparison]:
    """`new` (by suite x model) against run `ids[0]`'s scored items, read through `con`."""
    rules = SuiteRules({suite for suite, _ in new})
    found: dict[tuple[str, str], ModelComparison] = {}
    for (suite_name, model), items in sorted(new.items()):
        if rules.classes.get(suite_name) is None:
            continue
        try:
            old = landed_scores(con, ids[0], suite_name, model)
            shared = old.values.keys() & {entry.item.item_id for entry in items}
            if not shared:
                continue
            before = scored_items(con, old, shared)
        except ValueError as exc:
            found[(suite_name, model)] = ModelComparison([], [], [], str(exc))
            continue
        except _UNREADABLE as exc:
            found[(suite_name, model)] = ModelComparison([], [], [], _unread(ids[0], exc))
            continue
        found[(suite_name, model)] = compare_model(
            get_suite(suite_name),
            model,
            ids,
            before,
            items,
            settings,
            rules,
            None if unchanged is None else unchanged.get(suite_name, ()),
        )
    return found
