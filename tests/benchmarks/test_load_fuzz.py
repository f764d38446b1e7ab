"""Fuzzing the loaders of the five suites: their demo rows, mutated by a seeded generator (values
replaced by random JSON, texts cut or made paths, bytes flipped, lines cut, brackets nested past
any bound), must load or fail with the suite's load error (`ItemError`, `SuiteSourceError`):
never anything else. Under `skip` every bad row is listed and the load goes on, so one load tries
every mutated row of a file."""

from __future__ import annotations

import json
import shutil
import traceback
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from roadeval.benchmarks.errors import BadItemPolicy, ItemError, SuiteSourceError
from roadeval.benchmarks.registry import get_suite

from support.fuzzing import TEXTS, Fuzzer

NAMES = ("trip", "roadbench", "tbbench", "v2xqa", "stride")
ROUNDS = 4
LOAD_ERRORS = (ItemError, SuiteSourceError)


def read_json_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def fuzz_jsonl(path: Path, fuzzer: Fuzzer, rows: list[dict[str, Any]]) -> None:
    """Rewrite `path`: every original row, then as many mutated ones, in a shuffled order."""
    lines = [json.dumps(row).encode() for row in rows]
    lines += [fuzzer.line(fuzzer.row(fuzzer.rng.choice(rows))) for _ in rows]
    fuzzer.rng.shuffle(lines)
    path.write_bytes(b"\n".join(lines) + b"\n")


@pytest.fixture(scope="module")
def demos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("demos")
    return {name: get_suite(name).generate_demo(root / name) for name in NAMES}


def fresh(demos: dict[str, Path], name: str, folder: Path) -> Path:
    source = demos[name]
    if source.is_dir():
        return Path(shutil.copytree(source, folder / name))
    return Path(shutil.copytree(source.parent, folder / name)) / source.name


def mutate_source(name: str, source: Path, fuzzer: Fuzzer) -> None:
    if name == "trip":
        path = source / "items.jsonl"
        fuzz_jsonl(path, fuzzer, read_json_lines(path))
    elif name == "roadbench":
        for path in sorted(source.glob("task_*/*labels.jsonl")):
            fuzz_jsonl(path, fuzzer, read_json_lines(path))
    elif name == "v2xqa":
        for path in sorted(source.glob("*_annotations.jsonl")):
            fuzz_jsonl(path, fuzzer, read_json_lines(path)[:4])
    elif name == "tbbench":
        for path in sorted((source / "data").glob("*.parquet"))[:3]:
            fuzz_parquet(path, fuzzer)
    elif name == "stride":
        body = json.loads(source.read_text(encoding="utf-8"))
        tasks = body["tasks"]
        body["tasks"] = tasks + [fuzzer.row(fuzzer.rng.choice(tasks)) for _ in tasks]
        fuzzer.rng.shuffle(body["tasks"])
        if fuzzer.rng.random() < 0.3:
            body["meta"] = fuzzer.mutate(body.get("meta", {}))
        text = json.dumps(body).encode("utf-8", errors="surrogatepass")
        if fuzzer.rng.random() < 0.1:
            text = text[: fuzzer.rng.randrange(len(text))]
        source.write_bytes(text)


def parquet_text(value: Any) -> str | None:
    """`value` when Parquet can hold it as a string (text, no lone surrogate), else None."""
    if not isinstance(value, str):
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return value


def fuzz_parquet(path: Path, fuzzer: Fuzzer) -> None:
    """Mutations that keep each column's type (what a Parquet file can hold), plus frames cut
    short or replaced."""
    table = pq.read_table(path)
    rows = table.to_pylist()
    mutated = []
    for row in rows:
        changed = dict(row)
        for key in fuzzer.rng.sample(list(row), k=fuzzer.rng.randrange(1, 3)):
            value = row[key]
            if isinstance(value, str) or value is None:
                changed[key] = parquet_text(fuzzer.mutate(value or ""))
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                texts = [fuzzer.rng.choice(TEXTS) for _ in range(fuzzer.rng.randrange(3))]
                changed[key] = [text for text in texts if parquet_text(text) is not None]
            elif isinstance(value, list):
                frames = [dict(frame) for frame in value]
                if frames:
                    frame = fuzzer.rng.choice(frames)
                    cut = fuzzer.mutate(frame.get("bytes") or b"")
                    frame["bytes"] = cut if isinstance(cut, bytes) else None
                    if fuzzer.rng.random() < 0.3:
                        frame["bytes"] = None
                        frame["path"] = parquet_text(fuzzer.rng.choice(TEXTS))
                changed[key] = frames if fuzzer.rng.random() < 0.9 else []
        mutated.append(changed)
    pq.write_table(pa.Table.from_pylist(rows + mutated, schema=table.schema), path)


