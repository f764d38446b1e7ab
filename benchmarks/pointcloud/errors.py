"""The one error a bad point-cloud file raises: it names the file and what is wrong with it, so a
suite loader can turn it into an item problem without guessing."""

from __future__ import annotations

from pathlib import Path


class PointCloudError(ValueError):
    """A scan that cannot be loaded or rendered; `path` and `problem` are kept for reports."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")
