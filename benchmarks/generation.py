"""Generation settings: what a suite's protocol sends with every request (and a judge with every
verdict), merged with the panel's per-model parameters by one stated rule:

    effective = protocol settings, then the panel's params over them, key by key

so the panel always wins where it speaks (a key set to null there removes the protocol's value),
and the manifest records where a run departs from its protocol. The settings in force are part of
each request, so of its key: changing one misses the cache, as it must.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class GenerationSettings(BaseModel):
    """The decoding parameters a protocol states; unset ones are left to the provider."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0)
    top_p: float | None = Field(default=None, gt=0, le=1)
    seed: int | None = None
    stop: tuple[str, ...] | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = Field(default=None, ge=0, le=20)

    def params(self) -> dict[str, Any]:
        """The settings as LiteLLM parameters (unset ones left out)."""
        return {
            key: list(value) if isinstance(value, tuple) else value
            for key, value in self.model_dump(exclude_none=True).items()
        }


def effective_params(protocol: GenerationSettings, panel: dict[str, Any]) -> dict[str, Any]:
    """The parameters sent: the protocol's, with the panel's over them (null removes a key)."""
    merged = {**protocol.params(), **panel}
    return {key: value for key, value in merged.items() if value is not None}


def departures(protocol: GenerationSettings, panel: dict[str, Any]) -> dict[str, Any]:
    """Where the panel overrides the protocol: {key: {"protocol": ..., "sent": ...}}."""
    stated = protocol.params()
    return {
        key: {"protocol": stated[key], "sent": panel[key]}
        for key in stated
        if key in panel and panel[key] != stated[key]
    }
