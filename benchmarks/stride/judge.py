"""The release's vision judge (`stride/vision_judge.py`): its rubric prompt, its settings
(Qwen/Qwen3-VL-32B-Instruct by default, temperature 0, 192 new tokens) and its reply reader.

The judge sees the frames the candidate saw, then the rubric with the question (as the row has
it), the reference and the candidate answer (after `</think>` stripping). Replies are read as the
release reads them: the whole text as a JSON object with `score` gives float(score), NOT clamped
(12 stays 12); else the first standalone 0-10 integer anywhere in the text (so a fenced JSON reply
falls to this, and a digit in the rationale can win); else nothing, which roadeval reports as
unscored with its reason, never as a number.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from roadeval.benchmarks.generation import GenerationSettings
from roadeval.benchmarks.judging import JudgeRequest
from roadeval.benchmarks.messages import ImageRef, user_message
from roadeval.benchmarks.stride.thinking import strip_thinking

DEFAULT_JUDGE_MODEL = "Qwen/Qwen3-VL-32B-Instruct"
JUDGE_SETTINGS = GenerationSettings(temperature=0, max_tokens=192)
JUDGE_PROMPT_VERSION = "stride-vision-judge-1dd585b"
ERROR_PREFIX = "[ERROR]"

_FIRST_SCORE = re.compile(r"\b([0-9]|10)\b")

JSON_SCORE = "judge:json-score"
FIRST_INTEGER = "judge:first-integer"


def judge_prompt(question: str, reference: str, candidate: str) -> str:
    """`build_vision_judge_prompt`, byte for byte."""
    return (
        "You are an expert grader for autonomous-driving free-response questions.\n"
        "You are shown the same driving frames the model saw. Use the images as the primary "
        "evidence. The reference answer is a helpful guide, not an absolute script — reward "
        "answers that are visually correct even if wording differs.\n"
        "Assign an integer score from 0 to 10.\n"
        "Scoring rubric:\n"
        "10 = fully correct and complete given the visuals\n"
        "7-9 = mostly correct, minor omissions/errors\n"
        "4-6 = partially correct\n"
        "1-3 = mostly incorrect but related\n"
        "0 = irrelevant or completely wrong\n"
        'Respond with ONLY a JSON object: {"score": <int>, "rationale": "<short>"}.\n\n'
        f"Question: {question.strip()}\n"
        f"Reference answer: {reference.strip()}\n"
        f"Candidate answer: {candidate}\n"
    )


def candidate_answer(raw: str) -> str | None:
    """The answer the judge is shown, or None when the release would not judge it (empty, or a
    runner's `[ERROR]` placeholder)."""
    answer = strip_thinking(raw)
    if not answer or answer.startswith(ERROR_PREFIX):
        return None
    return answer


def judge_request(
    images: Sequence[ImageRef], question: str, reference: str, candidate: str
) -> JudgeRequest:
    """One user turn: the frames, then the rubric text (the release's reference vision-judge
    runner puts the images before the text)."""
    text = judge_prompt(question, reference, candidate)
    return JudgeRequest(
        messages=[user_message(text, images)],
        settings=JUDGE_SETTINGS,
        prompt_version=JUDGE_PROMPT_VERSION,
    )


def parse_judge_score(raw: str) -> tuple[float | None, str]:
    """(score, rule) as `parse_judge_score` reads it; (None, reason) when nothing is read."""
    text = strip_thinking(raw)
    try:
        payload = json.loads(text)
    except (ValueError, RecursionError):
        payload = None
    if isinstance(payload, dict) and "score" in payload:
        try:
            return float(payload["score"]), JSON_SCORE
        except (TypeError, ValueError, OverflowError):
            pass  # the release's bare `except` falls through to the digit search
    match = _FIRST_SCORE.search(text)
    if match:
        return float(match.group(1)), FIRST_INTEGER
    return None, "no JSON score and no 0-10 integer in the reply"
