"""The rows of a released prediction file that were counted as errors, and why (no prediction, an
answer the release's parser could not read, an image the release could not open): each suite's
`score_predictions` reports them under `ERROR_ROWS`, and `roadeval score-predictions` says them
and refuses a file mostly made of them, whose metrics would measure the errors, not a model."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# The key of a prediction report that holds its `ErrorRows` (as `as_dict` gives them).
ERROR_ROWS = "error_rows"


@dataclass(frozen=True)
class ErrorRows:
    """Of `rows` scored, those counted as errors per reason (`why`), largest first."""

    rows: int
    why: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def counted(cls, rows: int, reasons: Counter[str]) -> ErrorRows:
        return cls(rows, dict(reason for reason in reasons.most_common() if reason[1]))

    @property
    def errors(self) -> int:
        return sum(self.why.values())

    @property
    def mostly_errors(self) -> bool:
        """More than half of the rows counted as errors."""
        return 2 * self.errors > self.rows

    def as_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "errors": self.errors, "why": dict(self.why)}

    @classmethod
    def of(cls, report: Mapping[str, Any]) -> ErrorRows | None:
        """The error rows a prediction report holds; None when it has none (a suite that does
        not count them)."""
        found = report.get(ERROR_ROWS)
        if not isinstance(found, Mapping):
            return None
        return cls(int(found["rows"]), {str(k): int(v) for k, v in found["why"].items()})

    @property
    def line(self) -> str:
        """One line: how many of the rows, what share, and each reason's count."""
        if not self.errors:
            return f"rows counted as errors: 0 of {self.rows:,}"
        share = f"{100 * self.errors / self.rows:.1f}%" if self.rows else "all"
        reasons = "; ".join(f"{n:,} {reason}" for reason, n in self.why.items())
        return f"rows counted as errors: {self.errors:,} of {self.rows:,} ({share}): {reasons}"
