"""How long `roadeval history` and a panel's history page take on a long-watched panel (issue 41):
a synthetic store of `--runs` finished runs of one panel of `--models` models x `--items` items x
the five suites, each landed as a run lands its corpus rows (`bench/report_build.py`'s metrics:
suite-wide, per task, per slice, headline intervals; one part per table per run), with the
`comparisons` each run lands against the one before (one model drifting at the middle run, with
a new system fingerprint in its manifest's `served` records), and its `run_events` row.

History reads corpus rows only, never an item row, so the runs' item tables are not made here:
at full size they would be some 2 GB a run (`bench/report_build.py` times a report over them).

    .venv/bin/python bench/history.py [--runs 50] [--models 20] [--items 10000] [--keep]

Targets: `roadeval history` (a process, imports included) under 10 s; the page under 20 s.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from statistics import NormalDist

import numpy as np

# Run as a script, bench/ is first on the path: the report bench's synthetic rows.
from report_build import NOW, SUITES, TASK_METRICS, WIDE_METRICS, metric_rows, run_event

from roadeval.storage.landing import Part, land
from roadeval.storage.records import ComparisonRow, MetricRow
from roadeval.storage.store import Store, open_store

PANEL = "bench-history"
HISTORY_TARGET_S = 10.0
PAGE_TARGET_S = 20.0
DRIFTING = "model-07"


def run_id(k: int) -> str:
    return f"{NOW + timedelta(days=7 * k):%Y%m%dT%H%M%SZ}-hist{k:04d}"


def headlines(rows: list[MetricRow]) -> list[MetricRow]:
    """The rows a run's comparisons are about: its headlines with intervals (suite-wide where
    the suite has them, per task otherwise), as `history` shows them."""
    return [
        r
        for r in rows
        if r.slice == ""
        and (
            (r.task == "*" and r.metric in WIDE_METRICS[r.suite][:3])
            or (not WIDE_METRICS[r.suite] and r.metric == TASK_METRICS[r.suite][0])
        )
    ]


# RoadBench's headlines, all per task (`TASK_METRICS` also has its counts).
ROADBENCH_HEADLINES = ("f1", "exact_match", "buffer_f1@0.2", "accuracy")


def with_intervals(rows: list[MetricRow]) -> list[MetricRow]:
    """RoadBench's per-task headlines carry intervals, as a run lands them (its headlines are
    all per task)."""
    out = []
    for r in rows:
        if (
            r.suite == "roadbench"
            and r.task != "*"
            and r.slice == ""
            and r.metric in ROADBENCH_HEADLINES
            and r.ci_low is None
        ):
            r = replace(r, ci_low=max(0.0, r.value - 0.05), ci_high=min(1.0, r.value + 0.05))
        out.append(r)
    return out


def comparisons(
    k: int,
    drift_at: int,
    before: list[MetricRow],
    after: list[MetricRow],
    items: int,
    rng: np.random.Generator,
) -> list[ComparisonRow]:
    """Run k against run k - 1 per headline: noise, but for the drifting model at `drift_at`."""
    old = {(r.suite, r.task, r.model, r.metric): r for r in headlines(before)}
    rows = []
    for r in headlines(after):
        was = old.get((r.suite, r.task, r.model, r.metric))
        if was is None:
            continue
        drift = r.model == DRIFTING and k == drift_at
        difference = -0.2 if drift else float(rng.normal(0, 0.01))
        low, high = difference - 0.02, difference + 0.02
        rows.append(
            ComparisonRow(
                run_id=run_id(k),
                baseline_run_id=run_id(k - 1),
                suite=r.suite,
                task=r.task,
                model=r.model,
                metric=r.metric,
                n=items,
                baseline_value=was.value,
                new_value=was.value + difference,
                difference=difference,
                ci_low=low,
                ci_high=high,
                significant=low > 0 or high < 0,
                # Its two-sided p-value, as the bootstrap's would be for this interval.
                p_value=2 * (1 - NormalDist().cdf(abs(difference) / (0.02 / 1.96))),
                regressed=int(rng.integers(0, items // 20)),
                improved=int(rng.integers(0, items // 20)),
                clusters=items // 2,
            )
        )
    return rows


def event(k: int, drift_at: int, names: list[str], items: int) -> Part:
    """Run k's `run_events` row: its manifest with what served each model (the drifting one
    under a new system fingerprint from `drift_at` on)."""
    row = run_event(names, items)
    manifest = json.loads(row.manifest_json)
    started = NOW + timedelta(days=7 * k)
    manifest.update(
        run_id=run_id(k),
        panel=PANEL,
        started_at=started.isoformat(),
        ended_at=(started + timedelta(hours=2)).isoformat(),
        # What the provider said served each model (issue 41 item 2's records).
        served=[
            {
                "model": name,
                "role": "answer",
                "served_model": f"{name}-2026",
                "system_fingerprint": "fp_new" if name == DRIFTING and k >= drift_at else "fp_old",
                "answers": items * len(SUITES),
                "reused": 0,
            }
            for name in names
        ],
    )
    return Part(
        "run_events",
        [
            replace(
                row,
                run_id=run_id(k),
                panel=PANEL,
                started_at=started,
                ended_at=started + timedelta(hours=2),
                manifest_json=json.dumps(manifest),
            )
        ],
    )


def build_store(store: Store, runs: int, models: int, items: int) -> float:
    rng = np.random.default_rng(41)
    names = [f"model-{k:02d}" for k in range(models)]
    drift_at = max(1, runs // 2)
    start = time.perf_counter()
    before: list[MetricRow] = []
    for k in range(runs):
        rows = with_intervals(
            [
                replace(r, run_id=run_id(k))
                for suite in SUITES
                for model in names
                for r in metric_rows(suite, model, items, rng)
            ]
        )
        parts = [Part("metrics", rows)]
        if before:
            parts.append(Part("comparisons", comparisons(k, drift_at, before, rows, items, rng)))
        land(store, f"{run_id(k)}-metrics", parts)
        land(store, f"{run_id(k)}-event-001", [event(k, drift_at, names, items)])
        before = rows
    return time.perf_counter() - start


def _children_cpu() -> float:
    """CPU seconds (user and system) of this process's finished children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--items", type=int, default=10_000, help="items per suite")
    parser.add_argument("--keep", action="store_true", help="keep the store (its path printed)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="roadeval-history-bench-"))
    try:
        where = str(root / "store")
        store = open_store(where)
        built = build_store(store, args.runs, args.models, args.items)
        print(
            f"store: {args.runs} finished runs of panel {PANEL}, {args.models} models x "
            f"{args.items} items x {len(SUITES)} suites each; landed in {built:.1f} s"
        )
        roadeval = Path(sys.executable).with_name("roadeval")
        for label, extra, target in (
            ("roadeval history --no-page", ["--no-page"], HISTORY_TARGET_S),
            ("roadeval history, its page and the index", [], HISTORY_TARGET_S + PAGE_TARGET_S),
        ):
            start = time.perf_counter()
            used = _children_cpu()
            cli = subprocess.run(
                [str(roadeval), "history", "--panel", PANEL, "--store", where, *extra],
                capture_output=True,
                text=True,
                check=False,
            )
            wall = time.perf_counter() - start
            cpu = _children_cpu() - used
            if cli.returncode != 0:
                sys.exit(f"{label} failed ({cli.returncode}): {cli.stderr or cli.stdout}")
            verdict = "within" if wall <= target else "OVER"
            print(
                f"{label} (a process): {wall:.2f} s wall, {verdict} the {target:.0f} s target; "
                f"{cpu:.2f} s of CPU (wall above CPU is time spent waiting for a core)"
            )
        drifts = [line for line in cli.stdout.splitlines() if DRIFTING in line and "→" in line]
        print(
            f"  drift rows listed naming {DRIFTING}: {len(drifts)} (one model drifts at the "
            "middle run; the others' synthetic rows leave out 0 by chance 5% of the time each, "
            "which Holm's correction over a comparison's rows keeps from being flagged)"
        )
        print("\n".join(cli.stdout.splitlines()[-8:]))

        from roadeval.tasks.report.history_page import build_history_page
        from roadeval.tasks.report.site_index import build_index
        from roadeval.tasks.results.history import panel_history

        start, cpu = time.perf_counter(), time.process_time()
        history = panel_history(store, PANEL)
        read, read_cpu = time.perf_counter() - start, time.process_time() - cpu
        start, cpu = time.perf_counter(), time.process_time()
        key = build_history_page(store, history)
        page, page_cpu = time.perf_counter() - start, time.process_time() - cpu
        start = time.perf_counter()
        build_index(store)
        index = time.perf_counter() - start
        size = len(store.get(key))
        verdict = "within" if read + page <= PAGE_TARGET_S else "OVER"
        print(
            f"in process: history read {read:.2f} s ({read_cpu:.2f} s CPU; "
            f"{len(history.points):,} points, {len(history.steps):,} comparisons, "
            f"{len(history.drifts)} drift flags); page {page:.2f} s ({page_cpu:.2f} s CPU; "
            f"{size / 1e6:.2f} MB), read and page {verdict} the {PAGE_TARGET_S:.0f} s target; "
            f"index {index:.2f} s"
        )
        if args.keep:
            print(f"kept: {where}")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
