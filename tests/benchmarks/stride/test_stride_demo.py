"""The demo suite: the release's layout, deterministic bytes, answerable golds, and a full pass
with the random baseline through parse, score and the corpus figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from roadeval.benchmarks.judging import JudgeReply, JudgeRequest
from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.registry import BaselineCall, find_baseline
from roadeval.benchmarks.stride.baselines import random_answer
from roadeval.benchmarks.stride.suite import StrideSuite
from roadeval.benchmarks.suite import ParseStatus, ScoredItem
from roadeval.tasks.requests.request import request_key


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_demo_is_deterministic_and_in_the_release_layout(tmp_path: Path) -> None:
    first = StrideSuite().generate_demo(tmp_path / "one")
    StrideSuite().generate_demo(tmp_path / "two")
    assert first == tmp_path / "one" / "questions.json"
    assert _files(tmp_path / "one") == _files(tmp_path / "two")
    files = _files(tmp_path / "one")
    assert "scene_001/group_001_vehicle_annotations.json" in files
    assert "scene_001/group_001_selected_vehicle_render.jpg" in files
    assert sum(name.endswith("_grid.jpg") for name in files) == 30
    payload = json.loads(files["questions.json"])
    assert set(payload) == {"meta", "tasks"}


def test_demo_loads_and_its_golds_score_full_marks(tmp_path: Path) -> None:
    suite = StrideSuite()
    report = suite.load(suite.generate_demo(tmp_path))
    items = report.items
    assert report.skipped == [] and report.unknown_fields == {}
    assert sorted({item.task for item in items}) == [
        "SC-6",
        "SP-1",
        "SP-7",
        "TM-2",
        "TRJ-1",
        "TRJ-5",
        "TRJ-6",
    ]
    scored = []
    for item in items:
        if item.extra["kind"] == "mcq":
            text = item.reference
        elif item.extra["kind"] == "trajectory":
            text = json.dumps(item.reference)
        else:
            continue
        parsed = suite.parse(item, ModelOutput(text))
        scored.append(ScoredItem(item, parsed, suite.score(item, parsed)))
    for task in ("SP-1", "TM-2", "TRJ-1"):
        summary = suite.summarize(task, [s for s in scored if s.item.task == task])
        assert summary["accuracy"] == 1.0 and summary["correct"] == 3.0
    trajectory = suite.summarize("TRJ-5", [s for s in scored if s.item.task == "TRJ-5"])
    assert trajectory == {
        "ade": 0.0,
        "fde": 0.0,
        "min_fde": 0.0,
        "parsed": 3.0,
        "parse_failures": 0.0,
    }


class MidpointJudge:
    async def __call__(self, request: JudgeRequest) -> JudgeReply:
        return JudgeReply("mid", "k", {}, request.prompt_hash, ModelOutput('{"score": 5}'))


async def test_random_baseline_runs_end_to_end(tmp_path: Path) -> None:
    suite = StrideSuite()
    items = suite.load(suite.generate_demo(tmp_path)).items
    baseline = find_baseline("random", "stride", "SP-1")
    assert baseline is not None and baseline.fn is random_answer
    scored = []
    for item in items:
        key = request_key("roadeval/random", {"seed": 3}, suite.prompt(item, suite.render(item)), 1)
        call = BaselineCall.blind(item, seed=3, attempt=1, request_key=key)
        reply = baseline.fn(call)
        assert isinstance(reply, str)
        assert reply == baseline.fn(BaselineCall.blind(item, seed=3, attempt=1, request_key=key))
        output = ModelOutput(reply)
        parsed = suite.parse(item, output)
        assert parsed.status is ParseStatus.OK, (item.item_id, reply, parsed)
        score = await suite.score_item(item, parsed, output, MidpointJudge())
        assert suite.heavy_scoring(item) == (item.extra["kind"] != "mcq")
        scored.append(ScoredItem(item, parsed, score.values, score.state))
    judged = suite.summarize("SP-7", [s for s in scored if s.item.task == "SP-7"])
    assert judged == {
        "judge_scored": 3.0,
        "judge_unscored": 0.0,
        "unanswered": 0.0,
        "judge_score": 5.0,
    }
    rows = {(g.slice, g.slice_value, g.metric): (g.value, g.n) for g in suite.group_values(scored)}
    assert rows[("", "", "mcq_random_baseline")] == (pytest.approx(1 / 6), 9)
    assert rows[("", "", "judge_score")] == (5.0, 6)
    assert rows[("", "", "traj_parsed")] == (6.0, 6)
    assert rows[("split", "nuscenes", "mcq_accuracy")][1] == 9
    assert ("family", "trajectory-prediction", "traj_ade") in rows
    assert 0.0 <= rows[("", "", "mcq_accuracy")][0] <= 1.0
