"""Discrete Fréchet distance (Eiter & Mannila: the coupling over vertices only), vectorised in
numpy over every pair of two sets of polylines at once.

The recurrence ca[i, j] = max(min(ca[i-1, j], ca[i, j-1], ca[i-1, j-1]), d(a_i, b_j)) only links
a cell to the previous two anti-diagonals, so each anti-diagonal of all pairs is one numpy step.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import as_strided


def pad_by_last_vertex(lines: Sequence[np.ndarray], length: int) -> np.ndarray:
    """Stack (k_i, 2) vertex arrays into (2, n, length) x and y planes, repeating each line's
    last vertex. A repeated vertex leaves the discrete Fréchet distance unchanged (a coupling can
    wait on it), so padded pairs give exactly the distance of the unpadded lines."""
    out = np.empty((2, len(lines), length))
    for row, vertices in enumerate(lines):
        count = len(vertices)
        out[:, row, :count] = vertices.T
        out[:, row, count:] = vertices[-1][:, None]
    return out


def distance_table(a: np.ndarray, b: np.ndarray, width: int) -> np.ndarray:
    """(P, G, n, width) table: vertex distances of every line pair in the first m columns and
    +inf after them. Distances are sqrt(dx^2 + dy^2), as scipy's cdist computes them."""
    _, lines_a, n = a.shape
    _, lines_b, m = b.shape
    table = np.empty((lines_a, lines_b, n, width))
    table[..., m:] = np.inf
    dist = table[..., :m]
    np.subtract(a[0][:, None, :, None], b[0][None, :, None, :], out=dist)
    np.multiply(dist, dist, out=dist)
    dy = a[1][:, None, :, None] - b[1][None, :, None, :]
    np.multiply(dy, dy, out=dy)
    np.add(dist, dy, out=dist)
    np.sqrt(dist, out=dist)
    return table


def frechet_matrix(first: Sequence[np.ndarray], second: Sequence[np.ndarray]) -> np.ndarray:
    """(len(first), len(second)) discrete Fréchet distances; every line needs >= 1 vertex."""
    if not first or not second:
        return np.zeros((len(first), len(second)))
    n = max(len(line) for line in first)
    m = max(len(line) for line in second)
    # The distance is symmetric; the shorter side indexes the diagonal vectors (less work).
    if n > m:
        return frechet_matrix(second, first).T
    pairs = len(first) * len(second)
    width = n + m
    table = distance_table(
        pad_by_last_vertex(first, n), pad_by_last_vertex(second, m), width
    ).reshape(pairs, n, width)
    # Read with a row stride one short of the row length, row i shifts right by i: column k holds
    # cell (i, k - i) of anti-diagonal k, and +inf where that cell does not exist.
    step = table.strides[2]
    diagonals = as_strided(
        table, shape=(pairs, n, n + m - 1), strides=(table.strides[0], (width - 1) * step, step)
    )
    # Column 0 of each state is a fixed +inf border, so index p holds row i = p - 1.
    before_last = np.full((pairs, n + 1), np.inf)
    last = np.full((pairs, n + 1), np.inf)
    current = np.full((pairs, n + 1), np.inf)
    last[:, 1:] = diagonals[:, :, 0]
    reach = np.empty((pairs, n))
    for k in range(1, n + m - 1):
        # up = (i-1, j) and left = (i, j-1) lie on diagonal k-1, the corner (i-1, j-1) on k-2.
        np.minimum(last[:, :-1], last[:, 1:], out=reach)
        np.minimum(reach, before_last[:, :-1], out=reach)
        np.maximum(reach, diagonals[:, :, k], out=current[:, 1:])
        before_last, last, current = last, current, before_last
    return last[:, n].reshape(len(first), len(second))


def frechet_pair(first: np.ndarray, second: np.ndarray) -> float:
    """The distance of one pair of polylines, (k, 2) vertex arrays."""
    return float(frechet_matrix([first], [second])[0, 0])
