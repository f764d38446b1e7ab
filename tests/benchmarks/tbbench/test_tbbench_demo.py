"""The demo suite: deterministic bytes, the released layout, labels the scorer can match, and
a full offline pass with the random baseline."""

from __future__ import annotations

import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.registry import BaselineCall, find_baseline
from roadeval.benchmarks.suite import ScoredItem
from roadeval.benchmarks.tbbench.baselines import CLASS_PHRASES
from roadeval.benchmarks.tbbench.demo import (
    ITEMS_PER_TASK,
    bearing_deg,
    orientation_relation,
    spatial_relation,
)
from roadeval.benchmarks.tbbench.demo_drawing import Vehicle
from roadeval.benchmarks.tbbench.suite import TBBenchSuite
from roadeval.benchmarks.tbbench.tasks import TASK_CODES
from roadeval.tasks.requests.request import request_key


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_demo_is_byte_deterministic(tmp_path: Path) -> None:
    first = TBBenchSuite().generate_demo(tmp_path / "one")
    second = TBBenchSuite().generate_demo(tmp_path / "two")
    assert first == tmp_path / "one"
    files = _files(first)
    assert len(files) == 8 and files == _files(second)


def test_demo_layout_and_items(tmp_path: Path) -> None:
    source = TBBenchSuite().generate_demo(tmp_path)
    table = pq.read_table(source / "data" / "ego_turning-00000-of-00001.parquet")
    assert table.column_names == ["image", "problem", "task", "choice", "solution"]
    frame = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    assert table.schema.field("image").type.value_type == frame
    assert b"huggingface" in table.schema.metadata
    items = TBBenchSuite().load(source).items
    assert sorted({item.task for item in items}) == sorted(TASK_CODES)
    per_task = {code: [i for i in items if i.task == code] for code in TASK_CODES}
    assert all(len(group) == ITEMS_PER_TASK for group in per_task.values())
    assert {len(i.media) for i in per_task["EGO-TRA"]} == {8}
    assert {len(i.media) for i in per_task["RD"]} == {1}
    assert {i.labels["gold_kind"] for i in per_task["OR"]} == {"class", "angle"}


def test_scene_relations_follow_the_paper_sectors() -> None:
    reference = Vehicle(0.0, 10.0, 0.0, 1)
    ahead, left = Vehicle(0.0, 20.0, 0.0, 2), Vehicle(-10.0, 10.0, 0.0, 2)
    behind_right = Vehicle(10.0, 5.0, 0.0, 2)  # bearing about -117 degrees
    assert bearing_deg(reference, ahead) == 0.0
    assert math.isclose(bearing_deg(reference, left), 90.0)
    assert spatial_relation(bearing_deg(reference, ahead)) == "front"
    assert spatial_relation(bearing_deg(reference, left)) == "front left"  # 90 is inclusive
    assert spatial_relation(bearing_deg(reference, behind_right)) == "back right"
    assert [orientation_relation(t) for t in (45.0, 46.0, 134.0, -135.0)] == [
        "similar",
        "perpendicular",
        "perpendicular",
        "opposite",
    ]


def _oracle(item_task: str, reference: str) -> str:
    # Golds like 'left_turn' are labels, not answers: say them the way the scorer reads them.
    return CLASS_PHRASES.get(item_task, {}).get(reference, reference)


def test_demo_golds_are_answerable_and_random_baseline_runs(tmp_path: Path) -> None:
    suite = TBBenchSuite()
    items = suite.load(suite.generate_demo(tmp_path)).items
    oracle = [
        ScoredItem(i, p, suite.score(i, p))
        for i in items
        for p in [suite.parse(i, ModelOutput(_oracle(i.task, i.reference)))]
    ]
    per_task = {
        code: suite.summarize(code, [s for s in oracle if s.item.task == code])
        for code in TASK_CODES
    }
    assert all(metrics == {"accuracy": 100.0} for metrics in per_task.values())
    assert suite.overall(per_task) == {"mean_accuracy": 100.0}

    baseline = find_baseline("random", "tbbench", "RD")
    assert baseline is not None
    scored = []
    for item in items:
        key = request_key("roadeval/random", {"seed": 7}, suite.prompt(item, suite.render(item)), 1)
        call = BaselineCall.blind(item, 7, 1, key)
        parsed = suite.parse(item, ModelOutput(baseline.fn(call)))
        assert parsed.status.value == "ok", (item.item_id, parsed)
        scored.append(ScoredItem(item, parsed, suite.score(item, parsed)))
    accuracies = {
        code: suite.summarize(code, [s for s in scored if s.item.task == code])["accuracy"]
        for code in TASK_CODES
    }
    assert all(0.0 <= value <= 100.0 for value in accuracies.values())
    overall = suite.overall({code: {"accuracy": value} for code, value in accuracies.items()})
    assert math.isclose(overall["mean_accuracy"], sum(accuracies.values()) / 8)
