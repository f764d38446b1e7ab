"""How long `roadeval report` takes on a big store (issue 20): a synthetic finished run of
`--models` models x `--items` items x the five suites, in the store's own layout (parts written by
`storage.landing.land`, one landing per suite x model, markers, a `runs` event with its manifest),
with `--metrics` score rows per item (10 million score rows at full size: they dominate), one
parse and one response per item, and the corpus rows a run lands (metrics with intervals, paired
differences, TRIP's Pareto rows, and a manifest that records clustered intervals). Then
`roadeval report RUN --store S` runs as a process (its wall time, against the 20 s target), and
the report is built once more in process to time each of its queries and its drawing.

    .venv/bin/python bench/report_build.py [--models 20] [--items 10000] [--metrics 10] [--keep]

Check it at a small size (`--models 2 --items 500`); the full size needs about 2 GB of disk.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from roadeval.flows.run.record import event_row
from roadeval.storage.landing import Part, land
from roadeval.storage.records import SCHEMAS, MetricPairRow, MetricRow, RunEventRow
from roadeval.storage.store import Store, open_store
from roadeval.tasks.results.intervals import BOOTSTRAP, WILSON, IntervalSettings
from roadeval.tasks.results.intervals import CLUSTERED as CLUSTERED_METHOD
from roadeval.tasks.results.manifest import (
    HeadlineMethod,
    IntervalsRecord,
    PairCounts,
    RunManifest,
    SuiteRecord,
    Totals,
)
from roadeval.tasks.results.uncertainty import intervals_record

TARGET_S = 20.0
RUN = "20260101T000000Z-bench000"
NOW = datetime(2026, 1, 1, tzinfo=UTC)

# Per suite: its tasks, the per-item metrics its scores hold (then fillers up to --metrics),
# and the slice labels its metrics rows carry (label -> values).
SUITES: dict[str, dict[str, Any]] = {
    "trip": {
        "tasks": ["mcq"],
        "metrics": ["correct"],
        "slices": {
            "role": ["vehicle", "traffic management", "traveler", "planning-and-design"],
            "capability": [
                "knowledge memory",
                "logical reasoning",
                "numerical calculation",
                "scene semantic understanding",
            ],
            "difficulty": ["easy", "medium", "hard"],
            "modality": ["text", "image", "point cloud"],
            "knowledge_point": [f"knowledge point {k}" for k in range(226)],
        },
    },
    "roadbench": {
        "tasks": ["1", "2", "3", "4", "5", "6"],
        "metrics": ["correct", "abs_error"],
        "slices": {"condition": ["none", "night", "occluded"]},
    },
    "tbbench": {
        "tasks": ["RD", "SR", "OR", "EGO-LANE", "OBJ-LANE", "OBJ-TURN", "EGO-TURN", "EGO-TRA"],
        "metrics": ["correct"],
        "slices": {"gold_kind": ["class", "distance", "angle"]},
    },
    "v2xqa": {
        "tasks": [f"{v}{k}" for v in ("VS", "IS", "CO") for k in range(1, 5)],
        "metrics": ["correct", "brier"],
        "slices": {"question_id": ["Q1"]},
    },
    "stride": {
        "tasks": ["SP-1", "TM-2", "SC-6", "TRJ-5", "TRJ-6", "SP-7"],
        "metrics": ["correct", "ade", "fde", "min_fde", "judge_score"],
        "slices": {"scenario": ["cut-in", "construction"]},
    },
}
# The per-task metric each suite's rows carry (its per-task headline where it has one).
TASK_METRICS = {
    "trip": ["accuracy", "abnormal_rate", "modality_penalty", "difficulty_penalty"],
    "roadbench": ["f1", "exact_match", "buffer_f1@0.2", "accuracy", "items", "errors"],
    "tbbench": ["accuracy"],
    "v2xqa": ["accuracy", "unparsed_count"],
    "stride": ["accuracy", "judge_score", "ade", "fde", "correct"],
}
WIDE_METRICS = {
    "trip": ["accuracy", "abnormal_rate", "modality_penalty", "difficulty_penalty"],
    "roadbench": [],
    "tbbench": ["mean_accuracy"],
    "v2xqa": ["accuracy", "ece", "brier", "confidence_items", "no_confidence_items"],
    "stride": ["mcq_accuracy", "judge_score", "traj_ade", "traj_fde", "mcq_correct"],
}


def _strings(values: Any) -> pa.Array:
    return pa.array(np.asarray(values, dtype=object), type=pa.string())


def _table(table: str, columns: dict[str, Any], rows: int) -> pa.Table:
    """An Arrow table of `table`'s schema: the given columns, nulls elsewhere."""
    schema = SCHEMAS[table]
    arrays = []
    for field in schema:
        value = columns.get(field.name)
        if value is None:
            arrays.append(pa.nulls(rows, field.type))
        elif isinstance(value, pa.Array):
            arrays.append(value.cast(field.type))
        elif np.isscalar(value):
            arrays.append(
                pa.array(np.full(rows, value), type=field.type)
                if not isinstance(value, str)
                else _strings([value] * rows)
            )
        else:
            arrays.append(pa.array(value, type=field.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def item_parts(
    suite: str, model: str, items: int, per_item: int, rng: np.random.Generator
) -> list[Part]:
    """One suite x model's scores, parses and responses, as Arrow tables."""
    spec = SUITES[suite]
    tasks = np.array(spec["tasks"], dtype=object)[np.arange(items) % len(spec["tasks"])]
    ids = np.array([f"{suite}-{i}" for i in range(items)], dtype=object)
    keys = np.array([f"{model}-{suite}-{i}" for i in range(items)], dtype=object)
    metrics = list(spec["metrics"]) + [f"extra_{k}" for k in range(per_item - len(spec["metrics"]))]
    metrics = metrics[:per_item]
    n = items * len(metrics)
    values = rng.random(n)
    metric_column = np.tile(np.array(metrics, dtype=object), items)
    for name, scale in (("ade", 20.0), ("fde", 35.0), ("min_fde", 30.0), ("abs_error", 3.0)):
        values[metric_column == name] *= scale
    correct = metric_column == "correct"
    values[correct] = (values[correct] < 0.4).astype(float)
    judged = metric_column == "judge_score"
    values[judged] = np.round(values[judged] * 10)
    status = np.where(judged & (rng.random(n) < 0.03), "unscored", "scored").astype(object)
    value_column = pa.array(
        np.where(status == "scored", values, np.nan), type=pa.float64(), from_pandas=True
    )
    details = None
    if suite == "v2xqa":
        confidence = np.repeat(0.25 + 0.75 * rng.random(items), len(metrics))
        details = _strings([f'{{"confidence": {c:.6f}}}' for c in confidence])
    about = {
        "run_id": RUN,
        "suite": suite,
        "model": model,
        "sample": 1,
        "variant": "",
    }
    scores = _table(
        "scores",
        {
            **about,
            "task": _strings(np.repeat(tasks, len(metrics))),
            "item_id": _strings(np.repeat(ids, len(metrics))),
            "content_hash": _strings(np.repeat(ids, len(metrics))),
            "request_key": _strings(np.repeat(keys, len(metrics))),
            "metric": _strings(metric_column),
            "value": value_column,
            "status": _strings(status),
            "details_json": details,
            "scorer_version": "1",
        },
        n,
    )
    parse_status = np.where(rng.random(items) < 0.02, "unparsed", "ok").astype(object)
    per_item_columns = {
        **about,
        "task": _strings(tasks),
        "item_id": _strings(ids),
        "content_hash": _strings(ids),
        "request_key": _strings(keys),
        "attempt": 1,
    }
    parses = _table(
        "parses",
        {
            **per_item_columns,
            "status": _strings(parse_status),
            "rule": "letter",
            "value_json": '"A"',
            "detail": "",
        },
        items,
    )
    failed = rng.random(items) < 0.01
    responses = _table(
        "responses",
        {
            **per_item_columns,
            "model_string": f"openai/{model}",
            "api_base": "http://127.0.0.1:8000/v1",
            "role": "answer",
            "try_number": 1,
            "raw_text": "A",
            "tokens_in": pa.array(rng.integers(200, 2000, items)),
            "tokens_out": pa.array(rng.integers(1, 200, items)),
            "cost_usd": pa.array(rng.random(items) * 1e-3),
            "latency_s": 0.5,
            "error_kind": _strings(np.where(failed, "server_error", None)),
            "may_be_billed": False,
            "cached": False,
            "created_at": pa.array([NOW] * items, type=pa.timestamp("us", tz="UTC")),
        },
        items,
    )
    return [
        Part(table, copied=rows, suite=suite, model=model)
        for table, rows in (("scores", scores), ("parses", parses), ("responses", responses))
    ]


def metric_rows(suite: str, model: str, items: int, rng: np.random.Generator) -> list[MetricRow]:
    """One suite x model's metrics: suite-wide (with intervals), per task, per slice."""
    spec = SUITES[suite]
    rows: list[MetricRow] = []

    def row(task: str, metric: str, slice_: str = "", value_: str = "", n: int = items) -> None:
        value = float(rng.random())
        wide = task == "*"
        low, high = (max(0.0, value - 0.05), min(1.0, value + 0.05)) if wide else (None, None)
        rows.append(MetricRow(RUN, suite, task, model, slice_, value_, metric, value, n, low, high))

    for metric in WIDE_METRICS[suite]:
        row("*", metric)
    for task in spec["tasks"]:
        for metric in TASK_METRICS[suite]:
            row(task, metric, n=items // len(spec["tasks"]))
        for label, values in spec["slices"].items():
            for value in values:
                row(task, "correct", label, value, n=max(1, items // len(values)))
    if suite == "v2xqa":
        for view in ("VS", "IS", "CO"):
            for metric in ("accuracy", "ece", "brier"):
                row("*", metric, "view", view)
    if suite == "stride":
        for family in ("space-perception", "time-memory", "scene-context", "trajectory"):
            for metric in ("mcq_accuracy", "judge_score", "traj_ade"):
                row("*", metric, "family", family)
    if suite == "trip":
        for capability in spec["slices"]["capability"]:
            for metric in ("modality_penalty", "difficulty_penalty"):
                row("mcq", metric, "capability", capability)
    return rows


def corpus_rows(suite: str, models: list[str], items: int, rng: np.random.Generator) -> list[Part]:
    """The run's metrics (with intervals) per suite x model, its paired differences, and for
    TRIP its Pareto rows."""
    spec = SUITES[suite]
    parts = [
        Part("metrics", metric_rows(suite, model, items, rng), suite=suite, model=model)
        for model in models
    ]
    headline = WIDE_METRICS[suite][0] if WIDE_METRICS[suite] else None
    if headline is not None:
        pairs = []
        for i, a in enumerate(models):
            for b in models[i + 1 :]:
                diff = float(rng.normal(0, 0.05))
                low, high = diff - 0.04, diff + 0.04
                pairs.append(
                    MetricPairRow(
                        RUN, suite, "*", headline, a, b, items, diff, low, high, low > 0 or high < 0
                    )
                )
        parts.append(Part("metric_pairs", pairs, suite=suite))
    if suite == "trip":
        from roadeval.benchmarks.trip.records import ErrorParetoRow

        for model in models:
            bars = []
            for role in spec["slices"]["role"]:
                errors = sorted(rng.integers(1, 40, 30), reverse=True)
                total = float(sum(errors))
                running = 0.0
                for rank, count in enumerate(errors, 1):
                    running += count
                    bars.append(
                        ErrorParetoRow(
                            RUN,
                            suite,
                            model,
                            role,
                            f"kp {rank}",
                            rank,
                            int(count),
                            count / total,
                            running / total,
                        )
                    )
            parts.append(Part("pareto", bars, suite=suite, model=model))
    return parts


# Per suite: what its items cluster by, and items per cluster (V2X-QA asks 12 questions of a
# scene, STRIDE about 1.5; RoadBench's headlines are per task, where no two items share one).
CLUSTERED = {
    "trip": ("images", 2),
    "tbbench": ("clips", 2),
    "v2xqa": ("scenes", 12),
    "stride": ("scenes", 2),
}


def clustered_record(items: int) -> IntervalsRecord:
    """How the run's intervals were computed, as a run with clustered suites records it (the
    report's line under each leaderboard reads it)."""
    headlines = []
    for suite, spec in SUITES.items():
        unit, size = CLUSTERED.get(suite, ("", 1))
        for metric in WIDE_METRICS[suite][:3]:
            headlines.append(
                HeadlineMethod(
                    suite=suite,
                    task="*",
                    metric=metric,
                    method=CLUSTERED_METHOD if unit else BOOTSTRAP,
                    items=items,
                    clusters=items // size if unit else None,
                    unit=unit,
                )
            )
        for task in spec["tasks"]:
            headlines.append(
                HeadlineMethod(
                    suite=suite,
                    task=task,
                    metric=TASK_METRICS[suite][0],
                    method=WILSON,
                    items=items // len(spec["tasks"]),
                )
            )
    record = intervals_record(IntervalSettings())
    record.headlines = headlines
    return record


def run_event(models: list[str], items: int) -> RunEventRow:
    suites = [
        SuiteRecord(
            name=name,
            source=f"/data/{name}",
            demo=False,
            version=f"{name}-bench",
            hash="0" * 64,
            items=items,
            tasks=spec["tasks"],
            prompt_version="bench",
            max_attempts=1,
            options={},
            skipped_items=[],
            drawings={},
            unknown_fields={},
            unknown_fields_message=None,
            scorer_version="1",
        )
        for name, spec in SUITES.items()
    ]
    counts = [
        PairCounts(suite=s, model=m, items=items, scored=items, calls=items)
        for s in SUITES
        for m in models
    ]
    total = len(counts) * items
    manifest = RunManifest(
        run_id=RUN,
        panel="bench-report",
        started_at=NOW,
        ended_at=NOW + timedelta(hours=2),
        code_version="bench",
        store="bench",
        suites=suites,
        models=[
            {"name": m, "model": f"openai/{m}", "api_base": "http://127.0.0.1:8000/v1"}
            for m in models
        ],
        judge=None,
        generation=[],
        not_covered=[],
        planned_items=total,
        counts=counts,
        totals=Totals(items=total, scored=total, calls=total),
        orchestrator="inline",
        intervals=clustered_record(items),
        status="finished",
    )
    return event_row(manifest, 1, 10.0)


def build_store(store: Store, models: int, items: int, per_item: int) -> float:
    """Land the synthetic run; returns the seconds it took."""
    from roadeval.benchmarks.registry import load_suite

    load_suite("trip")  # registers TRIP's `pareto` table
    rng = np.random.default_rng(20)
    names = [f"model-{k:02d}" for k in range(models)]
    start = time.perf_counter()
    for suite in SUITES:
        for model in names:
            land(store, f"{RUN}-{suite}-{model}", item_parts(suite, model, items, per_item, rng))
        land(store, f"{RUN}-{suite}-corpus", corpus_rows(suite, names, items, rng))
    land(store, f"{RUN}-event-001", [Part("run_events", [run_event(names, items)])])
    return time.perf_counter() - start


# Group-bys of the kind the report runs, over its three big tables.
COMPARED = {
    "scores": "select model, metric, avg(value), count(*) from {} group by all",
    "parses": "select model, status, count(*) from {} group by all",
    "responses": "select model, role, sum(tokens_in), count(*) from {} group by all",
}


def views_against_native(store: Store, rounds: int = 3) -> None:
    """Each query through the catalogue's view and through DuckDB's own `read_parquet` over
    the same landed files, alternating, best of `rounds` (target: at most 1.5x)."""
    import duckdb

    from roadeval.storage.catalog import connect
    from roadeval.storage.landing import visible_parts

    print("views against DuckDB's native read_parquet over the same files (best of 3):")
    root = Path(store.uri)
    for table, sql in COMPARED.items():
        files = [str(root / key) for key in visible_parts(store, tables=[table])[table]]
        native = duckdb.connect()
        native.execute("set variable files = ?", [files])
        started = time.perf_counter()
        con = connect(store, tables=[table])
        opened = time.perf_counter() - started
        best = {"view": float("inf"), "native": float("inf")}
        for _ in range(rounds):
            for kind in ("view", "native"):
                started = time.perf_counter()
                if kind == "view":
                    con.execute(sql.format(table)).fetchall()
                else:
                    native.execute(sql.format("read_parquet(getvariable('files'))")).fetchall()
                best[kind] = min(best[kind], time.perf_counter() - started)
        con.close()
        ratio = best["view"] / best["native"]
        verdict = "within" if ratio <= 1.5 else "OVER"
        print(
            f"  {table:10s} {len(files):5d} parts: view {best['view']:.3f} s, native "
            f"{best['native']:.3f} s, {ratio:.2f}x ({verdict} 1.5x); opening the catalogue "
            f"for it {opened:.3f} s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--items", type=int, default=10_000, help="items per suite")
    parser.add_argument("--metrics", type=int, default=10, help="score rows per item")
    parser.add_argument("--keep", action="store_true", help="keep the store (its path printed)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="roadeval-report-bench-"))
    try:
        store = open_store(str(root / "store"))
        built = build_store(store, args.models, args.items, args.metrics)
        rows = args.models * args.items * len(SUITES)
        print(
            f"store: {args.models} models x {args.items} items x {len(SUITES)} suites = "
            f"{rows:,} items, {rows * args.metrics:,} score rows; landed in {built:.1f} s"
        )
        roadeval = Path(sys.executable).with_name("roadeval")
        start = time.perf_counter()
        cli = subprocess.run(
            [str(roadeval), "report", RUN, "--store", str(root / "store")],
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - start
        if cli.returncode != 0:
            sys.exit(f"roadeval report failed ({cli.returncode}): {cli.stderr or cli.stdout}")
        verdict = "within" if wall <= TARGET_S else "OVER"
        print(
            f"roadeval report (a process, imports included): {wall:.2f} s, {verdict} the "
            f"{TARGET_S:.0f} s target"
        )
        print(cli.stdout.strip())

        from roadeval.tasks.report.build import build_report
        from roadeval.tasks.report.reading import Timings

        timings = Timings()
        start = time.perf_counter()
        report = build_report(store, RUN, timings=timings)
        print(f"in process: {time.perf_counter() - start:.2f} s, page {report.size / 1e6:.2f} MB")
        page = store.get(report.key).decode()
        legends = page.count("[a, b]: 95% interval")
        print(f"  lines saying what an interval is: {legends} (one per suite's leaderboard)")
        for name, seconds in timings.steps:
            print(f"  {name:32s} {seconds:8.3f} s")
        views_against_native(store)
        if args.keep:
            print(f"kept: {root / 'store'}")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
