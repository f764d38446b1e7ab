"""How long STRIDE's trajectory metrics take over a corpus: synthesise N predicted and ground-truth
trajectories of 4-6 points (both padded with NaN to 6, lengths drawn independently, so unequal
lengths are compared as the release compares them), then time ADE, FDE and min-FDE on one core.
Prints each metric's share and the total; the target is 1 s for 1,000,000 trajectories.

    taskset -c 0 .venv/bin/python bench/stride_trajectories.py [--trajectories 1000000] [--seed 7]

The figure covers `trajectory_errors` (all three metrics in one vectorised pass) and, separately,
each metric computed alone, to show where the time goes.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from roadeval.benchmarks.stride.trajectory_metrics import TrajectoryErrors, trajectory_errors

MAX_POINTS = 6
TARGET_S = 1.0  # for 1,000,000 trajectories on one core


def synthesise(count: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    steps = np.arange(1, MAX_POINTS + 1, dtype=np.float64)
    speed = rng.uniform(0.0, 15.0, size=(count, 1))
    curve = rng.normal(0.0, 0.02, size=(count, 1))
    gt = np.stack([speed * 0.5 * steps, curve * (speed * 0.5 * steps) ** 2], axis=-1)
    pred = gt + rng.normal(0.0, 1.0, size=gt.shape)
    gt_n = rng.integers(4, MAX_POINTS + 1, size=count)
    pred_n = rng.integers(4, MAX_POINTS + 1, size=count)
    columns = np.arange(MAX_POINTS)[None, :]
    gt[columns >= gt_n[:, None]] = np.nan
    pred[columns >= pred_n[:, None]] = np.nan
    return pred, gt, pred_n, gt_n


def _timed(label: str, fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    elapsed = time.perf_counter() - start
    print(f"  {label:<34} {elapsed:8.3f} s")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trajectories", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    pred, gt, pred_n, gt_n = synthesise(args.trajectories, args.seed)
    print(f"{args.trajectories:,} trajectories of 4-{MAX_POINTS} points")

    def ade_only() -> None:
        n = np.minimum(pred_n, gt_n)
        d = np.hypot(pred[..., 0] - gt[..., 0], pred[..., 1] - gt[..., 1])
        np.where(np.arange(MAX_POINTS)[None, :] < n[:, None], d, 0.0).sum(axis=1) / n

    def fde_only() -> None:
        n = np.minimum(pred_n, gt_n) - 1
        rows = np.arange(len(n))
        np.hypot(pred[rows, n, 0] - gt[rows, n, 0], pred[rows, n, 1] - gt[rows, n, 1])

    def min_fde_only() -> None:
        n = np.minimum(pred_n, gt_n)
        rows = np.arange(len(n))
        end = pred[rows, n - 1]
        d = np.hypot(end[:, None, 0] - gt[..., 0], end[:, None, 1] - gt[..., 1])
        np.where(np.arange(MAX_POINTS)[None, :] < n[:, None], d, np.inf).min(axis=1)

    print("each metric alone:")
    _timed("ADE", ade_only)
    _timed("FDE", fde_only)
    _timed("min-FDE", min_fde_only)
    print("the corpus function (all three, one pass):")
    result: list[TrajectoryErrors] = []
    total = _timed(
        "trajectory_errors", lambda: result.append(trajectory_errors(pred, gt, pred_n, gt_n))
    )
    means = result[0].means()
    print(
        f"  means: ADE {means['ade']:.4f}  FDE {means['fde']:.4f}  min-FDE {means['min_fde']:.4f}"
    )
    verdict = "within" if total <= TARGET_S else "OVER"
    print(
        f"total: {total:.3f} s for {args.trajectories:,} trajectories "
        f"(target {TARGET_S:g} s for 1,000,000: {verdict} target)"
    )


if __name__ == "__main__":
    main()
