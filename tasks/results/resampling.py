"""The bootstrap's draws: items resampled with replacement within their strata, one draw shared
by every model scored on those items, returned as each model's resampled column sums.

A headline statistic is a function of column sums over items (`benchmarks.suite.Statistic`),
so a resample is a vector of counts (how often each item was drawn) and its sums are counts @
columns: every resample of every model in one matrix product. Identical columns (a count of
items per group, two models' identical answers) are summed once, so identical inputs give
identical sums, bit for bit, and a paired difference between them is exactly 0.

Two ways to draw the counts, the same distribution: items that agree on every column of every
model and on their stratum are interchangeable, so when such rows are few (0/1 verdicts), the
counts of each distinct row are drawn from a multinomial; otherwise each item's count is drawn
by sampling positions. Either way the draw is one for all the models given together.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]
# Resample x item cells per block of the item-by-item draw (~20 MB of counts at a time).
BLOCK_CELLS = 2_500_000
# Draw per distinct row when there are at most this share of rows per item.
ROWS_PER_ITEM = 0.25


def resampled_sums(
    matrices: Sequence[Array], strata: NDArray[np.int64], resamples: int, rng: np.random.Generator
) -> list[Array]:
    """Per matrix (one model's columns, one row per item, the same items in the same order),
    its column sums over each of `resamples` draws of the items: (resamples, its columns).
    Items are drawn within their stratum (integer codes), so every stratum keeps its size."""
    columns, column_of = distinct_columns(np.concatenate(matrices, axis=1))
    rows, multiplicity = distinct_rows(np.column_stack([strata.astype(np.float64), columns]))
    if len(rows) <= ROWS_PER_ITEM * len(strata):
        sums = _by_distinct_rows(rows[:, 0], multiplicity, rows[:, 1:], resamples, rng)
    else:
        sums = _by_item(strata, columns, resamples, rng)
    split = np.cumsum([matrix.shape[1] for matrix in matrices])[:-1]
    return [sums[:, part] for part in np.split(column_of, split)]


def distinct_columns(stacked: Array) -> tuple[Array, NDArray[np.int64]]:
    """The bitwise-distinct columns, and for each column of `stacked` the index of its own."""
    seen: dict[bytes, int] = {}
    keep: list[int] = []
    column_of: list[int] = []
    for position, column in enumerate(np.ascontiguousarray(stacked.T)):
        key = column.tobytes()
        if key not in seen:
            seen[key] = len(keep)
            keep.append(position)
        column_of.append(seen[key])
    return stacked[:, keep], np.array(column_of, dtype=np.int64)


def distinct_rows(table: Array) -> tuple[Array, NDArray[np.int64]]:
    """The bitwise-distinct rows of `table` and how many times each occurs."""
    table = np.ascontiguousarray(table)
    as_bytes = table.view(np.dtype((np.void, table.dtype.itemsize * table.shape[1]))).ravel()
    _, first, counts = np.unique(as_bytes, return_index=True, return_counts=True)
    return table[first], counts


def _by_distinct_rows(
    row_strata: Array,
    multiplicity: NDArray[np.int64],
    values: Array,
    resamples: int,
    rng: np.random.Generator,
) -> Array:
    """Counts of each distinct row, multinomial within each stratum, times the rows' values,
    block by block."""
    groups = [np.flatnonzero(row_strata == stratum) for stratum in np.unique(row_strata)]
    block = max(1, BLOCK_CELLS // len(values))
    sums = np.empty((resamples, values.shape[1]))
    for first in range(0, resamples, block):
        rows = min(block, resamples - first)
        counts = np.zeros((rows, len(values)))
        for members in groups:
            size = multiplicity[members]
            total = int(size.sum())
            counts[:, members] = rng.multinomial(total, size / total, size=rows)
        sums[first : first + rows] = counts @ values
    return sums


def _by_item(
    strata: NDArray[np.int64], columns: Array, resamples: int, rng: np.random.Generator
) -> Array:
    """Each item's count, from positions drawn uniformly within its stratum, block by block."""
    order = np.argsort(strata, kind="stable")
    values = columns[order]
    bounds = np.flatnonzero(np.diff(strata[order])) + 1
    starts = np.concatenate([[0], bounds])
    ends = np.concatenate([bounds, [len(order)]])
    block = max(1, BLOCK_CELLS // max(len(order), 1))
    sums = np.empty((resamples, columns.shape[1]))
    for first in range(0, resamples, block):
        rows = min(block, resamples - first)
        counts = np.empty((rows, len(order)))
        for start, end in zip(starts, ends, strict=True):
            size = int(end - start)
            drawn = rng.integers(0, size, size=(rows, size))
            drawn += (np.arange(rows) * size)[:, None]
            counts[:, start:end] = np.bincount(drawn.ravel(), minlength=rows * size).reshape(
                rows, size
            )
        sums[first : first + rows] = counts @ values
    return sums
