"""Fuzzing the loaders of the five suites: their demo rows, mutated by a seeded generator (values
replaced by random JSON, texts cut or made paths, bytes flipped, lines cut, brackets nested past
any bound), must load or fail with the suite's load error (`ItemError`, `SuiteSourceError`):
never anything else. Under `skip` every bad row is listed and the load goes on, so one load tries
every mutated row of a file."""

from __future__ import annotations

import json
import random
import shutil
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from roadeval.benchmarks.errors import BadItemPolicy, ItemError, SuiteSourceError
from roadeval.benchmarks.registry import get_suite

NAMES = ("trip", "roadbench", "tbbench", "v2xqa", "stride")
ROUNDS = 4
LOAD_ERRORS = (ItemError, SuiteSourceError)

TEXTS = (
    "",
    " ",
    "A",
    "e",
    "MCQ",
    "OEQ",
    "mcq",
    "TRJ-5",
    "SC-6",
    "VS1",
    "CO3",
    "image",
    "point_cloud",
    "LINESTRING (0 0, 10 10)",
    "POINT (1 2)",
    "LINESTRING EMPTY",
    "[[1, 2], [3, 4]]",
    "[[1, 2], [3",
    "../../../etc/passwd",
    "/etc/hostname",
    "/",
    ".",
    "a\x00b",
    "x" * 300,
    "dir/" * 40 + "f.png",
    "caf\u00e9 \u4e2d\u6587 \U0001f600",
    "\ud800",
    "1e999",
    "NaN",
    "{",
    "]]]]",
    "x.png",
    "missing.jpg",
)
NUMBERS = (0, 1, -1, 2, 3, 7, 10**6, 2**63 - 1, 2**63, -(2**70), 0.5, 1e308, -0.0)


class Fuzzer:
    """Seeded mutations of JSON rows and of their lines."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def value(self, depth: int = 0) -> Any:
        roll = self.rng.random()
        if roll < 0.1:
            return None
        if roll < 0.2:
            return self.rng.random() < 0.5
        if roll < 0.35:
            return self.rng.choice(NUMBERS)
        if roll < 0.45:
            return self.rng.choice((float("nan"), float("inf")))
        if roll < 0.7 or depth > 2:
            return self.rng.choice(TEXTS)
        if roll < 0.85:
            return [self.value(depth + 1) for _ in range(self.rng.randrange(4))]
        keys = ("A", "B", "C", "D", "junctions", "lines", "bytes", "path", "x")
        return {self.rng.choice(keys): self.value(depth + 1) for _ in range(self.rng.randrange(4))}

    def deep(self) -> Any:
        value: Any = self.rng.choice(TEXTS)
        for _ in range(self.rng.choice((63, 64, 65, 200, 700))):
            value = [value] if self.rng.random() < 0.5 else {"k": value}
        return value

    def mutate(self, value: Any, depth: int = 0) -> Any:
        """`value` with one change somewhere inside it."""
        roll = self.rng.random()
        if isinstance(value, dict) and value and roll < 0.6 and depth < 4:
            key = self.rng.choice(list(value))
            changed = dict(value)
            action = self.rng.random()
            if action < 0.15:
                del changed[key]
            elif action < 0.2:
                changed[self.rng.choice(("hint", "Answer", "", "x" * 80))] = self.value()
            else:
                changed[key] = self.mutate(value[key], depth + 1)
            return changed
        if isinstance(value, list) and value and roll < 0.6 and depth < 4:
            changed_list = list(value)
            index = self.rng.randrange(len(value))
            action = self.rng.random()
            if action < 0.2:
                del changed_list[index]
            elif action < 0.3:
                changed_list.append(value[index])  # shared: mutations copy, never edit
            else:
                changed_list[index] = self.mutate(value[index], depth + 1)
            return changed_list
        if isinstance(value, str) and roll < 0.8:
            edits: list[Callable[[str], Any]] = [
                lambda s: s[: self.rng.randrange(len(s) + 1)],
                lambda s: s + self.rng.choice(TEXTS),
                lambda s: s.upper(),
                lambda s: " " + s + "\n",
                lambda s: s.replace("/", "\\"),
                lambda s: "../" + s,
                lambda s: s * 3,
            ]
            return self.rng.choice(edits)(value)
        if isinstance(value, bytes) and roll < 0.8:
            cut = value[: self.rng.randrange(len(value) + 1)]
            return cut if self.rng.random() < 0.5 else b"\x89PNG\r\n\x1a\n" + cut[8:40]
        if roll < 0.93:
            return self.value()
        return self.deep()

    def row(self, row: dict[str, Any]) -> dict[str, Any]:
        mutated = row
        for _ in range(self.rng.choice((1, 1, 2, 3))):
            mutated = self.mutate(mutated)
        return mutated if isinstance(mutated, dict) else row

    def line(self, row: dict[str, Any]) -> bytes:
        """One JSONL line for `row`: most as JSON, some broken in the ways a file breaks."""
        try:
            text = json.dumps(row, ensure_ascii=self.rng.random() < 0.5)
        except (ValueError, RecursionError):
            text = "{}"
        data = text.encode("utf-8", errors="surrogatepass")
        roll = self.rng.random()
        if roll < 0.75:
            return data
        if roll < 0.8:
            return data[: self.rng.randrange(len(data) + 1)]
        if roll < 0.85 and data:
            at = self.rng.randrange(len(data))
            return (
                data[:at] + self.rng.choice((b"\xff", b"\xe9", b"\xc3", b"\x00", b"\n")) + data[at:]
            )
        if roll < 0.88:
            return b"[" * self.rng.choice((65, 1000, 100_000))
        if roll < 0.91:
            return b'{"id": ' + b"9" * self.rng.choice((20, 5000)) + b"}"
        if roll < 0.94:
            return self.rng.choice((b"null", b"[]", b'"text"', b"NaN", b"{}", b"   "))
        if roll < 0.97:
            return data.replace(b'"', b"'", 1)
        return b'{"id": "' + b"q" * 1_000_001 + b'"}'


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
