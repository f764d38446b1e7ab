"""One model's headline metrics in a run against an earlier run of its panel, over the items both
scored with unchanged inputs: the two values, their paired difference with its interval and
significance, and the items that regressed and improved.

The two runs are measured as two models of one run are (`headlines.measure`, `paired.pair_row`):
one draw of resamples shared by both sides, whole clusters where the suite's items share a scene
(`Suite.cluster_keys`), so what the items have in common cancels and identical answers give a
difference of exactly 0 in every resample, never significant.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from roadeval.benchmarks.suite import ScoredItem, Suite
from roadeval.storage.records import ComparisonRow
from roadeval.tasks.results.formats import SuiteRules
from roadeval.tasks.results.headlines import measure, scopes
from roadeval.tasks.results.intervals import IntervalSettings, bootstrap_p
from roadeval.tasks.results.paired import pair_row

# The two sides' names inside one draw (never shown).
_OLD, _NEW = "baseline", "new"


@dataclass(frozen=True)
class ModelComparison:
    """One suite x model's rows, and the ids of the items whose scores moved the worse and
    the better way (by each item metric's direction); `problem`, why there are none when the
    two runs' items could not be read back (the rest of a comparison goes on without them)."""

    rows: list[ComparisonRow]
    regressed: list[str]
    improved: list[str]
    problem: str = ""


def unchanged_pairs(
    old: Sequence[ScoredItem], new: Sequence[ScoredItem], unchanged: Collection[str] | None
) -> tuple[list[ScoredItem], list[ScoredItem]]:
    """Each side's items among those both scored with the same content (and, when given, among
    `unchanged`: the ids whose prompt did not change either), in one order."""
    before = {entry.item.item_id: entry for entry in old}
    shared = sorted(
        entry.item.item_id
        for entry in new
        if (was := before.get(entry.item.item_id)) is not None
        and was.item.content_hash == entry.item.content_hash
        and (unchanged is None or entry.item.item_id in unchanged)
    )
    after = {entry.item.item_id: entry for entry in new}
    return [before[i] for i in shared], [after[i] for i in shared]


def moved_items(
    suite: str, old: Sequence[ScoredItem], new: Sequence[ScoredItem], rules: SuiteRules
) -> tuple[list[str], list[str]]:
    """The items (paired, in one order) whose per-item scores moved only the worse way, and
    only the better way, by each metric's direction (a metric with none does not count)."""
    regressed: list[str] = []
    improved: list[str] = []
    for a, b in zip(old, new, strict=True):
        ways = {
            rules.metric(suite, metric).verdict(b.values[metric] - a.values[metric]).value
            for metric in a.values.keys() & b.values.keys()
            if b.values[metric] != a.values[metric]
        }
        if "worse" in ways and "better" not in ways:
            regressed.append(b.item.item_id)
        elif "better" in ways and "worse" not in ways:
            improved.append(b.item.item_id)
    return regressed, improved


def compare_model(
    suite: Suite,
    model: str,
    ids: tuple[str, str],
    old: Sequence[ScoredItem],
    new: Sequence[ScoredItem],
    settings: IntervalSettings,
    rules: SuiteRules,
    unchanged: Collection[str] | None = None,
) -> ModelComparison:
    """Run `ids[1]`'s scored items of `suite` x `model` against run `ids[0]`'s: per headline
    scope (suite-wide, each task) and metric, a row over the items both scored unchanged."""
    baseline_run, run = ids
    before, after = unchanged_pairs(old, new, unchanged)
    regressed, improved = moved_items(suite.name, before, after, rules)
    worse, better = set(regressed), set(improved)
    rows: list[ComparisonRow] = []
    if not before:
        return ModelComparison(rows, regressed, improved)
    draws = itertools.count()
    sides = {_OLD: before, _NEW: after}
    for scope in scopes(suite, "", sides):
        paired = {side: scope.items(items) for side, items in sides.items()}
        if not paired[_NEW]:
            continue
        wanted = {side: (items, list(scope.headlines)) for side, items in paired.items()}
        measured = measure(scope, wanted, settings, next(draws))
        in_scope = {entry.item.item_id for entry in paired[_NEW]}
        for headline in scope.headlines:
            found = {m.model: m for m in measured if m.metric == headline.metric}
            if len(found) != 2:
                continue  # undefined on these items in one run or both
            pair = pair_row(found[_NEW], found[_OLD], run, suite.name, scope.task, "")
            if pair is None:
                continue
            rows.append(
                ComparisonRow(
                    run_id=run,
                    baseline_run_id=baseline_run,
                    suite=suite.name,
                    task=scope.task,
                    model=model,
                    metric=headline.metric,
                    n=pair.n,
                    baseline_value=found[_OLD].value,
                    new_value=found[_NEW].value,
                    difference=pair.difference,
                    ci_low=pair.ci_low,
                    ci_high=pair.ci_high,
                    significant=pair.significant,
                    regressed=len(worse & in_scope),
                    improved=len(better & in_scope),
                    clusters=found[_NEW].clusters,
                    p_value=bootstrap_p(found[_NEW].draws - found[_OLD].draws),
                )
            )
    return ModelComparison(rows, regressed, improved)
