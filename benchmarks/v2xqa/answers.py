"""Reading a reply as the release does (parse_choice_from_text), plus the calibration inputs
(`confidence`: the letters' probabilities, read by the rule stated there).

Letter rules, on the reply stripped and upper-cased: `letter:exact` when that is one of A-D;
else `letter:first-standalone`, the first `\\b[ABCD]\\b` (so an article "a" reads as A: the
release's quirk, kept because its numbers come from it); else `letter:none`. The release aborts
the whole run on `letter:none`; here the item is UNPARSED and scores as wrong.
"""

from __future__ import annotations

import re
from typing import Any

from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.suite import ParsedAnswer, ParseStatus
from roadeval.benchmarks.v2xqa.confidence import read_letters
from roadeval.benchmarks.v2xqa.tasks import LETTERS

EXACT_RULE = "letter:exact"
FIRST_STANDALONE_RULE = "letter:first-standalone"
NO_LETTER_RULE = "letter:none"
# The release's CHOICE_RE (it also sets IGNORECASE, moot on upper-cased text).
_CHOICE = re.compile(r"\b([ABCD])\b", re.IGNORECASE)
_EXCERPT_CHARS = 80


def read_letter(text: str) -> tuple[str | None, str]:
    """(letter or None, rule) by the release's parse_choice_from_text."""
    cleaned = (text or "").strip().upper()
    if cleaned in LETTERS:
        return cleaned, EXACT_RULE
    match = _CHOICE.search(cleaned)
    if match:
        return match.group(1).upper(), FIRST_STANDALONE_RULE
    return None, NO_LETTER_RULE


def parse_output(output: ModelOutput) -> ParsedAnswer:
    """The letter and its rule, with {"letter", "confidence", "probs", "letters_seen",
    "position"} as the value (the last three as `confidence.read_letters` reads them)."""
    letter, rule = read_letter(output.text)
    reading = read_letters(output)
    value: dict[str, Any] = {
        "letter": letter,
        "confidence": reading.confidence,
        "probs": reading.probs,
        "letters_seen": reading.letters_seen,
        "position": reading.position,
    }
    if letter is None:
        excerpt = output.text.strip()
        if len(excerpt) > _EXCERPT_CHARS:
            excerpt = excerpt[: _EXCERPT_CHARS - 3] + "..."
        detail = f"no A-D letter in {excerpt!r}; the release aborts here, roadeval scores it wrong"
        return ParsedAnswer(ParseStatus.UNPARSED, value, rule, detail)
    return ParsedAnswer(ParseStatus.OK, value, rule)


def parsed_letter(parsed: ParsedAnswer) -> str | None:
    value = parsed.value
    letter = value.get("letter") if isinstance(value, dict) else None
    return letter if isinstance(letter, str) else None


def parsed_probs(parsed: ParsedAnswer) -> dict[str, float] | None:
    value = parsed.value
    probs = value.get("probs") if isinstance(value, dict) else None
    if not isinstance(probs, dict) or set(probs) != set(LETTERS):
        return None
    return {letter: float(probs[letter]) for letter in LETTERS}


def parsed_confidence(parsed: ParsedAnswer) -> float | None:
    value = parsed.value
    confidence = value.get("confidence") if isinstance(value, dict) else None
    return float(confidence) if isinstance(confidence, int | float) else None


def parsed_letters_seen(parsed: ParsedAnswer) -> int | None:
    """How many letters the confidence was read from (0-4); None in a parse that predates it."""
    value = parsed.value
    seen = value.get("letters_seen") if isinstance(value, dict) else None
    return seen if isinstance(seen, int) and not isinstance(seen, bool) else None


def parsed_position(parsed: ParsedAnswer) -> int | None:
    """The output position the letters were read at; None with no confidence."""
    value = parsed.value
    position = value.get("position") if isinstance(value, dict) else None
    return position if isinstance(position, int) and not isinstance(position, bool) else None
