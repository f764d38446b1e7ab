"""How to call one model: its LiteLLM model string, endpoint, decoding parameters and limits."""

from __future__ import annotations

import os
from enum import StrEnum
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from roadeval.names import Name
from roadeval.tasks.requests.freshness import ReuseFor
from roadeval.tasks.requests.model_bounds import (
    AUTH_FAILED_AFTER,
    BATCH_POLL_S,
    BATCH_SIZE,
    MAX_CONCURRENCY,
    MAX_TOKENS,
    OUTPUT_BOUND_PARAMS,
    PRICE,
    RETRIES,
    RETRY_BACKOFF_S,
    RPM,
    SAMPLES,
    TIMEOUT_S,
    TPM,
    UNREACHABLE_AFTER_S,
)

BASELINE_PROVIDER = "roadeval"


class CallMode(StrEnum):
    """How a model's requests are sent: one HTTP call each, or grouped through its provider's
    batch API (OpenAI-style `/v1/files` + `/v1/batches`), usually at half price."""

    ONLINE = "online"
    BATCH = "batch"


class MissingKeyError(ValueError):
    """A model's `api_key_env` names a variable that is not set."""


# The panel's price pairs: each is given whole or not at all, for every kind of model.
PRICE_PAIRS: tuple[tuple[str, str], ...] = (
    ("input_cost_per_token", "output_cost_per_token"),
    ("batch_input_cost_per_token", "batch_output_cost_per_token"),
)


def endpoint_problem(value: str) -> str | None:
    """Why `value` cannot be a model's endpoint, or None: it must be an http:// or https:// URL
    with a host and, if it names a port, one from 1 to 65535."""
    shown = value if len(value) <= 200 else value[:200] + "..."
    if not value.strip():
        return (
            "is empty: give the endpoint's http:// or https:// URL, or leave api_base out for "
            "the provider's own"
        )
    if any(c.isspace() or not c.isprintable() for c in value):
        return f"{shown!r} holds spaces or control characters; expected an http(s) URL"
    try:
        parts = urlsplit(value)
    except ValueError as exc:
        return f"{shown!r} is not a URL ({exc})"
    if parts.scheme.lower() not in ("http", "https"):
        what = f"its scheme is {parts.scheme!r}" if parts.scheme else "it has no scheme"
        return f"{shown!r} is not an http:// or https:// URL ({what})"
    if not parts.hostname:
        return f"{shown!r} names no host"
    try:
        port = parts.port
    except ValueError:
        return f"{shown!r}: the port is not a number from 1 to 65535"
    if port == 0:
        return f"{shown!r}: the port is not a number from 1 to 65535"
    return None


