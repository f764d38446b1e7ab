"""The bootstrap's draws: every resample draws as many items as there are, within each stratum;
the draw by distinct rows and the draw item by item are the same distribution; identical
columns get identical sums."""

from __future__ import annotations

import numpy as np
import pytest

from roadeval.tasks.results import resampling
from roadeval.tasks.results.resampling import resampled_sums

N = 400


def _data() -> tuple[list[np.ndarray], np.ndarray]:
    """Two models' 0/1 verdicts and a count column, over two strata of 100 and 300 items."""
    rng = np.random.default_rng(0)
    strata = np.repeat([0, 1], [100, 300])
    first = np.column_stack([rng.random(N) < 0.3, np.ones(N), strata == 0]).astype(float)
    second = np.column_stack([rng.random(N) < 0.7, np.ones(N)]).astype(float)
    return [first, second], strata


@pytest.fixture(params=["distinct rows", "item by item"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test runs with either draw forced."""
    monkeypatch.setattr(
        resampling, "ROWS_PER_ITEM", 1.0 if request.param == "distinct rows" else 0.0
    )
    return str(request.param)


def test_each_resample_draws_every_stratum_at_its_size(path: str) -> None:
    matrices, strata = _data()
    first, second = resampled_sums(matrices, strata, 500, np.random.default_rng(1))
    assert first.shape == (500, 3) and second.shape == (500, 2)
    assert (first[:, 1] == N).all() and (second[:, 1] == N).all()
    assert (first[:, 2] == 100).all()  # the first stratum keeps its 100 items
    assert first[:, 0].std() > 0  # and the verdicts vary between resamples


def test_both_draws_are_the_same_distribution(monkeypatch: pytest.MonkeyPatch) -> None:
    """Means and spreads of the resampled sums agree (4,000 resamples: their standard errors
    are ~1.6% of the mean's spread and ~1.1% of the spread's)."""
    matrices, strata = _data()
    found = {}
    for share in (1.0, 0.0):
        monkeypatch.setattr(resampling, "ROWS_PER_ITEM", share)
        sums = resampled_sums(matrices, strata, 4000, np.random.default_rng(2))
        found[share] = np.column_stack([sums[0][:, 0], sums[1][:, 0]])
    by_rows, by_item = found[1.0], found[0.0]
    spread = by_item.std(axis=0)
    assert np.abs(by_rows.mean(axis=0) - by_item.mean(axis=0)).max() < 0.1 * spread.min()
    assert by_rows.std(axis=0) == pytest.approx(spread, rel=0.06)
    # Both near the analytic spread of a stratified sum of Bernoulli draws.
    first, second = matrices[0][:, 0], matrices[1][:, 0]
    expected = [
        np.sqrt(sum(s.size * s.var() for s in (column[:100], column[100:])))
        for column in (first, second)
    ]
    assert spread == pytest.approx(expected, rel=0.06)


def test_identical_columns_get_identical_sums_bit_for_bit(path: str) -> None:
    rng = np.random.default_rng(3)
    values = np.column_stack([rng.normal(size=N), np.ones(N)])
    first, second = resampled_sums([values, values.copy()], np.zeros(N, dtype=np.int64), 300, rng)
    assert np.array_equal(first, second)


def test_the_same_generator_state_gives_the_same_draw(path: str) -> None:
    matrices, strata = _data()
    once = resampled_sums(matrices, strata, 200, np.random.default_rng(4))
    again = resampled_sums(matrices, strata, 200, np.random.default_rng(4))
    assert all(np.array_equal(a, b) for a, b in zip(once, again, strict=True))


def test_draws_work_block_by_block(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Resamples drawn a few at a time (so memory stays bounded) still draw every item."""
    matrices, strata = _data()
    monkeypatch.setattr(resampling, "BLOCK_CELLS", 7)
    blocks = resampled_sums(matrices, strata, 50, np.random.default_rng(5))
    assert all((sums[:, 1] == N).all() for sums in blocks)
    assert blocks[0][:, 0].std() > 0
