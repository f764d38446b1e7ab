"""Suites for tests of corpus metrics alone: nothing to load, prompt, parse or score."""

from __future__ import annotations

from typing import Any, ClassVar

from roadeval.benchmarks.suite import Suite


class MetricsOnlySuite(Suite):
    """A suite whose items are made by the test and arrive scored; a subclass names itself
    and says what its metrics are."""

    prompt_version: ClassVar[str] = "1"

    def load(self, source: Any, *, on_bad_item: Any = None) -> Any:
        raise NotImplementedError

    def prompt(self, item: Any, images: Any) -> list[Any]:
        return []

    def parse(self, item: Any, output: Any) -> Any:
        raise NotImplementedError

    def score(self, item: Any, parsed: Any) -> dict[str, float]:
        return {}