def jsonl_tbbench(source: Path, folder: Path) -> Path:
    """The TB-Bench demo as its JSONL layout (frames as files beside the rows)."""
    out = folder / "tbbench-jsonl"
    (out / "frames").mkdir(parents=True)
    for path in sorted((source / "data").glob("*.parquet"))[:3]:
        rows = []
        for number, row in enumerate(pq.read_table(path).to_pylist()):
            names = []
            for index, frame in enumerate(row["image"] or []):
                name = f"frames/{path.stem}-{number}-{index}.png"
                (out / name).write_bytes(frame["bytes"])
                names.append(name)
            rows.append({**row, "image": names})
        (out / f"{path.stem}.jsonl").write_text(
            "".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8"
        )
    return out


def load_or_load_error(name: str, source: Path, policy: BadItemPolicy) -> str:
    """'refused', or 'loaded N, skipped M'; any other exception fails the test with its
    traceback."""
    suite = get_suite(name)
    try:
        report = suite.load(source, on_bad_item=policy)
    except LOAD_ERRORS:
        return "refused"
    except Exception:
        pytest.fail(
            f"{name} ({policy.value}) raised outside its load errors on {source}:\n"
            + traceback.format_exc(),
            pytrace=False,
        )
    return f"loaded {len(report.items)}, skipped {len(report.skipped)}"


@pytest.mark.parametrize("name", NAMES)
def test_mutated_rows_load_or_raise_the_suites_load_error(
    name: str, demos: dict[str, Path], tmp_path: Path
) -> None:
    outcomes = []
    for round_number in range(ROUNDS):
        fuzzer = Fuzzer(seed=NAMES.index(name) * 1000 + round_number)
        source = fresh(demos, name, tmp_path / f"round-{round_number}")
        mutate_source(name, source, fuzzer)
        for policy in BadItemPolicy:
            outcomes.append(load_or_load_error(name, source, policy))
    # The mutations made bad rows: a load that stops at the first one was refused, one that
    # skips them loaded the good ones and listed the bad.
    assert "refused" in outcomes, outcomes
    skipping = [outcome for outcome in outcomes if outcome.startswith("loaded")]
    assert any(not o.startswith("loaded 0") and not o.endswith(" 0") for o in skipping), outcomes


def test_mutated_tbbench_jsonl_rows(demos: dict[str, Path], tmp_path: Path) -> None:
    for round_number in range(ROUNDS):
        fuzzer = Fuzzer(seed=1000 + round_number)
        source = jsonl_tbbench(demos["tbbench"], tmp_path / f"round-{round_number}")
        for path in sorted(source.glob("*.jsonl")):
            fuzz_jsonl(path, fuzzer, read_json_lines(path))
        for policy in BadItemPolicy:
            load_or_load_error("tbbench", source, policy)


def test_stride_nuscenes_rows_naming_paths_no_system_call_takes(
    demos: dict[str, Path], tmp_path: Path
) -> None:
    """The nuScenes split finds frames by scene and group names: a name too long, with a NUL
    byte, or a path of its own is a bad row, never an OSError."""
    questions = fresh(demos, "stride", tmp_path)
    base = json.loads(questions.read_text(encoding="utf-8"))["tasks"][0]
    base = {k: v for k, v in base.items() if k not in ("question_id", "image_paths")}
    open_row = {**base, "question_format": "OEQ", "scoring_type": "open_oeq_text"}
    tasks = []
    for number, name in enumerate(("a\x00b", "x" * 300, "../..", "/")):
        for template in ("SC-6", "SP-7"):
            row = {**open_row, "id": template, "scene_id": name, "group_id": f"g{number}"}
            tasks += [
                row,
                {**row, "object_id": "o1", "source_group_file": "y" * 300},
                {**row, "object_id": "o2", "source_group_file": "a\x00"},
                {**row, "object_id": "o3", "group_id": "g" * 300},
            ]
    body = {"meta": {"split": "nuscenes_v6"}, "tasks": tasks}
    questions.write_text(json.dumps(body), encoding="utf-8")
    assert load_or_load_error("stride", questions, BadItemPolicy.SKIP) == (
        f"loaded 0, skipped {len(tasks)}"
    )
