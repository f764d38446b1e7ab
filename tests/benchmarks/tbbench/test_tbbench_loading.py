"""Loading both released layouts, the exact prompt, and clear errors for bad rows."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from roadeval.benchmarks.errors import BadItemPolicy, ItemError, SuiteSourceError
from roadeval.benchmarks.item import MediaKind
from roadeval.benchmarks.messages import message_images, message_text
from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.tbbench.prompt import PREAMBLE
from roadeval.benchmarks.tbbench.suite import TBBenchSuite


def test_parquet_rows_become_items_with_derived_ids(
    write_parquet: Callable[..., Path],
    hf_row: Callable[..., dict[str, Any]],
    png: Callable[[int], bytes],
) -> None:
    path = write_parquet(
        [
            hf_row("relative_distance", "12.5 meters"),
            hf_row("ego_turning", "left_turn", frames=8, choice=["left_turn", "right_turn"]),
            hf_row("relative_distance", "3.0 meters"),
        ]
    )
    items = TBBenchSuite().load(path.parent).items
    assert [item.item_id for item in items] == ["RD-0000", "EGO-TURN-0000", "RD-0001"]
    rd, turn = items[0], items[1]
    assert (rd.task, rd.reference, rd.labels["release_task"]) == (
        "RD",
        "12.5 meters",
        "relative_distance",
    )
    assert rd.labels["gold_kind"] == "distance" and rd.answer_kind.value == "number"
    assert [m.kind for m in rd.media] == [MediaKind.IMAGE]
    assert turn.labels["frames"] == "8" and turn.answer_kind.value == "label"
    assert [m.kind for m in turn.media] == [MediaKind.FRAME] * 8
    assert [m.index for m in turn.media] == list(range(8))
    assert turn.options == {"A": "left_turn", "B": "right_turn"}
    # Embedded frames are materialized under the media cache, named by their content.
    assert all(Path(m.path).read_bytes() == png(10 * m.index + 1) for m in turn.media)


def test_own_ids_are_kept(
    write_parquet: Callable[..., Path], hf_row: Callable[..., dict[str, Any]]
) -> None:
    path = write_parquet([hf_row("spatial_reasoning", "front", id="q-17")])
    assert [item.item_id for item in TBBenchSuite().load(path).items] == ["q-17"]


def test_multi_frame_order_is_kept_in_the_messages(
    write_parquet: Callable[..., Path],
    hf_row: Callable[..., dict[str, Any]],
    png: Callable[[int], bytes],
) -> None:
    path = write_parquet([hf_row("other_turning", "go_straight", frames=8)])
    item = TBBenchSuite().load(path).items[0]
    messages = TBBenchSuite().messages(item)
    assert message_images(messages) == [png(10 * i + 1) for i in range(8)]
    assert messages == TBBenchSuite().messages(item)  # byte-deterministic


def test_prompt_is_preamble_frames_question(
    write_parquet: Callable[..., Path], hf_row: Callable[..., dict[str, Any]]
) -> None:
    path = write_parquet([hf_row("other_turning", "go_straight", frames=2)])
    item = TBBenchSuite().load(path).items[0]
    (message,) = TBBenchSuite().messages(item)
    assert message["role"] == "user"
    flattened = "".join(
        part["text"] if part["type"] == "text" else "<image>" for part in message["content"]
    )
    # The release's string, with its <image> markers where the frames go.
    assert flattened == f"{PREAMBLE}\n<image><image>\n{item.question}"
    assert message["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_jsonl_layout_resolves_frame_paths(
    write_jsonl: Callable[..., Path], png: Callable[[int], bytes]
) -> None:
    frames = {f"clips/c1/{i}.png": png(20 + i) for i in range(8)}
    rows = [
        {
            "id": "c1",
            "image": list(frames),
            "problem": "Turn?",
            "task": "other_turning",
            "choice": ["left_turn", "right_turn", "go_straight"],
            "solution": "left_turn",
        },
        {
            "image": "single.png",
            "problem": "Where?",
            "task": "spatial_reasoning",
            "solution": "front left",
        },
    ]
    path = write_jsonl(rows, {**frames, "single.png": png(99)})
    items = TBBenchSuite().load(path).items
    assert [item.item_id for item in items] == ["c1", "SR-0000"]
    assert message_images(TBBenchSuite().messages(items[0])) == list(frames.values())
    assert items[1].media[0].kind is MediaKind.IMAGE and items[1].options == {}


def test_row_without_solution_names_file_row_and_field(
    write_parquet: Callable[..., Path], hf_row: Callable[..., dict[str, Any]]
) -> None:
    path = write_parquet(
        [hf_row("relative_distance", "1.0 meters"), hf_row("relative_distance", None)]
    )
    with pytest.raises(ItemError) as caught:
        TBBenchSuite().load(path)
    problem = caught.value.problem
    assert (problem.file, problem.line, problem.field) == (str(path), 2, "solution")
    assert problem.item_id == "RD-0001"
    assert "line 2" in str(caught.value) and "'solution'" in str(caught.value)


def test_skip_policy_loads_the_rest_with_stable_ids(
    write_parquet: Callable[..., Path], hf_row: Callable[..., dict[str, Any]]
) -> None:
    path = write_parquet(
        [
            hf_row("relative_distance", "1.0 meters"),
            hf_row("relative_distance", None),
            hf_row("lane_counting", "2"),
            hf_row("relative_distance", "7.0 meters"),
        ]
    )
    report = TBBenchSuite().load(path, on_bad_item=BadItemPolicy.SKIP)
    # The skipped row keeps its index, so fixing it later renames nothing.
    assert [item.item_id for item in report.items] == ["RD-0000", "RD-0002"]
    assert [(p.line, p.field) for p in report.skipped] == [(2, "solution"), (3, "task")]
    assert "unknown TB-Bench task 'lane_counting'" in report.skipped[1].message


def test_missing_image_file_is_an_item_error(
    write_jsonl: Callable[..., Path], png: Callable[[int], bytes]
) -> None:
    rows = [
        {"image": ["a.png"], "problem": "Q", "task": "relative_distance", "solution": "1 meters"},
        {
            "image": ["a.png", "gone.png"],
            "problem": "Q",
            "task": "ego_turning",
            "solution": "left_turn",
        },
    ]
    path = write_jsonl(rows, {"a.png": png(1)})
    with pytest.raises(ItemError) as caught:
        TBBenchSuite().load(path)
    problem = caught.value.problem
    assert (problem.file, problem.line, problem.field) == (str(path), 2, "image")
    assert "frame 1" in problem.message and "gone.png" in problem.message
    report = TBBenchSuite().load(path, on_bad_item=BadItemPolicy.SKIP)
    assert [item.item_id for item in report.items] == ["RD-0000"]


def test_bytes_that_are_not_an_image_are_rejected(
    write_parquet: Callable[..., Path], hf_row: Callable[..., dict[str, Any]]
) -> None:
    row = hf_row("relative_distance", "1.0 meters")
    row["image"] = [{"bytes": b"not a png", "path": None}]
    with pytest.raises(
        ItemError, match=r"frame 0: embedded bytes: not an image \(content starts b.not a pn.\)"
    ):
        TBBenchSuite().load(write_parquet([row]))


def test_duplicate_ids_and_bad_choice(
    write_jsonl: Callable[..., Path], png: Callable[[int], bytes]
) -> None:
    base = {"image": "a.png", "problem": "Q", "task": "spatial_reasoning", "solution": "front"}
    path = write_jsonl([{**base, "id": "x"}, {**base, "id": "x"}], {"a.png": png(1)})
    with pytest.raises(ItemError, match="duplicate item id"):
        TBBenchSuite().load(path)
    path = write_jsonl([{**base, "choice": "front"}], {"a.png": png(1)}, name="b.jsonl")
    with pytest.raises(ItemError, match="'choice'"):
        TBBenchSuite().load(path)


def test_source_must_hold_one_layout(
    tmp_path: Path, write_parquet: Callable[..., Path], hf_row: Callable[..., dict[str, Any]]
) -> None:
    with pytest.raises(SuiteSourceError, match=r"no \.parquet or \.jsonl"):
        TBBenchSuite().load(tmp_path)
    folder = write_parquet([hf_row("relative_distance", "1.0 meters")]).parent
    (folder / "extra.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(SuiteSourceError, match="both"):
        TBBenchSuite().load(folder)


def test_add_choices_appends_the_release_lines(
    write_parquet: Callable[..., Path], hf_row: Callable[..., dict[str, Any]]
) -> None:
    rows = [
        hf_row("relative_distance", "1.0 meters"),
        hf_row("other_lane_to_ego", "front_lane", choice=["front_lane", "oncoming_traffic_lane"]),
        {**hf_row("orientation_reasoning", "30 degrees"), "problem": "Angle in degrees?"},
    ]
    suite = get_suite("tbbench", add_choices=True)
    assert suite.options() == {"add_choices": True}
    texts = [message_text(suite.messages(item)) for item in suite.load(write_parquet(rows)).items]
    assert texts[0].endswith("Question about relative_distance?\nAnswer in xx.x meters format.")
    assert texts[1].endswith(
        "Question about other_lane_to_ego?\nOptions: A. front lane\nB. oncoming traffic lane. "
        "\nChoose the best answer."
    )
    assert texts[2].endswith("Angle in degrees?\nAnswer in xx.x degrees format.")
    # Without the option the question goes as released.
    plain = TBBenchSuite()
    assert message_text(plain.messages(plain.load(write_parquet(rows)).items[1])).endswith(
        "Question about other_lane_to_ego?"
    )


def test_add_choices_needs_choices(
    write_parquet: Callable[..., Path], hf_row: Callable[..., dict[str, Any]]
) -> None:
    path = write_parquet([hf_row("spatial_reasoning", "front")])
    with pytest.raises(ItemError, match="add_choices needs the row's choices"):
        get_suite("tbbench", add_choices=True).load(path)


def test_options_are_validated() -> None:
    with pytest.raises(ValueError, match="true or false"):
        get_suite("tbbench", add_choices="yes")
    with pytest.raises(ValueError, match="no option"):
        get_suite("tbbench", shuffle=True)
