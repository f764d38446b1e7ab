"""The release's prompt: its fixed preamble, the frames, then the dataset's `problem` text.

The release builds one user string f"{preamble}\\n{'<image>' * n}\\n{question}" and lets the
model's chat template put the frames where the `<image>` markers are. Here the markers become image
parts in order, so the text parts keep the release's bytes around them. With `add_choices` (off in
the release's notebook, on for the paper's zero-shot runs) the release's format or option lines
are appended to the question.
"""

from __future__ import annotations

from collections.abc import Sequence

from roadeval.benchmarks.messages import ImageRef, Message, image_part, text_part

PREAMBLE = (
    "A chat between a curious user and an artificial intelligence assistant. "
    "The assistant gives helpful, detailed, and polite answers to the user's questions."
)
METERS_FORMAT = "\nAnswer in xx.x meters format."
DEGREES_FORMAT = "\nAnswer in xx.x degrees format."


def asks_format_only(release_task: str, problem: str) -> bool:
    """Whether `add_choices` appends a number format (distances, angle questions) not options."""
    return "distance" in release_task or ("orientation" in release_task and "degrees" in problem)


def options_block(choices: Sequence[str]) -> str:
    """The release's option lines: letters A.., underscores shown as spaces."""
    listed = "\n".join(
        f"{chr(ord('A') + index)}. {choice.replace('_', ' ')}"
        for index, choice in enumerate(choices)
    )
    return f"\nOptions: {listed}. \nChoose the best answer."


def question_text(
    release_task: str, problem: str, choices: Sequence[str], add_choices: bool
) -> str:
    """The question as the model reads it.

    For orientation questions without 'degrees' the release indexes the batch's choice column
    instead of the row's list and fails on it; the row's own choices are listed, as the release
    does for every other class task.
    """
    if not add_choices:
        return problem
    if "distance" in release_task:
        return problem + METERS_FORMAT
    if "orientation" in release_task and "degrees" in problem:
        return problem + DEGREES_FORMAT
    return problem + options_block(choices)


def prompt_messages(question: str, frames: Sequence[ImageRef]) -> list[Message]:
    """One user turn: preamble, every frame in order, then the question."""
    content = [
        text_part(f"{PREAMBLE}\n"),
        *(image_part(frame) for frame in frames),
        text_part(f"\n{question}"),
    ]
    return [{"role": "user", "content": content}]
