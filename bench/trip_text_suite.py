"""Shared by the benches: a TRIP-layout suite of N distinct text items, written as the release
lays it out (`items.jsonl` + `VERSION`), and the `roadeval` command run as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from roadeval.benchmarks.trip.demo import generate_demo
from roadeval.benchmarks.trip.taxonomy import ITEMS_FILE, VERSION_FILE

# The console script beside this interpreter: the command a user types.
ROADEVAL = Path(sys.executable).parent / "roadeval"


def write_text_suite(root: Path, n: int) -> Path:
    """`n` text items made from the TRIP demo's text rows (ids and questions made distinct, so
    every item is its own request) under `root`; returns `root`."""
    with tempfile.TemporaryDirectory() as folder:
        demo = generate_demo(Path(folder))
        rows = [json.loads(line) for line in (demo / ITEMS_FILE).read_text().splitlines()]
    text_rows = [row for row in rows if row["modality"] == "text"]
    root.mkdir(parents=True, exist_ok=True)
    with (root / ITEMS_FILE).open("w", encoding="utf-8") as out:
        for k in range(n):
            row = dict(text_rows[k % len(text_rows)])
            row["id"] = f"bench-{k}"
            row["question"] = f"{row['question']} (#{k})"
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    (root / VERSION_FILE).write_text(f"bench-text-{n}\n")
    return root


def query(store: Path, sql: str, roadeval: Path = ROADEVAL) -> list[dict[str, str]]:
    """Rows of `roadeval query --format csv` over `store`, as dicts of strings (`roadeval`: the
    command, another checkout's to compare with)."""
    import csv
    import io

    done = subprocess.run(
        [str(roadeval), "query", "--store", str(store), "--format", "csv", sql],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"roadeval query failed ({done.returncode}): {done.stderr[-2000:]}")
    return list(csv.DictReader(io.StringIO(done.stdout)))
