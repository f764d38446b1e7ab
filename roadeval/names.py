"""Names are data: a model's, a panel's, a suite's or an item's name is printed on terminals
(tables, warnings, progress) and in reports, so it may hold no character that a terminal would
act on rather than show. Emoji and any script are fine (their joiners too); the refused ones are:

- control characters, C0 and C1 (ESC starts a terminal's escape sequences, a newline or carriage
  return forges a line, NUL cuts a C string);
- line and paragraph separators (U+2028, U+2029), which some terminals and editors break on;
- the bidirectional formatting characters (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F,
  U+061C), which reorder the text around them: a name can look like another one;
- lone surrogates (which no UTF-8 file, Parquet column or JSON manifest can hold).
"""

from __future__ import annotations

import unicodedata
from typing import Annotated

from pydantic import AfterValidator

_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_REFUSED_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})


def refused_character(text: str) -> str | None:
    """The first character of `text` that a name may not hold, or None."""
    for char in text:
        if char in _BIDI or unicodedata.category(char) in _REFUSED_CATEGORIES:
            return char
    return None


def describe_character(char: str) -> str:
    """A character as a person reads it in an error: its code point and, where it has one, its
    Unicode name (U+001B, U+202E RIGHT-TO-LEFT OVERRIDE)."""
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" {name}" if name else "")


# A name quoted in an error is cut to this many characters.
_SHOWN = 80


def quoted(text: str) -> str:
    """`text` as an error quotes it: repr's escapes (a control character reads as `\\x1b`),
    cut to a length a message can hold."""
    return repr(text if len(text) <= _SHOWN else text[:_SHOWN] + "...")


def name_problem(text: str) -> str | None:
    """Why `text` cannot be a name, or None: it is blank, or holds a character a terminal acts
    on (see the module docstring). The name itself is quoted with its characters escaped."""
    if not text.strip():
        return f"{quoted(text)} is blank: a name needs a visible character"
    char = refused_character(text)
    if char is None:
        return None
    return (
        f"{quoted(text)} holds {describe_character(char)}: names are shown on terminals and in "
        "reports, so they may hold no control, line-break or bidirectional-formatting character"
    )


def _a_name(value: str) -> str:
    if (problem := name_problem(value)) is not None:
        raise ValueError(problem)
    return value


# A name in a pydantic record (a panel's, a model's, a suite's): refused at load with why.
Name = Annotated[str, AfterValidator(_a_name)]
