"""Uncertainty for a suite's headline metrics (`Suite.headline`), suite-wide and per task: a
95% interval on each model's metric row, and for each pair of models their difference over the
items both were scored on, with a paired bootstrap interval (`paired`).

A scope is one set of rows: suite-wide (task '*') or one task. In a scope, the models scored on
the same items share one draw of resamples (`resampling`), so their intervals and their pairs
come from the same resampled items. Suite-wide rows resample within each task (and within the
groups a statistic compares), so each resample keeps the suite's design and the statistic stays
the suite's: a mean of per-task accuracies stays a mean over the same tasks.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from roadeval.benchmarks.suite import Headline, ScoredItem, Statistic, Suite
from roadeval.storage.records import MetricPairRow, MetricRow
from roadeval.tasks.results.intervals import (
    BOOTSTRAP,
    WILSON,
    IntervalSettings,
    percentile,
    seeded,
    wilson,
)
from roadeval.tasks.results.manifest import HeadlineMethod
from roadeval.tasks.results.paired import Measured, pair_row
from roadeval.tasks.results.resampling import resampled_sums

SUITE_WIDE = "*"
Items = Sequence[ScoredItem]


@dataclass(frozen=True)
class HeadlineResults:
    """A suite's metric rows with the headline rows' intervals set, the pairs' rows, and per
    headline how its intervals were computed."""

    rows: list[MetricRow]
    pairs: list[MetricPairRow]
    methods: list[HeadlineMethod]


def statistic_of(headline: Headline) -> Statistic:
    if headline.statistic is None:
        raise ValueError(f"headline {headline.metric!r} declares no statistic")
    return headline.statistic


@dataclass(frozen=True)
class Scope:
    """One set of rows of a suite and variant: suite-wide ('*') or one task, its headlines."""

    suite: Suite
    variant: str
    task: str
    headlines: tuple[Headline, ...]

    def items(self, scored: Items) -> list[ScoredItem]:
        """A model's items in this scope, by item id (every model's in the same order)."""
        inside = [e for e in scored if self.task in (SUITE_WIDE, e.item.task)]
        return sorted(inside, key=lambda entry: entry.item.item_id)

    def strata_labels(self) -> list[str]:
        """What the scope's draws resample within: the task on suite-wide rows, and the item
        labels the scope's statistics compare."""
        labels = sorted({label for h in self.headlines for label in statistic_of(h).strata})
        return ["task", *labels] if self.task == SUITE_WIDE else labels

    def strata(self, items: Items) -> NDArray[np.int64]:
        """Each item's stratum (`strata_labels`) as an integer code."""
        labels = self.strata_labels()
        codes: dict[tuple[str, ...], int] = {}
        keys = [
            tuple(
                entry.item.task if label == "task" else entry.item.labels.get(label, "")
                for label in labels
            )
            for entry in items
        ]
        return np.array([codes.setdefault(key, len(codes)) for key in keys], dtype=np.int64)


def measure(
    scope: Scope,
    wanted: Mapping[str, tuple[Items, Sequence[Headline]]],
    settings: IntervalSettings,
    draw: int,
) -> list[Measured]:
    """Per model (its items: the same ids in the same order for all) and headline, the metric
    over the items and in each resample of one draw shared by all of them."""
    matrices: list[NDArray[np.float64]] = []
    layout: list[tuple[int, str, Headline, int, int]] = []
    for model, (items, headlines) in wanted.items():
        start, parts = 0, []
        for headline in headlines:
            columns = statistic_of(headline).columns(items)
            if columns is not None:
                layout.append((len(matrices), model, headline, start, columns.shape[1]))
                parts.append(columns)
                start += columns.shape[1]
        if parts:
            matrices.append(np.concatenate(parts, axis=1))
    if not matrices:
        return []
    items = next(iter(wanted.values()))[0]
    ids = [entry.item.item_id for entry in items]
    rng = seeded(settings.seed, scope.suite.name, scope.variant, scope.task, *ids)
    sums = resampled_sums(matrices, scope.strata(items), settings.resamples, rng)
    measured = []
    for matrix, model, headline, start, width in layout:
        statistic = statistic_of(headline)
        full = matrices[matrix][:, start : start + width].sum(axis=0)
        measured.append(
            Measured(
                model=model,
                metric=headline.metric,
                statistic=statistic,
                value=float(statistic.value(full[None, :])[0]),
                sums=full,
                draws=statistic.value(sums[matrix][:, start : start + width]),
                n=len(items),
                draw=draw,
            )
        )
    return measured


