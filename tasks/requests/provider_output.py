"""A LiteLLM response read into a ModelOutput: the text, usage, finish reason, the output tokens'
log-probabilities (OpenAI's shape, which LiteLLM passes through) and a few provider extras."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from roadeval.benchmarks.output import ModelOutput, TokenLogprob


def _field(obj: Any, name: str) -> Any:
    # LiteLLM hands some parts over as objects and others as plain dicts, by provider.
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def token_logprobs(choice: Any) -> tuple[TokenLogprob, ...] | None:
    """The choice's per-token log-probabilities, or None when the provider sent none."""
    content = _field(_field(choice, "logprobs"), "content")
    if not content:
        return None
    tokens = []
    for entry in content:
        top = tuple(
            (str(_field(alt, "token")), float(_field(alt, "logprob")))
            for alt in _field(entry, "top_logprobs") or ()
        )
        token, logprob = str(_field(entry, "token")), float(_field(entry, "logprob"))
        tokens.append(TokenLogprob(token, logprob, top))
    return tuple(tokens)


def provider_extras(response: Any, choice: Any) -> dict[str, Any]:
    """What else identifies the answer: the provider's response id, the model that actually
    served it, the system fingerprint, and any reasoning text it returned beside the answer."""
    extras = {
        "response_id": _field(response, "id"),
        "served_model": _field(response, "model"),
        "system_fingerprint": _field(response, "system_fingerprint"),
        "reasoning": _field(_field(choice, "message"), "reasoning_content"),
    }
    return {key: value for key, value in extras.items() if value}


def read_output(
    response: Any, latency: float, cost: float | None, redact: Callable[[str | None], str | None]
) -> ModelOutput | None:
    """The response's first choice as an output; None when it carries no text."""
    choice = response.choices[0]
    text = redact(_field(_field(choice, "message"), "content"))
    if not text:
        return None
    usage = _field(response, "usage")
    extras = provider_extras(response, choice)
    if "reasoning" in extras:
        extras["reasoning"] = redact(extras["reasoning"])
    return ModelOutput(
        text=text,
        finish_reason=_field(choice, "finish_reason"),
        tokens_in=_field(usage, "prompt_tokens"),
        tokens_out=_field(usage, "completion_tokens"),
        cost_usd=cost,
        latency_s=latency,
        logprobs=token_logprobs(choice),
        extras=extras,
    )
