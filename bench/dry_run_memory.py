"""Memory and time of a dry run (`roadeval campaign --dry-run`) as a panel grows: `--models`
priced API models (never called: a dry run asks nothing) over a TRIP-layout suite of `--items`
text items, at each of `--samples`. Runs the real command in a process of its own, samples the
memory of its process tree as `bench/panel_memory.py` does, and prints per case the wall time,
the peak RSS of the command, the requests the estimate counts (expected / worst case) and the
rows and bytes of the plan it landed.

    .venv/bin/python bench/dry_run_memory.py                          # 20,000 items x 3 models
    .venv/bin/python bench/dry_run_memory.py --items 2000 --models 2 --samples 1 10
    .venv/bin/python bench/dry_run_memory.py --roadeval /path/to/other/.venv/bin/roadeval

A case whose tree passes `--abort-above-gib` is killed (the machine is shared) and reported as
such, with the peak it reached.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

import yaml
from panel_memory import TreeSampler
from trip_text_suite import ROADEVAL, query, write_text_suite

PRICED = {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}


def write_panel(path: Path, source: Path, models: int, samples: int) -> Path:
    panel = {
        "name": "dry-run-memory",
        "scoring": {"engine": "local"},
        "render": {"engine": "local"},
        "suites": [{"name": "trip", "source": str(source)}],
        "models": [
            {
                "model": f"openai/bench-{k}",
                "name": f"bench-{k}",
                # Nothing listens there: a dry run calls no model.
                "api_base": "http://127.0.0.1:9/v1",
                "params": {"max_tokens": 16},
                "samples": samples,
                **PRICED,
            }
            for k in range(models)
        ],
    }
    path.write_text(yaml.safe_dump(panel, sort_keys=False))
    return path


def plan_bytes(store: Path) -> int:
    return sum(p.stat().st_size for p in (store / "tables" / "plan").rglob("*.parquet"))


def one_case(
    roadeval: Path, work: Path, source: Path, models: int, samples: int, abort_above: int
) -> str:
    panel = write_panel(work / f"panel-{samples}.yaml", source, models, samples)
    store = work / f"store-{samples}"
    log = work / f"out-{samples}.txt"
    started = time.monotonic()
    with log.open("w") as out:
        process = subprocess.Popen(
            [str(roadeval), "campaign", "--panel", str(panel), "--dry-run", "--store", str(store)],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so an abort takes the whole tree
        )
        with TreeSampler(process.pid, abort_above) as sampler:
            code = process.wait()
    wall = time.monotonic() - started
    peak = sampler.peak_root / 2**20
    if sampler.aborted:
        return f"samples {samples:3d}: KILLED after {wall:6.1f} s, past {peak:,.0f} MiB RSS"
    if code != 0:
        raise SystemExit(f"exit {code}:\n{log.read_text()[-3000:]}")
    [totals] = query(
        store, "select sum(requests) e, sum(requests_worst) w from estimates", roadeval
    )
    expected, worst = totals["e"], totals["w"]
    try:
        [rows] = query(store, "select count(*) n, sum(coalesce(samples, 1)) s from plan", roadeval)
    except RuntimeError:
        # A tree from before the `samples` column: a row per request.
        [rows] = query(store, "select count(*) n, count(*) s from plan", roadeval)
    landed, standing_for = int(rows["n"]), int(rows["s"])
    return (
        f"samples {samples:3d}: {wall:6.1f} s wall, peak RSS {peak:6,.0f} MiB (command; tree "
        f"{sampler.peak_tree_rss / 2**20:,.0f} MiB), requests {int(expected):,} expected / "
        f"{int(worst):,} worst, plan {landed:,} rows for {standing_for:,} requests in "
        f"{plan_bytes(store) / 2**20:,.1f} MiB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=3)
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--samples", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--roadeval", type=Path, default=ROADEVAL, help="the command to measure")
    parser.add_argument(
        "--abort-above-gib", type=float, default=8.0, help="kill a case past this much RSS"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        source = write_text_suite(work / "suite", args.items)
        print(
            f"dry run: {args.models} priced API models x {args.items:,} TRIP text items "
            f"({args.roadeval})",
            flush=True,
        )
        for samples in args.samples:
            line = one_case(
                args.roadeval,
                work,
                source,
                args.models,
                samples,
                int(args.abort_above_gib * 2**30),
            )
            print(line, flush=True)


if __name__ == "__main__":
    main()
