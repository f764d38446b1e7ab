"""The release's prompt text, byte for byte, for each kind of question."""

from __future__ import annotations

from roadeval.benchmarks.generation import GenerationSettings
from roadeval.benchmarks.stride.prompt import prompt_text
from roadeval.benchmarks.stride.suite import StrideSuite

CONTEXT = (
    "You are given 5 consecutive driving frames. The first 4 images are temporal context. "
    "The 5th image is the query frame; when a target object exists, it is highlighted by a red "
    "bounding box.\n"
)


def test_mcq_with_a_target() -> None:
    text = prompt_text(
        "SP-1",
        "Where is <obj> going?",
        "MCQ",
        {"A": "Toward ego", "B": "Away"},
        has_target=True,
    )
    assert text == (
        CONTEXT + "Question ID: SP-1\n"
        "Target object: the object in the red bounding box in the 5th image.\n"
        "Question: Where is the object in the red bounding box going?\n"
        "Choices: {'A': 'Toward ego', 'B': 'Away'}\n"
        "Select exactly one option from the provided choices. "
        "Respond with only the option key, for example A."
    )


def test_trajectories_and_open_questions() -> None:
    assert prompt_text("TRJ-6", "Predict.", "OEQ", {}, has_target=False) == (
        CONTEXT + "Question ID: TRJ-6\nQuestion: Predict.\n"
        "Predict 4 future ego-centric waypoints as a JSON list of [x, y] pairs in meters, "
        "for example [[0.0, 1.0], ...]. Respond with only the JSON list."
    )
    assert prompt_text("TRJ-5", "Predict.", "OEQ", {}, has_target=False).endswith(
        "Predict 5 future ego-centric waypoints as a JSON list of [x, y] pairs in meters, "
        "for example [[0.0, 1.0], ...]. Respond with only the JSON list."
    )
    assert prompt_text("SC-4", "Describe.", "OEQ", {}, has_target=False) == (
        CONTEXT + "Question ID: SC-4\nQuestion: Describe.\nProvide a concise plain-text answer."
    )


def test_scene_overview_counts_its_frames_and_names_no_target() -> None:
    text = prompt_text("SC-6", "Describe <obj>.", "OEQ", {}, has_target=True, num_images=8)
    assert text == (
        "You are given 8 chronological 360-degree multi-camera frames from one driving scene. "
        "Use the full clip to summarize the overall environment.\n"
        "Question ID: SC-6\n"
        "Question: Describe the object in the red bounding box.\n"
        "Provide a concise plain-text answer."
    )


def test_protocol_settings_and_options() -> None:
    assert StrideSuite.generation == GenerationSettings(temperature=0)
    assert StrideSuite.uses_judge
    assert StrideSuite().options() == {"images": None}
    assert StrideSuite(images="imgs").options() == {"images": "imgs"}
