"""What a model's tokens cost: the panel's prices, else LiteLLM's local price map; and the most a
request can cost before it is sent (its prompt, its images by the provider's rule, every output
token it may ask for). The gateway, the budget and the dry-run estimate all price through here,
so that a reservation, an estimate and the ledger agree on one price per model.

Precedence, per price pair (online or batch):
- the panel's pair (`input_cost_per_token` + `output_cost_per_token`, or the `batch_*` pair for
  batch prices) wins; a half-given pair is a ValueError naming the model, never completed from
  the map (one price from the panel and one from the map describes no real tariff);
- else LiteLLM's bundled map (`litellm.model_cost`, read locally: the package sets
  LITELLM_LOCAL_MODEL_COST_MAP), looked up as `completion_cost` would: the whole model string,
  then the name without its provider prefix if that entry is the same provider's;
- batch prices are the map's `*_cost_per_token_batches`; online prices are never used for a
  batch call (a batch model with neither is unpriced, not priced by a guess);
- built-in baselines cost nothing; anything else is unpriced (None), never $0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from roadeval.tasks.requests.image_tokens import image_tokens
from roadeval.tasks.requests.model_spec import ModelSpec

PANEL = "panel"
LITELLM = "litellm"
BASELINE = "baseline"


@dataclass(frozen=True)
class Prices:
    """USD per token, and where the prices came from: "panel", "litellm", "panel batch",
    "litellm batch" or "baseline"."""

    input: float
    output: float
    source: str


@dataclass(frozen=True)
class WorstCase:
    """The most one request can cost: its input tokens (text and images), every output token it
    may ask for, and their price (None when the model is unpriced)."""

    tokens_in: int
    tokens_out: int
    usd: float | None


def prices_for(spec: ModelSpec, *, batch: bool = False) -> Prices | None:
    """The model's prices per token (batch prices with `batch`), or None when unpriced. Never
    raises for an unpriced model; a half-given panel pair is a ValueError naming the model.
    Cached: it runs on the hot path of every call."""
    return _prices(
        spec.label,
        spec.model,
        spec.is_baseline,
        spec.batch_input_cost_per_token if batch else spec.input_cost_per_token,
        spec.batch_output_cost_per_token if batch else spec.output_cost_per_token,
        batch,
    )


@lru_cache(maxsize=1024)
def _prices(
    label: str,
    model: str,
    is_baseline: bool,
    panel_in: float | None,
    panel_out: float | None,
    batch: bool,
) -> Prices | None:
    # Keyed on the fields prices depend on: a ModelSpec holds a dict and cannot be hashed.
    if is_baseline:
        return Prices(0.0, 0.0, BASELINE)
    suffix = " batch" if batch else ""
    if panel_in is not None and panel_out is not None:
        return Prices(panel_in, panel_out, PANEL + suffix)
    if (panel_in is None) != (panel_out is None):
        prefix = "batch_" if batch else ""
        given, missing = ("input", "output") if panel_in is not None else ("output", "input")
        raise ValueError(
            f"model {label}: {prefix}{given}_cost_per_token is given but "
            f"{prefix}{missing}_cost_per_token is not; give both or neither"
        )
    entry = map_entry(model)
    if entry is None:
        return None
    key_suffix = "_batches" if batch else ""
    price_in = entry.get(f"input_cost_per_token{key_suffix}")
    price_out = entry.get(f"output_cost_per_token{key_suffix}")
    if price_in is None or price_out is None:
        return None
    return Prices(float(price_in), float(price_out), LITELLM + suffix)


@lru_cache(maxsize=1024)
def map_entry(model: str) -> Mapping[str, Any] | None:
    """The model's entry in LiteLLM's local price map, or None. Looked up as `completion_cost`
    does: the whole string (e.g. `gemini/gemini-2.5-flash`), then the bare name (`gpt-4o-mini`
    for `openai/gpt-4o-mini`) if the entry is that provider's, so that `openai/Qwen/...` on a
    local server is not priced as another provider's hosted Qwen."""
    import litellm

    costs: Mapping[str, Mapping[str, Any]] = litellm.model_cost
    entry = costs.get(model)
    if entry is not None:
        return entry
    provider, _, bare = model.partition("/")
    entry = costs.get(bare)
    if entry is not None and _same_provider(str(entry.get("litellm_provider") or ""), provider):
        return entry
    return None


def _same_provider(entry_provider: str, provider: str) -> bool:
    # The map files Vertex, Bedrock and Fireworks entries under sub-providers
    # ("vertex_ai-language-models", "bedrock_converse"): LiteLLM matches them by prefix too.
    if entry_provider == provider:
        return True
    return provider in ("vertex_ai", "bedrock", "fireworks_ai") and entry_provider.startswith(
        provider
    )


def cost_of_usage(
    spec: ModelSpec, tokens_in: int | None, tokens_out: int | None, *, batch: bool = False
) -> float | None:
    """USD for the tokens a request used, or None when the model is unpriced or a count is
    unknown (a baseline costs 0 whatever it reports)."""
    prices = prices_for(spec, batch=batch)
    if prices is None:
        return None
    if prices.source == BASELINE:
        return 0.0
    if tokens_in is None or tokens_out is None:
        return None
    return tokens_in * prices.input + tokens_out * prices.output


def max_output_tokens(spec: ModelSpec, params: Mapping[str, Any]) -> int | None:
    """The most output tokens a request may be billed for: its `max_tokens` (or
    `max_completion_tokens`, the newer OpenAI name; the smaller if both), else the model's
    `max_output_tokens` in the price map, else None (unbounded as far as we know)."""
    asked = [
        int(params[key])
        for key in ("max_tokens", "max_completion_tokens")
        if params.get(key) is not None
    ]
    if asked:
        return min(asked)
    if spec.is_baseline:
        return None
    entry = map_entry(spec.model)
    if entry is None or entry.get("max_output_tokens") is None:
        return None
    return int(entry["max_output_tokens"])


def worst_case(
    spec: ModelSpec,
    prompt_tokens: int,
    image_sizes: Sequence[tuple[int, int]],
    max_out: int,
    *,
    batch: bool = False,
) -> WorstCase:
    """The most a request can cost: `prompt_tokens` of text, its images (width, height) by the
    provider's rule (`tasks.requests.image_tokens`; the largest rule for a model with none
    known) and `max_out` output tokens."""
    tokens_in = prompt_tokens + sum(image_tokens(spec.model, w, h).tokens for w, h in image_sizes)
    prices = prices_for(spec, batch=batch)
    usd = None if prices is None else tokens_in * prices.input + max_out * prices.output
    return WorstCase(tokens_in, max_out, usd)
