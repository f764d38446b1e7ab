"""Whether a panel model can run in `mode: batch`, checked before any call: its provider has
OpenAI-style files and batches endpoints in LiteLLM, and its batch calls can be priced.

Light on imports (no LiteLLM at import time), so the CLI checks a panel in milliseconds."""

from __future__ import annotations

from roadeval.tasks.requests.model_spec import CallMode, ModelSpec
from roadeval.tasks.requests.pricing import prices_for

# LiteLLM's files + batches API speaks OpenAI's protocol to these providers.
BATCH_PROVIDERS = ("openai", "hosted_vllm", "litellm_proxy", "azure")


class BatchModeError(ValueError):
    """A model in `mode: batch` that cannot be sent or priced as a batch; names the model."""


def provider_of(model: str) -> str:
    return model.split("/", 1)[0]


def batch_problem(spec: ModelSpec) -> str | None:
    """Why `spec` cannot run as a batch model, or None (also for an online model)."""
    if spec.mode is not CallMode.BATCH:
        return None
    if spec.is_baseline:
        return f"model {spec.label}: a built-in baseline has no batch API; drop its mode: batch"
    provider = provider_of(spec.model)
    if provider not in BATCH_PROVIDERS:
        return (
            f"model {spec.label}: mode batch needs a provider with OpenAI-style files and "
            f"batches endpoints ({', '.join(BATCH_PROVIDERS)}); {provider!r} is not one"
        )
    # Priced online but not as a batch: the ledger and the budget would have no true price.
    if prices_for(spec) is not None and prices_for(spec, batch=True) is None:
        return (
            f"model {spec.label}: mode batch, but its batch prices are unknown (the panel "
            "gives online prices, or LiteLLM's price map has no batch prices for it); set "
            "batch_input_cost_per_token and batch_output_cost_per_token in its panel entry"
        )
    return None


def check_batch_models(specs: list[ModelSpec]) -> None:
    """Raise BatchModeError naming every batch model that cannot run."""
    problems = [problem for spec in specs if (problem := batch_problem(spec))]
    if problems:
        raise BatchModeError("; ".join(problems))