class ModelSpec(BaseModel):
    """One panel entry. No secrets here: `api_key_env` names the variable that holds a key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: Name = Field(min_length=1, description="LiteLLM model string, e.g. openai/gpt-4o")
    name: Name | None = Field(
        default=None, description="name in tables and reports; default: model"
    )
    api_base: str | None = None
    api_key_env: str | None = None
    params: dict[str, Any] = Field(default_factory=dict, description="decoding parameters")
    max_concurrency: Annotated[int, AfterValidator(MAX_CONCURRENCY)] = 8
    rpm: Annotated[float, AfterValidator(RPM)] | None = Field(
        default=None, description="requests per minute"
    )
    tpm: Annotated[float, AfterValidator(TPM)] | None = Field(
        default=None,
        description="tokens per minute (prompt + max output reserved, reconciled with the usage)",
    )
    timeout_s: Annotated[float, AfterValidator(TIMEOUT_S)] = Field(
        default=120.0, description="deadline for each whole request, however slow the reply"
    )
    num_retries: Annotated[int, AfterValidator(RETRIES)] = 3
    unreachable_after_s: Annotated[float, AfterValidator(UNREACHABLE_AFTER_S)] = Field(
        default=60.0,
        description="declare the model unreachable after this long with only transport failures",
    )
    auth_failed_after: Annotated[int, AfterValidator(AUTH_FAILED_AFTER)] = Field(
        default=3,
        description="declare the model auth_failed after this many refused keys (401, 403, "
        "invalid key) with no success between",
    )
    retry_backoff_s: Annotated[float, AfterValidator(RETRY_BACKOFF_S)] = 1.0
    input_cost_per_token: Annotated[float, AfterValidator(PRICE)] | None = None
    output_cost_per_token: Annotated[float, AfterValidator(PRICE)] | None = None
    mode: CallMode = Field(default=CallMode.ONLINE, description="online calls or the batch API")
    # Batch prices: these win; else the price map's batch prices; a batch model with neither
    # is refused before any call rather than priced by a guess.
    batch_input_cost_per_token: Annotated[float, AfterValidator(PRICE)] | None = None
    batch_output_cost_per_token: Annotated[float, AfterValidator(PRICE)] | None = None
    batch_size: Annotated[int, AfterValidator(BATCH_SIZE)] = Field(
        default=1000, description="requests per submitted batch"
    )
    batch_poll_s: Annotated[float, AfterValidator(BATCH_POLL_S)] = Field(
        default=30.0, description="seconds between batch polls"
    )
    suites: list[Name] | None = Field(default=None, description="only these suites")
    samples: Annotated[int, AfterValidator(SAMPLES)] = Field(
        default=1,
        description="independent answers per item: each sample is a request of its own (its "
        "index joins the request key; sample 1 keeps a single answer's key), scored apart",
    )
    reuse_for: ReuseFor | None = Field(
        default=None,
        description="how long a stored answer of this model may be reused: forever, never, or "
        "a duration (12h, 7d); unset: the panel's (a baseline: forever), else the run's default",
    )

    @field_validator("model")
    @classmethod
    def _has_provider(cls, value: str) -> str:
        if "/" not in value:
            raise ValueError(
                f"{value!r} has no provider prefix; LiteLLM needs e.g. 'openai/{value}' "
                f"or '{BASELINE_PROVIDER}/{value}' for a built-in baseline"
            )
        return value

    @field_validator("api_base")
    @classmethod
    def _is_an_endpoint(cls, value: str | None) -> str | None:
        if value is not None and (problem := endpoint_problem(value)) is not None:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _prices_in_pairs(self) -> ModelSpec:
        # At load, for every model kind (baselines and judges too): one price from the panel and
        # one from LiteLLM's map would describe no real tariff.
        for first, second in PRICE_PAIRS:
            values = (getattr(self, first), getattr(self, second))
            if (values[0] is None) != (values[1] is None):
                given, missing = (first, second) if values[0] is not None else (second, first)
                raise ValueError(
                    f"{given} is given but {missing} is not: prices come in pairs, give both "
                    "or neither"
                )
        return self

    @model_validator(mode="after")
    def _output_bound_is_a_count(self) -> ModelSpec:
        # The estimate and the budget reserve this many output tokens for every request.
        for key in OUTPUT_BOUND_PARAMS:
            value = self.params.get(key)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"params.{key}: a whole number of tokens, not {value!r}")
            if (problem := MAX_TOKENS.problem(value)) is not None:
                raise ValueError(f"params.{key}: {problem}")
        return self

    @model_validator(mode="after")
    def _baseline_seed_is_whole(self) -> ModelSpec:
        # A built-in baseline draws from it in every shard: a bad one would fail the run there.
        seed = self.params.get("seed")
        whole = isinstance(seed, int) and not isinstance(seed, bool)
        if self.is_baseline and seed is not None and not whole:
            raise ValueError(f"params.seed: a baseline's seed is a whole number, not {seed!r}")
        return self

    @property
    def label(self) -> str:
        return self.name or self.model

    @property
    def is_baseline(self) -> bool:
        return self.model.startswith(f"{BASELINE_PROVIDER}/")

    @property
    def placeholder(self) -> str | None:
        """Why this model's answers measure nothing, when it is a placeholder baseline (the
        offline midpoint judge); None for any other model."""
        if not self.is_baseline:
            return None
        from roadeval.benchmarks.registry import placeholder_reason

        return placeholder_reason(self.baseline_name)

    @property
    def baseline_name(self) -> str:
        return self.model.split("/", 1)[1]

    @property
    def seed(self) -> int:
        return int(self.params.get("seed", 0))

    @property
    def missing_key(self) -> str | None:
        """Why this model cannot be called for want of its key (now), or None when it can."""
        if self.api_key_env and not os.environ.get(self.api_key_env):
            return (
                f"model {self.label}: its api_key_env, {self.api_key_env}, is not set in the "
                "environment"
            )
        return None


DEFAULT_JUDGE_MODEL = "openai/Qwen/Qwen3-VL-32B-Instruct"


class JudgeSpec(ModelSpec):
    """The panel's judge: any model spec; by default the vision-language judge STRIDE's release
    grades with, on an OpenAI-compatible endpoint (vLLM, SGLang) whose `api_base` you give."""

    model: str = Field(
        default=DEFAULT_JUDGE_MODEL, min_length=1, description="LiteLLM model string of the judge"
    )

    @model_validator(mode="after")
    def _default_judge_is_served(self) -> JudgeSpec:
        # The default judge is an open model: without an endpoint LiteLLM would send it to
        # OpenAI's own API, which does not serve it.
        if self.model == DEFAULT_JUDGE_MODEL and self.api_base is None:
            raise ValueError(
                f"the default judge, {DEFAULT_JUDGE_MODEL.removeprefix('openai/')}, runs on an "
                "OpenAI-compatible endpoint you serve: give its api_base (or another model)"
            )
        return self


def redact_model(spec_dump: dict[str, Any]) -> dict[str, Any]:
    """Specs carry only the name of a key's variable, never a key; keep it that way in artifacts."""
    return {k: v for k, v in spec_dump.items() if "key" not in k or k == "api_key_env"}
