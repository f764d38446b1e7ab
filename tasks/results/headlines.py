"""Uncertainty for a suite's headline metrics (`Suite.headline`), suite-wide and per task: a
95% interval on each model's metric row, and for each pair of models their difference over the
items both were scored on, with a paired bootstrap interval (`paired`).

A scope is one set of rows: suite-wide (task '*') or one task. In a scope, the models scored on
the same items share one draw of resamples (`resampling`), so their intervals and their pairs
come from the same resampled items. Suite-wide rows resample within each task (and within the
groups a statistic compares), so each resample keeps the suite's design and the statistic stays
the suite's: a mean of per-task accuracies stays a mean over the same tasks.

Where some of a scope's items share a cluster (`clusters`: a V2X-QA scene's twelve questions),
the draw resamples whole clusters instead, for the intervals and the pairs alike, and every
interval of the scope is a percentile bootstrap (a Wilson interval assumes independent
verdicts). Strata that share a cluster are then joined, as a stratum must hold whole clusters:
a scene asked in every task makes one stratum of all tasks.
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
from roadeval.tasks.results.clusters import (
    SuiteClusters,
    cluster_rows,
    joined_strata,
    suite_clusters,
)
from roadeval.tasks.results.intervals import (
    BOOTSTRAP,
    CLUSTERED,
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
class Draw:
    """How a scope's items are drawn: per item its cluster (None: item by item), the strata
    kept (their labels) and each drawn unit's stratum (a cluster's, or an item's)."""

    codes: NDArray[np.int64] | None
    labels: tuple[str, ...]
    strata: NDArray[np.int64]

    @property
    def clusters(self) -> int | None:
        return None if self.codes is None else len(self.strata)


@dataclass(frozen=True)
class Scope:
    """One set of rows of a suite and variant: suite-wide ('*') or one task, its headlines;
    `clusters`, the suite's (None: its items are independent)."""

    suite: Suite
    variant: str
    task: str
    headlines: tuple[Headline, ...]
    clusters: SuiteClusters | None = None

    def items(self, scored: Items) -> list[ScoredItem]:
        """A model's items in this scope, by item id (every model's in the same order)."""
        inside = [e for e in scored if self.task in (SUITE_WIDE, e.item.task)]
        return sorted(inside, key=lambda entry: entry.item.item_id)

    def strata_labels(self) -> list[str]:
        """What the scope's draws resample within: the task on suite-wide rows, and the item
        labels the scope's statistics compare."""
        labels = sorted({label for h in self.headlines for label in statistic_of(h).strata})
        return ["task", *labels] if self.task == SUITE_WIDE else labels

    def draw(self, items: Items) -> Draw:
        """How `items` are drawn: item by item within their strata (`strata_labels`), or by
        cluster where two of them share one, within strata joined to hold whole clusters
        (the labels then kept: none when the strata were joined into one)."""
        labels = self.strata_labels()
        numbered: dict[tuple[str, ...], int] = {}
        keys = [
            tuple(
                entry.item.task if label == "task" else entry.item.labels.get(label, "")
                for label in labels
            )
            for entry in items
        ]
        strata = np.array([numbered.setdefault(key, len(numbered)) for key in keys], np.int64)
        codes = None
        if self.clusters is not None:
            codes = self.clusters.codes([entry.item.item_id for entry in items])
        if codes is None:
            return Draw(None, tuple(labels), strata)
        joined = joined_strata(strata, codes)
        return Draw(codes, tuple(labels) if joined.max() > 0 else (), joined)


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
    design = scope.draw(items)
    if design.codes is not None:
        drawn = [cluster_rows(matrix, design.codes) for matrix in matrices]
    else:
        drawn = matrices
    sums = resampled_sums(drawn, design.strata, settings.resamples, rng)
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
                clusters=design.clusters,
                strata=design.labels,
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
            # Verdicts of clustered items are not independent: no Wilson interval for them.
            verdicts = entry.statistic.verdicts(entry.sums) if entry.clusters is None else None
            interval = wilson(verdicts) if verdicts is not None else percentile(entry.draws)
            method = _method(scope, entry, verdicts is not None)
            known = used.get((scope.task, entry.metric))
            if known is None or known.items < method.items:
                used[(scope.task, entry.metric)] = method
            if interval is not None:
                out[at] = replace(rows[at], ci_low=interval[0], ci_high=interval[1])
        pairs.extend(scope_pairs(scope, by_model, measured, settings, draws, run_id))
    return HeadlineResults(out, pairs, methods(suite, variant, used))


def _method(scope: Scope, entry: Measured, binomial: bool) -> HeadlineMethod:
    """How `entry`'s interval was computed, over how many items and clusters."""
    clustered = entry.clusters is not None
    return HeadlineMethod(
        suite=scope.suite.name,
        task=scope.task,
        metric=entry.metric,
        method=WILSON if binomial else CLUSTERED if clustered else BOOTSTRAP,
        strata=list(entry.strata),
        variant=scope.variant,
        items=entry.n,
        clusters=entry.clusters,
        unit=scope.suite.cluster_unit if clustered else "",
    )


def scopes(suite: Suite, variant: str, scored: Mapping[str, Items]) -> list[Scope]:
    """Suite-wide, then one per task of the scored items, each with its headlines and the
    suite's clusters over every model's items."""
    declared = [h for h in suite.headline if h.statistic is not None]
    items = {entry.item.item_id: entry.item for found in scored.values() for entry in found}
    tasks = sorted({item.task for item in items.values()})
    clusters = suite_clusters(
        suite.cluster_unit, ((item, suite.cluster_keys(item)) for item in items.values())
    )
    found = [
        Scope(suite, variant, SUITE_WIDE, tuple(h for h in declared if h.task == "*"), clusters)
    ]
    per_task = tuple(h for h in declared if h.task == "")
    found += [Scope(suite, variant, task, per_task, clusters) for task in tasks]
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


def methods(
    suite: Suite, variant: str, used: Mapping[tuple[str, str], HeadlineMethod]
) -> list[HeadlineMethod]:
    """Per declared headline, how its intervals were computed: suite-wide, or in each task
    that has it ('none', under the task declared, without a statistic; a headline no row had
    is left out)."""
    found = []
    for headline in suite.headline:
        if headline.statistic is None:
            found.append(
                HeadlineMethod(
                    suite=suite.name,
                    task=headline.task,
                    metric=headline.metric,
                    method="none",
                    variant=variant,
                )
            )
            continue
        found += [
            method
            for (task, metric), method in used.items()
            if metric == headline.metric and (task == SUITE_WIDE) == (headline.task == SUITE_WIDE)
        ]
    return found
