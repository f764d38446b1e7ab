"""Offline baselines as a LiteLLM custom provider, so they travel the same path as a real model."""

from __future__ import annotations

from typing import Any

import litellm
from litellm import CustomLLM

from roadeval.benchmarks.registry import BaselineCall, BaselineReply, find_baseline
from roadeval.tasks.requests.model_spec import BASELINE_PROVIDER


class BaselineProvider(CustomLLM):
    """Answers `roadeval/<baseline>` calls with the registered baseline of the item's suite."""

    async def acompletion(
        self,
        model: str,
        messages: list,
        api_base: str,
        custom_prompt_dict: dict,
        model_response: litellm.ModelResponse,
        print_verbose: Any,
        encoding: Any,
        api_key: Any,
        logging_obj: Any,
        optional_params: dict,
        acompletion: Any = None,
        litellm_params: dict | None = None,
        logger_fn: Any = None,
        headers: dict | None = None,
        timeout: Any = None,
        client: Any = None,
    ) -> litellm.ModelResponse:
        routing = ((litellm_params or {}).get("metadata") or {}).get("roadeval") or {}
        call = routing.get("call")
        if not isinstance(call, BaselineCall):
            raise ValueError(f"baseline {model!r} called without the item it is to answer")
        baseline = find_baseline(model, call.suite, call.task)
        if baseline is None:
            raise ValueError(
                f"baseline {model!r} has no answer for suite {call.suite!r} task {call.task!r}"
            )
        reply = baseline.fn(call)
        choice: dict[str, Any] = {"finish_reason": "stop"}
        if isinstance(reply, BaselineReply):
            choice["message"] = {"role": "assistant", "content": reply.text}
            if optional_params.get("logprobs"):
                choice["logprobs"] = _logprobs(reply, int(optional_params.get("top_logprobs") or 0))
        else:
            choice["message"] = {"role": "assistant", "content": reply}
        return litellm.ModelResponse(
            model=f"{BASELINE_PROVIDER}/{model}",
            choices=[choice],
            usage={"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        )


def _logprobs(reply: BaselineReply, top: int) -> dict[str, Any]:
    """The first token with its alternatives, in the OpenAI shape a provider sends."""
    ranked = sorted(reply.first_token_logprobs.items(), key=lambda kv: -kv[1])
    token = reply.text[:1]
    if token not in reply.first_token_logprobs:
        raise ValueError(f"baseline reply {reply.text!r}: its first token has no log-probability")
    return {
        "content": [
            {
                "token": token,
                "logprob": reply.first_token_logprobs[token],
                "bytes": None,
                "top_logprobs": [
                    {"token": t, "logprob": lp, "bytes": None} for t, lp in ranked[:top]
                ],
            }
        ]
    }


def install() -> None:
    """Register the provider with LiteLLM once per process."""
    if not any(entry.get("provider") == BASELINE_PROVIDER for entry in litellm.custom_provider_map):
        litellm.custom_provider_map = [
            *litellm.custom_provider_map,
            {"provider": BASELINE_PROVIDER, "custom_handler": BaselineProvider()},
        ]
