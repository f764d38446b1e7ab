"""The release's prompt (`stride/prompts.py: build_text_prompt`) and message (`run_openai.py`: one
user turn, the text first, then the frames in order).

`<obj>` in a question becomes "the object in the red bounding box"; MCQ choices are shown as the
release prints them, the Python repr of the choices dict (`Choices: {'A': ..., ...}`); the frame
count in the text is the number of frames sent (8 for an SC-6 overview, else 5).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.messages import ImageRef, Message, user_message
from roadeval.benchmarks.stride.tasks import SCENE_OVERVIEW, TRAJECTORY_POINTS

PROMPT_VERSION = "stride-1dd585b"
MASKED_OBJECT_REFERENCE = "the object in the red bounding box"
MCQ_INSTRUCTION = (
    "Select exactly one option from the provided choices. "
    "Respond with only the option key, for example A."
)
OPEN_INSTRUCTION = "Provide a concise plain-text answer."


def trajectory_instruction(template: str) -> str:
    points = 5 if template == "TRJ-5" else 4
    return (
        f"Predict {points} future ego-centric waypoints as a JSON list of [x, y] pairs in meters, "
        "for example [[0.0, 1.0], ...]. Respond with only the JSON list."
    )


def prompt_text(
    template: str,
    question: str,
    question_format: str,
    choices: Mapping[str, str],
    has_target: bool,
    num_images: int = 5,
) -> str:
    """`build_text_prompt` for a row with these fields."""
    question = question.replace("<obj>", MASKED_OBJECT_REFERENCE)
    if question_format.upper() == "MCQ" and choices:
        instruction = MCQ_INSTRUCTION
        # The release formats the dict itself: its repr, in the file's key order.
        choice_text = f"Choices: {dict(choices)}\n"
    elif template in TRAJECTORY_POINTS:
        instruction = trajectory_instruction(template)
        choice_text = ""
    else:
        instruction = OPEN_INSTRUCTION
        choice_text = ""
    target_line = ""
    if template == SCENE_OVERVIEW:
        context_line = (
            f"You are given {num_images} chronological 360-degree multi-camera frames from one "
            "driving scene. Use the full clip to summarize the overall environment.\n"
        )
    else:
        context_line = (
            f"You are given {num_images} consecutive driving frames. The first {num_images - 1} "
            f"images are temporal context. The {num_images}th image is the query frame; when a "
            "target object exists, it is highlighted by a red bounding box.\n"
        )
        if has_target:
            target_line = f"Target object: {MASKED_OBJECT_REFERENCE} in the {num_images}th image.\n"
    return (
        f"{context_line}"
        f"Question ID: {template}\n"
        f"{target_line}"
        f"Question: {question}\n"
        f"{choice_text}"
        f"{instruction}"
    )


def item_prompt_text(item: Item, num_images: int) -> str:
    return prompt_text(
        item.task,
        item.question,
        item.labels["question_format"],
        item.options,
        bool(item.extra.get("has_target")),
        num_images,
    )


def build_messages(item: Item, images: Sequence[ImageRef]) -> list[Message]:
    """One user message: the prompt text, then every frame."""
    return [user_message(item_prompt_text(item, len(images)), images, text_first=True)]