def headline_intervals(
    suite: Suite,
    scored: Mapping[str, Items],
    rows: Sequence[MetricRow],
    settings: IntervalSettings,
    run_id: str,
    variant: str = "",
) -> HeadlineResults:
    """`rows` (the suite's metric rows of every model, from `aggregate`) with intervals on the
    headline rows of `variant`, the pairs' rows, and the methods; `scored`: each model's
    scored items."""
    out = list(rows)
    index = {
        (row.model, row.task, row.metric): at
        for at, row in enumerate(rows)
        if row.suite == suite.name and row.slice == "" and row.variant == variant
    }
    pairs: list[MetricPairRow] = []
    used: dict[tuple[str, str], HeadlineMethod] = {}
    draws = itertools.count()
    for scope in scopes(suite, variant, scored):
        by_model = {model: scope.items(items) for model, items in sorted(scored.items())}
        measured: list[Measured] = []
        for group in same_items(by_model):
            wanted = {}
            for model in group:
                # Only the headlines the model's rows have a (finite) value for.
                with_rows = [
                    h
                    for h in scope.headlines
                    if (at := index.get((model, scope.task, h.metric))) is not None
                    and math.isfinite(rows[at].value)
                ]
                wanted[model] = (by_model[model], with_rows)
            found = measure(scope, wanted, settings, next(draws))
            missing = {(m, h.metric) for m, (_, hs) in wanted.items() for h in hs}
            missing -= {(entry.model, entry.metric) for entry in found}
            if missing:
                model, metric = sorted(missing)[0]
                raise ValueError(
                    f"suite {suite.name!r}, task {scope.task!r}, model {model!r}: headline "
                    f"{metric!r} has a value, but its statistic finds it undefined"
                )
            measured.extend(found)
        for entry in measured:
            at = index[(entry.model, scope.task, entry.metric)]
            check(scope, entry, rows[at].value)
            verdicts = entry.statistic.verdicts(entry.sums)
            interval = wilson(verdicts) if verdicts is not None else percentile(entry.draws)
            declared = SUITE_WIDE if scope.task == SUITE_WIDE else ""
            used[(declared, entry.metric)] = HeadlineMethod(
                suite=suite.name,
                task=declared,
                metric=entry.metric,
                method=WILSON if verdicts is not None else BOOTSTRAP,
                strata=scope.strata_labels(),
            )
            if interval is not None:
                out[at] = replace(rows[at], ci_low=interval[0], ci_high=interval[1])
        pairs.extend(scope_pairs(scope, by_model, measured, settings, draws, run_id))
    return HeadlineResults(out, pairs, methods(suite, used))


def scopes(suite: Suite, variant: str, scored: Mapping[str, Items]) -> list[Scope]:
    """Suite-wide, then one per task of the scored items, each with its headlines."""
    declared = [h for h in suite.headline if h.statistic is not None]
    tasks = sorted({entry.item.task for items in scored.values() for entry in items})
    found = [Scope(suite, variant, SUITE_WIDE, tuple(h for h in declared if h.task == "*"))]
    per_task = tuple(h for h in declared if h.task == "")
    found += [Scope(suite, variant, task, per_task) for task in tasks]
    return [scope for scope in found if scope.headlines]


def same_items(by_model: Mapping[str, Items]) -> list[list[str]]:
    """Models grouped by the items they were scored on (usually one group: all of them)."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for model, items in by_model.items():
        if items:
            groups.setdefault(tuple(e.item.item_id for e in items), []).append(model)
    return list(groups.values())


def check(scope: Scope, entry: Measured, reported: float) -> None:
    """The statistic recomputed over all items must be the suite's own number: an interval
    around another number would be wrong, so a mismatch is an error."""
    if not math.isclose(entry.value, reported, rel_tol=1e-9, abs_tol=1e-12):
        raise ValueError(
            f"suite {scope.suite.name!r}, task {scope.task!r}, model {entry.model!r}: the "
            f"statistic of headline {entry.metric!r} gives {entry.value!r}, the suite's "
            f"metric {reported!r}"
        )


def scope_pairs(
    scope: Scope,
    by_model: Mapping[str, Items],
    measured: Sequence[Measured],
    settings: IntervalSettings,
    draws: itertools.count[int],
    run_id: str,
) -> list[MetricPairRow]:
    """Every pair of models with the metric, per headline: from their shared draw when they
    were scored on the same items, else from a draw of the items both were scored on."""
    rows: list[MetricPairRow] = []
    for headline in scope.headlines:
        found = sorted((m for m in measured if m.metric == headline.metric), key=lambda m: m.model)
        for a, b in itertools.combinations(found, 2):
            if a.draw != b.draw:
                shared = _shared(by_model[a.model], by_model[b.model])
                if not shared[0]:
                    continue
                wanted = {
                    a.model: (shared[0], [headline]),
                    b.model: (shared[1], [headline]),
                }
                redrawn = measure(scope, wanted, settings, next(draws))
                if len(redrawn) != 2:
                    continue
                a, b = redrawn
            row = pair_row(a, b, run_id, scope.suite.name, scope.task, scope.variant)
            if row is not None:
                rows.append(row)
    return rows


def _shared(a: Items, b: Items) -> tuple[list[ScoredItem], list[ScoredItem]]:
    """Each model's items among those both were scored on, in the same order."""
    ids = {entry.item.item_id for entry in a} & {entry.item.item_id for entry in b}
    return [e for e in a if e.item.item_id in ids], [e for e in b if e.item.item_id in ids]


def methods(suite: Suite, used: Mapping[tuple[str, str], HeadlineMethod]) -> list[HeadlineMethod]:
    """Per declared headline, how its intervals were computed ('none' without a statistic; a
    headline no row had is left out)."""
    found = []
    for headline in suite.headline:
        if headline.statistic is None:
            found.append(
                HeadlineMethod(
                    suite=suite.name, task=headline.task, metric=headline.metric, method="none"
                )
            )
        elif (headline.task, headline.metric) in used:
            found.append(used[(headline.task, headline.metric)])
    return found
