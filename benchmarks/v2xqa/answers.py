"""Reading a reply as the release does (parse_choice_from_text), plus the calibration inputs:
the four letters' probabilities at the answer's first token and their largest (the confidence).

Letter rules, on the reply stripped and upper-cased: `letter:exact` when that is one of A-D;
else `letter:first-standalone`, the first `\\b[ABCD]\\b` (so an article "a" reads as A: the
release's quirk, kept because its numbers come from it); else `letter:none`. The release aborts
the whole run on `letter:none`; here the item is UNPARSED and scores as wrong.

Confidence: the release takes a softmax over the logits of the tokens "A".."D" at the first
generated position. Providers give log-probabilities of the top alternatives there instead; a
softmax over the letters' log-probabilities is the same softmax (log-probabilities differ from
logits by one shared constant). Tokens are compared stripped and upper-cased, and a letter
spelled by several tokens (" A", "A") takes its most likely one, the release's single token
standing for it. A letter outside the alternatives given has probability 0 (it is less likely
than every one listed). No log-probabilities, or no letter among them: no confidence (None).
"""

from __future__ import annotations

import math
import re
from typing import Any

from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.suite import ParsedAnswer, ParseStatus
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


def letter_probabilities(top: dict[str, float] | None) -> dict[str, float] | None:
    """Softmax over the four letters' log-probabilities at one position (see module docstring);
    None when there are none or no alternative is a letter."""
    if not top:
        return None
    best: dict[str, float] = {}
    for token, logprob in top.items():
        letter = token.strip().upper()
        if letter in LETTERS and math.isfinite(logprob):
            best[letter] = max(logprob, best.get(letter, -math.inf))
    if not best:
        return None
    peak = max(best.values())
    weights = {
        letter: math.exp(best[letter] - peak) if letter in best else 0.0 for letter in LETTERS
    }
    total = sum(weights.values())
    return {letter: weights[letter] / total for letter in LETTERS}


def parse_output(output: ModelOutput) -> ParsedAnswer:
    """The letter and its rule, with {"letter", "confidence", "probs"} as the value."""
    letter, rule = read_letter(output.text)
    probs = letter_probabilities(output.top_logprobs(0))
    value: dict[str, Any] = {
        "letter": letter,
        "confidence": max(probs.values()) if probs is not None else None,
        "probs": probs,
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
