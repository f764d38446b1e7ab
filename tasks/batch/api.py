"""One model's provider batch API through LiteLLM (`acreate_file`, `acreate_batch`,
`aretrieve_batch`, `afile_content`; never raw HTTP): the batch input file written from requests,
and each output line read back into a ModelCall as an online answer would be.

Results are priced at the model's batch prices (`pricing.cost_of_usage(..., batch=True)`), never
at LiteLLM's online price. A line the provider failed is an error, never a wrong answer.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from roadeval.benchmarks.messages import encode_messages
from roadeval.tasks.batch.checks import provider_of
from roadeval.tasks.calls.gateway import ModelClient
from roadeval.tasks.calls.litellm_setup import ready_litellm
from roadeval.tasks.requests.pricing import cost_of_usage
from roadeval.tasks.requests.provider_output import read_output
from roadeval.tasks.requests.request import ErrorKind, ModelCall, ModelRequest

ENDPOINT = "/v1/chat/completions"
FINISHED = "completed"
ENDED_BADLY = ("failed", "expired", "cancelled")


class BatchApiError(RuntimeError):
    """A batch file the provider returned that cannot be read."""


@dataclass(frozen=True)
class BatchApi:
    """The batch API calls of one model client: its endpoint and key, as its online calls use."""

    client: ModelClient

    def _kwargs(self, request: ModelRequest) -> dict[str, Any]:
        # The same key handling as online calls (api_key_env, or the placeholder key for a
        # keyless endpoint): taken from the client's own keyword arguments.
        online = self.client.litellm_kwargs(request, [])
        kwargs: dict[str, Any] = {k: online[k] for k in ("api_base", "api_key") if k in online}
        # One HTTP try each: a hidden retry of a create could submit (and bill) a batch twice.
        kwargs.update(
            custom_llm_provider=provider_of(self.client.spec.model),
            timeout=self.client.spec.timeout_s,
            max_retries=0,
        )
        return kwargs

    def input_lines(self, requests: Sequence[ModelRequest]) -> bytes:
        """OpenAI's batch JSONL: one chat completion body per request, its key as custom_id.
        (CPU: base64 of every image; run it off the loop.)"""
        name = self.client.spec.model.split("/", 1)[1]
        lines = []
        for request in requests:
            body = {"model": name, "messages": encode_messages(request.messages), **request.params}
            line = {"custom_id": request.key, "method": "POST", "url": ENDPOINT, "body": body}
            lines.append(json.dumps(line, ensure_ascii=False))
        return ("\n".join(lines) + "\n").encode()

    async def upload(self, request: ModelRequest, data: bytes) -> str:
        """Upload the input file; its id."""
        uploaded = await ready_litellm().acreate_file(
            file=("roadeval-batch.jsonl", data, "application/jsonl"),
            purpose="batch",
            **self._kwargs(request),
        )
        return str(uploaded.id)

    async def create(self, request: ModelRequest, input_file_id: str, run_id: str | None) -> str:
        """Create the batch over an uploaded file; its id."""
        batch = await ready_litellm().acreate_batch(
            completion_window="24h",
            endpoint=ENDPOINT,
            input_file_id=input_file_id,
            metadata={"roadeval_run": run_id or ""},
            **self._kwargs(request),
        )
        return str(batch.id)

    async def find(self, request: ModelRequest, input_file_id: str, since: float) -> str | None:
        """The id of the batch made from `input_file_id`, if the provider made one: its list,
        newest first, is read back to `since` (epoch seconds) less a day of clock skew."""
        after: str | None = None
        while True:
            page = await ready_litellm().alist_batches(
                after=after, limit=100, **self._kwargs(request)
            )
            batches = list(page.data)
            for batch in batches:
                if batch.input_file_id == input_file_id:
                    return str(batch.id)
            if not batches or not page.has_more or batches[-1].created_at < since - 86400:
                return None
            after = str(batches[-1].id)

    async def retrieve(self, request: ModelRequest, batch_id: str) -> Any:
        # Without the flag, LiteLLM's logging downloads a finished batch's output file once
        # more in the background to price it: a request and a cost computation we do not need.
        return await ready_litellm().aretrieve_batch(
            batch_id=batch_id,
            litellm_metadata={"batch_ignore_default_logging": True},
            **self._kwargs(request),
        )

    async def content(self, request: ModelRequest, file_id: str | None) -> list[dict[str, Any]]:
        """The lines of an output or error file (none when the provider wrote no such file)."""
        if not file_id:
            return []
        response = await ready_litellm().afile_content(file_id=file_id, **self._kwargs(request))
        lines = []
        for number, raw in enumerate(response.content.decode().splitlines(), 1):
            if raw.strip():
                try:
                    lines.append(json.loads(raw))
                except json.JSONDecodeError as exc:
                    raise BatchApiError(f"batch file {file_id}, line {number}: {exc}") from None
        return lines


def error_kind_of_status(status: int | None) -> str:
    """A failed line's HTTP status as the kind of error it is."""
    if status == 429:
        return ErrorKind.RATE_LIMIT
    if status is not None and status >= 500:
        return ErrorKind.SERVER
    if status == 400:
        return ErrorKind.BAD_REQUEST
    return ErrorKind.OTHER


@dataclass(frozen=True)
class Slot:
    """Which request a batch line answers: its key, attempt and role (the request itself may
    not be at hand: a resumed batch holds requests no one in this run asked)."""

    key: str
    attempt: int
    role: str = "answer"

    @classmethod
    def of(cls, request: ModelRequest) -> Slot:
        return cls(request.key, request.attempt, request.role)


def read_line(
    client: ModelClient,
    slot: Slot,
    line: dict[str, Any] | None,
    latency: float,
    origin_run_id: str | None,
    missing: str = "missing from the batch's output",
) -> ModelCall:
    """The ModelCall one output (or error) line makes; a missing line (`missing` says why), a
    failed status or an empty answer is an error."""
    if line is None:
        return batch_error(client, slot, ErrorKind.OTHER, missing, latency)
    response = line.get("response") or {}
    status = response.get("status_code")
    body = response.get("body")
    if line.get("error") or status != 200 or not isinstance(body, dict):
        detail = line.get("error") or (body.get("error") if isinstance(body, dict) else body)
        message = f"the batch line failed (status {status}): {json.dumps(detail)}"
        return batch_error(client, slot, error_kind_of_status(status), message, latency)
    usage = body.get("usage") or {}
    cost = cost_of_usage(
        client.spec, usage.get("prompt_tokens"), usage.get("completion_tokens"), batch=True
    )
    output = read_output(ready_litellm().ModelResponse(**body), latency, cost, client.redact)
    if output is None:
        return batch_error(client, slot, ErrorKind.EMPTY, "the model returned no text", latency)
    return client.record(
        slot.key, slot.attempt, slot.role, 1, latency, output, origin_run_id=origin_run_id
    )


def batch_error(
    client: ModelClient, slot: Slot, kind: str, message: str, latency: float = 0.0
) -> ModelCall:
    """An error record for a request sent in a batch (one try: the batch)."""
    return client.record(slot.key, slot.attempt, slot.role, 1, latency, error=(kind, message))
