"""Seeded mutations of JSON-like values (replaced by random values, texts cut or made paths, bytes
flipped, nested past any bound) and of the lines of a file: shared by the fuzz tests of the suites'
loaders and of the panel file."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

TEXTS = (
    "",
    " ",
    "A",
    "e",
    "MCQ",
    "OEQ",
    "mcq",
    "TRJ-5",
    "SC-6",
    "VS1",
    "CO3",
    "image",
    "point_cloud",
    "LINESTRING (0 0, 10 10)",
    "POINT (1 2)",
    "LINESTRING EMPTY",
    "[[1, 2], [3, 4]]",
    "[[1, 2], [3",
    "../../../etc/passwd",
    "/etc/hostname",
    "/",
    ".",
    "a\x00b",
    "x" * 300,
    "dir/" * 40 + "f.png",
    "caf\u00e9 \u4e2d\u6587 \U0001f600",
    "\ud800",
    "1e999",
    "NaN",
    "{",
    "]]]]",
    "x.png",
    "missing.jpg",
)
NUMBERS = (0, 1, -1, 2, 3, 7, 10**6, 2**63 - 1, 2**63, -(2**70), 0.5, 1e308, -0.0)


class Fuzzer:
    """Seeded mutations of JSON rows and of their lines."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def value(self, depth: int = 0) -> Any:
        roll = self.rng.random()
        if roll < 0.1:
            return None
        if roll < 0.2:
            return self.rng.random() < 0.5
        if roll < 0.35:
            return self.rng.choice(NUMBERS)
        if roll < 0.45:
            return self.rng.choice((float("nan"), float("inf")))
        if roll < 0.7 or depth > 2:
            return self.rng.choice(TEXTS)
        if roll < 0.85:
            return [self.value(depth + 1) for _ in range(self.rng.randrange(4))]
        keys = ("A", "B", "C", "D", "junctions", "lines", "bytes", "path", "x")
        return {self.rng.choice(keys): self.value(depth + 1) for _ in range(self.rng.randrange(4))}

    def deep(self) -> Any:
        value: Any = self.rng.choice(TEXTS)
        for _ in range(self.rng.choice((63, 64, 65, 200, 700))):
            value = [value] if self.rng.random() < 0.5 else {"k": value}
        return value

    def mutate(self, value: Any, depth: int = 0) -> Any:
        """`value` with one change somewhere inside it."""
        roll = self.rng.random()
        if isinstance(value, dict) and value and roll < 0.6 and depth < 4:
            key = self.rng.choice(list(value))
            changed = dict(value)
            action = self.rng.random()
            if action < 0.15:
                del changed[key]
            elif action < 0.2:
                changed[self.rng.choice(("hint", "Answer", "", "x" * 80))] = self.value()
            else:
                changed[key] = self.mutate(value[key], depth + 1)
            return changed
        if isinstance(value, list) and value and roll < 0.6 and depth < 4:
            changed_list = list(value)
            index = self.rng.randrange(len(value))
            action = self.rng.random()
            if action < 0.2:
                del changed_list[index]
            elif action < 0.3:
                changed_list.append(value[index])  # shared: mutations copy, never edit
            else:
                changed_list[index] = self.mutate(value[index], depth + 1)
            return changed_list
        if isinstance(value, str) and roll < 0.8:
            edits: list[Callable[[str], Any]] = [
                lambda s: s[: self.rng.randrange(len(s) + 1)],
                lambda s: s + self.rng.choice(TEXTS),
                lambda s: s.upper(),
                lambda s: " " + s + "\n",
                lambda s: s.replace("/", "\\"),
                lambda s: "../" + s,
                lambda s: s * 3,
            ]
            return self.rng.choice(edits)(value)
        if isinstance(value, bytes) and roll < 0.8:
            cut = value[: self.rng.randrange(len(value) + 1)]
            return cut if self.rng.random() < 0.5 else b"\x89PNG\r\n\x1a\n" + cut[8:40]
        if roll < 0.93:
            return self.value()
        return self.deep()

    def row(self, row: dict[str, Any]) -> dict[str, Any]:
        mutated = row
        for _ in range(self.rng.choice((1, 1, 2, 3))):
            mutated = self.mutate(mutated)
        return mutated if isinstance(mutated, dict) else row

    def line(self, row: dict[str, Any]) -> bytes:
        """One JSONL line for `row`: most as JSON, some broken in the ways a file breaks."""
        try:
            text = json.dumps(row, ensure_ascii=self.rng.random() < 0.5)
        except (ValueError, RecursionError):
            text = "{}"
        data = text.encode("utf-8", errors="surrogatepass")
        roll = self.rng.random()
        if roll < 0.75:
            return data
        if roll < 0.8:
            return data[: self.rng.randrange(len(data) + 1)]
        if roll < 0.85 and data:
            at = self.rng.randrange(len(data))
            return (
                data[:at] + self.rng.choice((b"\xff", b"\xe9", b"\xc3", b"\x00", b"\n")) + data[at:]
            )
        if roll < 0.88:
            return b"[" * self.rng.choice((65, 1000, 100_000))
        if roll < 0.91:
            return b'{"id": ' + b"9" * self.rng.choice((20, 5000)) + b"}"
        if roll < 0.94:
            return self.rng.choice((b"null", b"[]", b'"text"', b"NaN", b"{}", b"   "))
        if roll < 0.97:
            return data.replace(b'"', b"'", 1)
        return b'{"id": "' + b"q" * 1_000_001 + b'"}'
