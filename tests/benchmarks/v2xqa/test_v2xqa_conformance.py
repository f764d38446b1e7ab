"""Conformance with the release extracts in ../shared/samples/v2x-qa (skips when absent): every
task loads, missing images are reported rather than dropped, the prompt is the release's
character for character, the gold letters score as the release would count them, and each
scene's twelve questions are one cluster.

The extracts carry no images (the release does not ship V2X-Seq-SPD): the tests draw a small
stand-in for every image id under roots of their own."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from v2xqa_support import image_bytes

from roadeval.benchmarks.errors import BadItemPolicy, ItemError
from roadeval.benchmarks.item import Item
from roadeval.benchmarks.messages import message_images
from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.suite import ParseStatus, PredictionsRequest, ScoredItem
from roadeval.benchmarks.v2xqa.suite import V2XQASuite
from roadeval.benchmarks.v2xqa.tasks import TASK_IDS
from roadeval.tasks.results.clusters import suite_clusters

# The release's SYSTEM_PROMPT and build_user_text output (model/eval/
# v2x_moe_eval_mcqa_qwen3.py, commit ee2e9fe), written out for three sample rows.
RELEASE_SYSTEM = (
    "You are answering a multiple-choice autonomous driving question. Use only the provided "
    "image evidence and the question/options. Return exactly one uppercase letter only: A or B "
    "or C or D. Do not output any other words, punctuation, or explanation."
)
RELEASE_USER = {
    "VS1:000096": (
        "Task: VS1\nViewpoint: VS\n\nImage evidence:\n"
        "One image is provided: vehicle-side (ego) view.\n\n"
        "Question:\nWhat is the main road scene ahead?\n\n"
        "Options:\nA. An intersection area.\nB. A straight road segment.\n"
        "C. A work-zone or barrier area.\nD. A merge or ramp area.\n\n"
        "Return exactly one uppercase letter only: A, B, C, or D.\n"
    ),
    "IS1:000087": (
        "Task: IS1\nViewpoint: IS\n\nImage evidence:\n"
        "One image is provided: infrastructure-side (RSU) view.\n\n"
        "Question:\nWhat is the most prominent layout feature in this RSU view?\n\n"
        "Options:\nA. A regular intersection.\nB. A curved road approach.\n"
        "C. Strong turn guidance.\nD. A complex layout.\n\n"
        "Return exactly one uppercase letter only: A, B, C, or D.\n"
    ),
    "CO4:000096": (
        "Task: CO4\nViewpoint: CO\n\nImage evidence:\n"
        "Two images are provided in order: (1) vehicle-side (ego) view, "
        "(2) infrastructure-side (RSU) view.\n\n"
        "Question:\nWith both views, what should the ego vehicle do immediately?\n\n"
        "Options:\nA. Accelerate.\nB. Reduce speed.\nC. Keep the current speed.\n"
        "D. Yield or prepare to stop.\n\n"
        "Return exactly one uppercase letter only: A, B, C, or D.\n"
    ),
}


def _rows(samples: Path) -> list[dict]:
    return [
        json.loads(line)
        for path in sorted(samples.glob("*_annotations.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


@pytest.fixture(scope="module")
def roots(samples: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A distinct small JPEG per image id the extracts name, under a root per side."""
    base = tmp_path_factory.mktemp("v2xqa-images")
    found = {"vehicle": base / "vehicle", "infrastructure": base / "infrastructure"}
    for folder in found.values():
        folder.mkdir()
    for row in _rows(samples):
        for side, key in (("vehicle", "image_id_vs"), ("infrastructure", "image_id_is")):
            if row[key] is not None:
                shade = (int(row[key]) * 3 + (101 if side == "vehicle" else 0)) % 256
                (found[side] / f"{row[key]}.jpg").write_bytes(image_bytes(shade, "JPEG"))
    return found


@pytest.fixture(scope="module")
def suite(roots: dict[str, Path]) -> V2XQASuite:
    return V2XQASuite(
        vehicle_images=str(roots["vehicle"]), infrastructure_images=str(roots["infrastructure"])
    )


@pytest.fixture(scope="module")
def items(suite: V2XQASuite, samples: Path) -> dict[str, Item]:
    return {item.item_id: item for item in suite.load(samples).items}


def test_every_task_loads(items: dict[str, Item], samples: Path) -> None:
    assert Counter(item.task for item in items.values()) == {task: 10 for task in TASK_IDS}
    assert len(items) == len(_rows(samples))


