"""The calibration inputs read from a reply's log-probabilities: the four letters' probabilities
at the answer's letter position, their largest (the confidence), how many letters were seen.

The release takes a softmax over the logits of the tokens "A".."D" at the first generated
position. Providers give log-probabilities of the top alternatives at each output position
instead; a softmax over the letters' log-probabilities is the same softmax (log-probabilities
differ from logits by one shared constant).

The rule: tokens are compared stripped and upper-cased (" a", "a" and "A" all spell A), and a
letter spelled by several tokens takes its most likely one, the release's single token standing
for it. The position read is the first whose alternatives (the chosen token included) hold any
of the four letters, so a reply that opens with "(" or "The answer" is read where its letter
was chosen. There, the softmax runs over the letters seen; a letter outside the alternatives
has probability 0 (it is less likely than every one listed), and `letters_seen` (0-4) says how
many the confidence rests on: fewer than four happens when the provider's top alternatives are
spent on spellings of one letter, or on other words. No log-probabilities, or no position with
a letter: no confidence (`letters_seen` 0, no position).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.v2xqa.tasks import LETTERS


@dataclass(frozen=True)
class LetterReading:
    """The letters' probabilities (None: no confidence), how many letters were among the
    alternatives, and the output position they were read at (None with no confidence)."""

    probs: dict[str, float] | None
    letters_seen: int = 0
    position: int | None = None

    @property
    def confidence(self) -> float | None:
        return max(self.probs.values()) if self.probs is not None else None


def letter_logprobs(top: dict[str, float] | None) -> dict[str, float]:
    """Each letter's best log-probability among one position's alternatives (letters only)."""
    best: dict[str, float] = {}
    for token, logprob in (top or {}).items():
        letter = token.strip().upper()
        if letter in LETTERS and math.isfinite(logprob):
            best[letter] = max(logprob, best.get(letter, -math.inf))
    return best


def letter_probabilities(top: dict[str, float] | None) -> dict[str, float] | None:
    """Softmax over the letters' log-probabilities at one position (unseen letters 0); None
    when no alternative there is a letter."""
    return _softmax(letter_logprobs(top))


def read_letters(output: ModelOutput) -> LetterReading:
    """The reading at the first output position whose alternatives hold a letter."""
    for position in range(len(output.logprobs or ())):
        best = letter_logprobs(output.top_logprobs(position))
        probs = _softmax(best)
        if probs is not None:
            return LetterReading(probs, len(best), position)
    return LetterReading(None)


def _softmax(best: dict[str, float]) -> dict[str, float] | None:
    if not best:
        return None
    peak = max(best.values())
    weights = {
        letter: math.exp(best[letter] - peak) if letter in best else 0.0 for letter in LETTERS
    }
    total = sum(weights.values())
    return {letter: weights[letter] / total for letter in LETTERS}
