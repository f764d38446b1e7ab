"""The release's MCQ answer reader (`stride/mcq.py: extract_answer_key`), rule for rule.

After `</think>` stripping: (1) the whole text as a JSON object with a non-empty string `answer`
gives that answer's FIRST character, upper-cased (`{"answer": "Option C"}` reads O); (2) an
upper-cased text of one letter is that letter; (3) the first match of a pattern whose parts are
all optional but the letter, so the first standalone capital anywhere ("I'd say B" reads I,
"N/A" reads N); (4) a trailing-letter pattern, unreachable after (3) but kept for fidelity;
(5) the first option, in the choices' order, whose text occurs in the answer (case-insensitive).
Any letter counts, even one that is not an option (it is then wrong); nothing read is wrong too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from roadeval.benchmarks.stride.thinking import strip_thinking
from roadeval.benchmarks.suite import ParsedAnswer, ParseStatus

LETTER_PATTERN = re.compile(r"\b(?:ANSWER|OPTION)?\s*[:\-]?\s*\(?([A-Z])\)?\b")
TRAILING_LETTER_PATTERN = re.compile(r"(?:^|\n)\s*\(?([A-Z])\)?\s*$")

JSON_ANSWER = "mcq:json-answer"
SINGLE_LETTER = "mcq:single-letter"
LETTER_MATCH = "mcq:letter-pattern"
TRAILING_LETTER = "mcq:trailing-letter"
OPTION_TEXT = "mcq:option-text"
EMPTY = "mcq:empty"
NOTHING = "mcq:nothing-read"


def extract_answer_key(raw: str, choices: Mapping[str, str] | None) -> tuple[str | None, str]:
    """(the letter the release reads, the rule that read it); (None, rule) when none is read."""
    text = strip_thinking(raw or "")
    if not text:
        return None, EMPTY
    try:
        payload = json.loads(text)
    except (ValueError, RecursionError):
        payload = None
    if isinstance(payload, dict):
        answer = payload.get("answer")
        if isinstance(answer, str) and answer.strip():
            return answer.strip().upper()[:1], JSON_ANSWER
    normalized = text.strip().upper()
    if len(normalized) == 1 and normalized.isalpha():
        return normalized, SINGLE_LETTER
    match = LETTER_PATTERN.search(normalized)
    if match:
        return match.group(1), LETTER_MATCH
    trailing = TRAILING_LETTER_PATTERN.search(normalized)
    if trailing:
        return trailing.group(1), TRAILING_LETTER
    if choices:
        lowered = text.lower()
        for key, value in choices.items():
            if isinstance(value, str) and value.strip() and value.lower() in lowered:
                return str(key).upper(), OPTION_TEXT
    return None, NOTHING


def read_choice(raw: str, choices: Mapping[str, str]) -> ParsedAnswer:
    """The letter as a ParsedAnswer: OK for an option letter, ABNORMAL for a letter that is not
    an option (read, and scored wrong, as the release does), UNPARSED when nothing was read."""
    letter, rule = extract_answer_key(raw, choices)
    if letter is None:
        return ParsedAnswer(ParseStatus.UNPARSED, None, rule, "no option letter read: wrong")
    if letter not in choices:
        detail = f"read {letter!r}, not one of the options {', '.join(choices)}: wrong"
        return ParsedAnswer(ParseStatus.ABNORMAL, letter, rule, detail)
    return ParsedAnswer(ParseStatus.OK, letter, rule)


def gold_letter(ground_truth: object) -> str:
    """The release's gold: `str(ground_truth).strip().upper()[:1]`."""
    return str(ground_truth).strip().upper()[:1]


def is_correct(letter: str | None, gold: str) -> bool:
    """`bool(predicted) and predicted == gt`."""
    return bool(letter) and letter == gold