def test_without_images_every_item_is_reported_not_dropped(samples: Path) -> None:
    with pytest.raises(ItemError) as caught:
        V2XQASuite().load(samples)
    problem = caught.value.problem
    assert problem.file == str(samples / "VS1_annotations.jsonl")  # task order: VS1 first
    assert (problem.line, problem.item_id, problem.field) == (1, "VS1:000096", "image_id_vs")
    report = V2XQASuite().load(samples, on_bad_item=BadItemPolicy.SKIP)
    assert report.items == [] and len(report.skipped) == 120


@pytest.mark.parametrize("item_id", sorted(RELEASE_USER))
def test_prompt_is_the_release_text(
    suite: V2XQASuite, items: dict[str, Item], roots: dict[str, Path], item_id: str
) -> None:
    item = items[item_id]
    messages = suite.prompt(item, suite.render(item))
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == RELEASE_SYSTEM
    parts = messages[1]["content"]
    # The release's user_content: the images first, then the text.
    assert [p["type"] for p in parts[:-1]] == ["image_url"] * len(item.media)
    assert parts[-1] == {"type": "text", "text": RELEASE_USER[item_id]}
    expected = [
        roots[side] / f"{item.extra[key]}.jpg"
        for side, key in (("vehicle", "image_id_vs"), ("infrastructure", "image_id_is"))
        if key in item.extra
    ]
    assert message_images(messages) == [path.read_bytes() for path in expected]


def test_the_release_decoding_with_logprobs_for_calibration(suite: V2XQASuite) -> None:
    # Greedy, 5 new tokens as the release; its four letter logits are read from an API's top
    # alternatives, so as many as OpenAI-compatible APIs give.
    assert suite.protocol_generation().params() == {
        "max_tokens": 5,
        "temperature": 0,
        "logprobs": True,
        "top_logprobs": 20,
    }


def test_gold_letters_and_always_a_as_the_release_counts(
    suite: V2XQASuite, items: dict[str, Item], samples: Path
) -> None:
    golds = {f"{r['task_id']}:{r['sample_id']}": r["selected_option_id"] for r in _rows(samples)}
    for answer, expected in ((None, 1.0), ("A", sum(g == "A" for g in golds.values()) / 120)):
        scored = []
        for item in items.values():
            parsed = suite.parse(item, ModelOutput(answer or golds[item.item_id]))
            assert parsed.status is ParseStatus.OK
            scored.append(ScoredItem(item, parsed, suite.score(item, parsed)))
        overall = {g.metric: g.value for g in suite.group_values(scored) if g.slice == ""}
        assert overall["accuracy"] == pytest.approx(expected)
        assert overall["no_confidence_items"] == 120.0 and "ece" not in overall


def test_score_predictions_on_the_extracts(samples: Path, tmp_path: Path) -> None:
    rows = _rows(samples)
    predictions = tmp_path / "gold.jsonl"
    predictions.write_text(
        "".join(
            json.dumps(
                {
                    "task_id": r["task_id"],
                    "sample_id": r["sample_id"],
                    "prediction": r["selected_option_id"],
                    "confidence": 1.0,
                }
            )
            + "\n"
            for r in rows
        )
    )
    report = V2XQASuite().score_predictions(
        PredictionsRequest(labels=samples, predictions=predictions)
    )
    assert list(report["tasks"]) == list(TASK_IDS)
    assert all(task["accuracy"] == 1.0 for task in report["tasks"].values())
    assert sorted(report["views"]) == ["CO", "IS", "VS"]
    assert report["overall"]["items"] == 120 and report["overall"]["ece"] == 0.0


def test_the_extracts_ask_twelve_questions_of_each_scene(
    suite: V2XQASuite, items: dict[str, Item]
) -> None:
    """A scene is a vehicle-side frame and the roadside frame the cooperative rows pair with it
    (VS 000096 with IS 000087); sample ids are per side, so the roadside sample 000096 belongs
    to another scene (the one of vehicle frame 000104)."""
    clusters = suite_clusters(
        suite.cluster_unit, ((item, suite.cluster_keys(item)) for item in items.values())
    )
    sizes = Counter(clusters.of.values())
    assert sorted(sizes.values()) == [12] * 10
    scene = clusters.of["CO1:000096"]
    assert clusters.of["VS4:000096"] == clusters.of["IS2:000087"] == scene
    assert clusters.of["IS1:000096"] == clusters.of["VS1:000104"] != scene
