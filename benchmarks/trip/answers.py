"""TRIP's abnormal-output rule: a reply is one clean letter A-D, or it is abnormal and counted.

The exact rule, applied to the reply after Unicode NFKC normalisation (full-width letters and
brackets become ASCII):
1. `empty`: nothing but whitespace.
2. `single-letter` (status ok): exactly one upper-case letter A-D, optionally preceded by
   "Answer:", "The answer is", "Option", "Choice" or "答案：", optionally wrapped in one pair of
   brackets and/or markdown emphasis, optionally followed by one punctuation mark: "B", "B.",
   "(B)", "**B**", "Answer: B".
3. Otherwise the reply is abnormal. Its letters are the upper-case A-D that stand alone (no
   letter or digit on either side), or, when the reply holds only A-D letters and separators
   ("AB", "A,C"), each of those letters. Two or more distinct letters: `several-letters`; one:
   `extra-text` (a letter amid other text, such as "B. 70 m" or "I think B"); none: `not-a-d`.
Under `wrong` (the default) every abnormal reply is unparsed and scores as wrong. Under
`first-valid` a reply with letters takes its first one, status abnormal, rule
`first-valid/<class>`; replies without letters stay unparsed. Lower-case letters never count:
an "a" in running text is an article, not an option.
"""

from __future__ import annotations

import re
import unicodedata
from enum import StrEnum

from roadeval.benchmarks.suite import ParsedAnswer, ParseStatus


class AbnormalRule(StrEnum):
    """How abnormal replies are handled; recorded in the run manifest as a suite option."""

    WRONG = "wrong"
    FIRST_VALID = "first-valid"


CLEAN_RULE = "single-letter"
EMPTY_RULE = "empty"
NOT_A_D_RULE = "not-a-d"
EXTRA_TEXT_RULE = "extra-text"
SEVERAL_LETTERS_RULE = "several-letters"
FIRST_VALID_PREFIX = "first-valid/"

# NFKC has already turned full-width colons, brackets and commas into ASCII ones.
_PREFIX = (
    r"(?:(?i:(?:the\s+)?(?:final\s+)?(?:answer|option|choice)(?:\s+is)?)\s*:?\s*"
    r"|答案\s*[是为]?\s*:?\s*)?"
)
_EMPHASIS = r"[*_`\s]*"
_CLEAN = re.compile(
    rf"^{_EMPHASIS}{_PREFIX}{_EMPHASIS}[(\[【]?\s*([ABCD])\s*[)\]】]?{_EMPHASIS}[.,;:!。]?{_EMPHASIS}$"
)
_STANDALONE = re.compile(r"(?<![A-Za-z0-9])[ABCD](?![A-Za-z0-9])")
_LETTERS_ONLY = re.compile(r"^[\W_]*[ABCD](?:[\W_]*[ABCD])+[\W_]*$")

_EXCERPT_CHARS = 80


def parse_reply(text: str, rule: AbnormalRule = AbnormalRule.WRONG) -> ParsedAnswer:
    """Read one letter from a raw reply by the rule in the module docstring."""
    reply = unicodedata.normalize("NFKC", text or "").strip()
    if not reply:
        return ParsedAnswer(ParseStatus.UNPARSED, None, EMPTY_RULE, "empty reply")
    clean = _CLEAN.match(reply)
    if clean:
        return ParsedAnswer(ParseStatus.OK, clean.group(1), CLEAN_RULE)
    letters = letters_in(reply)
    kind = _abnormal_kind(letters)
    detail = f"letters {', '.join(letters) or 'none'} in {_excerpt(reply)!r}"
    if rule is AbnormalRule.FIRST_VALID and letters:
        return ParsedAnswer(ParseStatus.ABNORMAL, letters[0], FIRST_VALID_PREFIX + kind, detail)
    return ParsedAnswer(ParseStatus.UNPARSED, None, kind, detail)


def letters_in(reply: str) -> list[str]:
    """The option letters a non-clean reply names, in order of appearance (repeats kept)."""
    if _LETTERS_ONLY.match(reply):
        return [char for char in reply if char in "ABCD"]
    return _STANDALONE.findall(reply)


def _abnormal_kind(letters: list[str]) -> str:
    distinct = set(letters)
    if len(distinct) >= 2:
        return SEVERAL_LETTERS_RULE
    return EXTRA_TEXT_RULE if distinct else NOT_A_D_RULE


def _excerpt(reply: str) -> str:
    return reply if len(reply) <= _EXCERPT_CHARS else reply[: _EXCERPT_CHARS - 3] + "..."
