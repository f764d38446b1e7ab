"""The `trip` suite as the pipeline sees it: registration, options, prompt, parse and score."""

from __future__ import annotations

import pytest

from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.registry import get_suite, suite_names
from roadeval.benchmarks.suite import ParseStatus
from roadeval.benchmarks.trip.suite import TripSuite


def test_suite_is_registered_with_its_protocol_settings() -> None:
    assert "trip" in suite_names()
    suite = get_suite("trip")
    assert isinstance(suite, TripSuite)
    assert suite.prompt_version == "trip-v1" and suite.max_attempts == 1
    assert suite.slice_labels == (
        "role",
        "subject",
        "knowledge_point",
        "capability",
        "difficulty",
        "modality",
    )
    assert suite.slice_metrics == ("correct",)
    assert suite.options() == {"abnormal_rule": "wrong", "point_cloud_frame": "default"}
    assert get_suite(
        "trip", abnormal_rule="first-valid", point_cloud_frame="nuscenes"
    ).options() == {
        "abnormal_rule": "first-valid",
        "point_cloud_frame": "nuscenes",
    }
    with pytest.raises(ValueError, match="point_cloud_frame: unknown frame preset 'lidar'"):
        get_suite("trip", point_cloud_frame="lidar")


def test_bad_options_are_rejected() -> None:
    with pytest.raises(ValueError, match="abnormal_rule must be one of wrong, first-valid"):
        TripSuite(abnormal_rule="random")
    with pytest.raises(ValueError, match="takes no options"):
        TripSuite(decoding="greedy")


def test_text_prompt_lists_options_and_asks_for_one_letter(write_source, text_row) -> None:
    suite = TripSuite()
    (item,) = suite.load(write_source([text_row()])).items
    (message,) = suite.messages(item)
    assert message["role"] == "user" and isinstance(message["content"], str)
    text = message["content"]
    assert "Question: L = 12 s and Y = 0.6. What is Webster's optimal cycle?" in text
    assert "A. 57.5 s\nB. 45.0 s\nC. 42.5 s\nD. 38.3 s" in text
    assert text.endswith("Output only one letter from A/B/C/D, with no other text.")
    assert "attached" not in text


def test_prompts_differ_only_by_the_visual_note(write_source, text_row, image_row) -> None:
    suite = TripSuite()
    text_item, image_item = suite.load(write_source([text_row("t"), image_row("i")])).items
    plain = suite.messages(text_item)[0]["content"]
    with_image = suite.messages(image_item)[0]["content"][1]["text"]
    note = "The attached image is part of the question.\n\n"
    assert with_image.replace(note, "") == plain


def test_parse_and_score_follow_the_configured_rule(write_source, text_row) -> None:
    strict, lenient = TripSuite(), TripSuite(abnormal_rule="first-valid")
    (item,) = strict.load(write_source([text_row()])).items  # gold A
    reply = ModelOutput("A, B")
    strict_parse, lenient_parse = strict.parse(item, reply), lenient.parse(item, reply)
    assert strict_parse.status is ParseStatus.UNPARSED
    assert strict.score(item, strict_parse) == {"correct": 0.0}
    assert lenient_parse.status is ParseStatus.ABNORMAL
    assert lenient.score(item, lenient_parse) == {"correct": 1.0}
    assert not strict.should_reask(item, strict_parse)
