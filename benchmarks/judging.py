"""Scorers that call a model: the judge contract a suite's scorer sees.

A judge is a model in a role, called through the same gateway as the models under test (same
cache, limits, retries, cost and error rows). A scorer builds a JudgeRequest (the exact messages,
the settings its rubric states, a version for its prompt) and gets back a JudgeReply that says
exactly which model answered, with which parameters, to which prompt, and what it said.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from roadeval.benchmarks.generation import GenerationSettings
from roadeval.benchmarks.messages import Message, key_default
from roadeval.benchmarks.output import ModelOutput


@dataclass(frozen=True)
class JudgeRequest:
    messages: list[Message]
    settings: GenerationSettings = field(default_factory=GenerationSettings)
    prompt_version: str = ""

    @property
    def prompt_hash(self) -> str:
        """sha256 of the prompt version and the exact messages: which rubric judged."""
        text = json.dumps(
            {"version": self.prompt_version, "messages": self.messages},
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            default=key_default,
        )
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class JudgeReply:
    """The judge's answer (`output`), or why there is none (`error`, a failed call)."""

    model: str
    request_key: str
    params: dict[str, Any]
    prompt_hash: str
    output: ModelOutput | None = None
    error: str | None = None

    @property
    def text(self) -> str | None:
        return self.output.text if self.output is not None else None


class Judge(Protocol):
    """What a scorer calls; the run provides it when the panel names a judge."""

    async def __call__(self, request: JudgeRequest) -> JudgeReply: ...
