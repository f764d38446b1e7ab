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
    run `ids[0]`'s, read from the store: what the run lands against its baseline."""
    with closing(connect(store, runs=[ids[0]], tables=SCORED_TABLES)) as con:
        return _against(con, ids, new, unchanged, settings)


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
        old = landed_scores(con, ids[0], suite_name, model)
        shared = old.values.keys() & {entry.item.item_id for entry in items}
        if not shared:
            continue
        try:
            before = scored_items(con, old, shared)
        except ValueError as exc:
            found[(suite_name, model)] = ModelComparison([], [], [], str(exc))
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
