"""Two landed runs of a panel compared per suite x model (`run_compare`), their scored items read
back from the store (`stored_scored`): what `roadeval compare` shows and a run lands against its
baseline (the `comparisons` table)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from contextlib import closing

from roadeval.benchmarks.registry import get_suite
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
    hash alone). A suite not installed here is left out (its statistics are its own)."""
    wanted = sorted(set(pairs))
    rules = SuiteRules({suite for suite, _ in wanted})
    found: dict[tuple[str, str], ModelComparison] = {}
    with closing(connect(store, runs=list(ids), tables=SCORED_TABLES)) as con:
        for suite_name, model in wanted:
            if rules.classes.get(suite_name) is None:
                continue
            old, new = (landed_scores(con, run, suite_name, model) for run in ids)
            shared = old.values.keys() & new.values.keys()
            if not shared:
                continue
            found[(suite_name, model)] = compare_model(
                get_suite(suite_name),
                model,
                ids,
                scored_items(con, old, shared),
                scored_items(con, new, shared),
                settings,
                rules,
                None if unchanged is None else unchanged.get(suite_name, ()),
            )
    return found


def compare_with_stored(
    store: Store,
    ids: tuple[str, str],
    new: Mapping[tuple[str, str], Sequence[ScoredItem]],
    unchanged: Mapping[str, Collection[str]] | None,
    settings: IntervalSettings,
) -> dict[tuple[str, str], ModelComparison]:
    """A run's own scored items (`new`, by suite x model, as it holds them at its end) against
    run `ids[0]`'s, read from the store: what the run lands against its baseline."""
    rules = SuiteRules({suite for suite, _ in new})
    found: dict[tuple[str, str], ModelComparison] = {}
    with closing(connect(store, runs=[ids[0]], tables=SCORED_TABLES)) as con:
        for (suite_name, model), items in sorted(new.items()):
            if rules.classes.get(suite_name) is None:
                continue
            old = landed_scores(con, ids[0], suite_name, model)
            shared = old.values.keys() & {entry.item.item_id for entry in items}
            if not shared:
                continue
            found[(suite_name, model)] = compare_model(
                get_suite(suite_name),
                model,
                ids,
                scored_items(con, old, shared),
                items,
                settings,
                rules,
                None if unchanged is None else unchanged.get(suite_name, ()),
            )
    return found
