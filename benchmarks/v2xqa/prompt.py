"""The release's prompt, character for character: its system prompt, its user template with the
view's image note, and the images before the text in one user turn.

Copied from github junwei0001/V2X-QA, model/eval/v2x_moe_eval_mcqa_qwen3.py at commit ee2e9fe
(SYSTEM_PROMPT, USER_PROMPT_TEMPLATE, build_user_text, evaluate_single_sample). The template
ends with a newline, as the release's triple-quoted string does.
"""

from __future__ import annotations

from collections.abc import Sequence

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.messages import ImageRef, Message, system_message, user_message
from roadeval.benchmarks.v2xqa.tasks import View

PROMPT_VERSION = "release-ee2e9fe"

SYSTEM_PROMPT = (
    "You are answering a multiple-choice autonomous driving question. "
    "Use only the provided image evidence and the question/options. "
    "Return exactly one uppercase letter only: A or B or C or D. "
    "Do not output any other words, punctuation, or explanation."
)

USER_PROMPT_TEMPLATE = """Task: {task_id}
Viewpoint: {viewpoint}

Image evidence:
{image_note}

Question:
{question}

Options:
A. {opt_a}
B. {opt_b}
C. {opt_c}
D. {opt_d}

Return exactly one uppercase letter only: A, B, C, or D.
"""

IMAGE_NOTES: dict[View, str] = {
    View.VS: "One image is provided: vehicle-side (ego) view.",
    View.IS: "One image is provided: infrastructure-side (RSU) view.",
    View.CO: (
        "Two images are provided in order: "
        "(1) vehicle-side (ego) view, "
        "(2) infrastructure-side (RSU) view."
    ),
}


def user_text(item: Item) -> str:
    """The release's build_user_text for this item (question and options already stripped)."""
    view = View(item.labels["view"])
    return USER_PROMPT_TEMPLATE.format(
        task_id=item.task,
        viewpoint=view.value,
        image_note=IMAGE_NOTES[view],
        question=item.question,
        opt_a=item.options["A"],
        opt_b=item.options["B"],
        opt_c=item.options["C"],
        opt_d=item.options["D"],
    )


def build_messages(item: Item, images: Sequence[ImageRef]) -> list[Message]:
    """System turn, then one user turn: every image in order, then the text (the release's
    `user_content` puts the images first)."""
    return [system_message(SYSTEM_PROMPT), user_message(user_text(item), images)]
