"""Which items of a suite a bootstrap draws together: items that share what they show (a scene,
an image, a clip: `Suite.cluster_keys`) are one cluster, and so, transitively, are items linked
through others (a V2X-QA roadside question shares its image with the cooperative question that
also shows the vehicle's: all three views of the scene are one cluster).

A clustered draw resamples whole clusters: each cluster's items are summed into one row, and
the rows are drawn as items were (`resampling`), so a resample's metric is the ratio of sums
over the drawn clusters. A scope in which no cluster has two items is drawn item by item, as it
always was: its intervals do not change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from roadeval.benchmarks.item import Item

Array = NDArray[np.float64]
Codes = NDArray[np.int64]


@dataclass(frozen=True)
class SuiteClusters:
    """A suite's clusters: each item id's cluster (an integer), and what a cluster is called."""

    unit: str
    of: Mapping[str, int]

    def codes(self, ids: Sequence[str]) -> Codes | None:
        """The clusters of these items, numbered 0.. in order of first appearance; None when
        no two of them share a cluster (the items are then drawn one by one)."""
        numbered: dict[int, int] = {}
        codes = np.array(
            [numbered.setdefault(self.of[i], len(numbered)) for i in ids], dtype=np.int64
        )
        return codes if len(numbered) < len(ids) else None


def components(count: int, links: Iterable[tuple[int, int]]) -> list[int]:
    """Per node 0..count-1, the smallest node of its connected component under `links`."""
    parent = list(range(count))

    def root(node: int) -> int:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for a, b in links:
        first, second = root(a), root(b)
        if first != second:
            parent[max(first, second)] = min(first, second)
    return [root(node) for node in range(count)]


def suite_clusters(unit: str, keys: Iterable[tuple[Item, tuple[str, ...]]]) -> SuiteClusters:
    """Clusters of items given with their keys (an item id given twice counts once): the
    connected components of items sharing a key, an item without keys alone."""
    ids: dict[str, int] = {}
    owner: dict[str, int] = {}
    links: list[tuple[int, int]] = []
    for item, shared in keys:
        if item.item_id in ids:
            continue
        node = ids[item.item_id] = len(ids)
        links += [(owner.setdefault(key, node), node) for key in shared]
    found = components(len(ids), links)
    return SuiteClusters(unit, {item_id: found[node] for item_id, node in ids.items()})


def cluster_rows(matrix: Array, codes: Codes) -> Array:
    """`matrix`'s rows (one per item) summed per cluster: one row per cluster, in code order."""
    order = np.argsort(codes, kind="stable")
    starts = np.flatnonzero(np.diff(codes[order], prepend=-1))
    return np.add.reduceat(matrix[order], starts, axis=0)


def joined_strata(strata: Codes, codes: Codes) -> Codes:
    """Per cluster, its stratum, numbered 0..: an item's stratum (`strata`), joined with every
    other stratum one of its cluster's items is in, since a stratum must hold whole clusters
    (a scene asked in every task makes one stratum of all tasks)."""
    count = int(codes.max()) + 1
    first = np.full(count, -1, dtype=np.int64)
    links = []
    for cluster, stratum in zip(codes.tolist(), strata.tolist(), strict=True):
        if first[cluster] < 0:
            first[cluster] = stratum
        else:
            links.append((int(first[cluster]), stratum))
    joined = components(int(strata.max()) + 1, links)
    numbered: dict[int, int] = {}
    return np.array([numbered.setdefault(joined[s], len(numbered)) for s in first], np.int64)
