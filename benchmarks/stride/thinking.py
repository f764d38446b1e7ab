"""The release's first step on every reply (answers and judge verdicts): keep only the text after
the last `</think>`, stripped, so reasoning traces never reach a parser (`stride/io.py`)."""

from __future__ import annotations

# Spelled in two parts, as the release does, so that this file holds no literal closing tag.
THINK_END = "</" + "think>"


def strip_thinking(text: str) -> str:
    """The text after the last `</think>`, stripped; the whole text stripped when there is none."""
    if THINK_END in text:
        return text.rsplit(THINK_END, 1)[-1].strip()
    return text.strip()
