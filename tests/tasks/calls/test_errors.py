"""LiteLLM's exceptions mapped to error kinds: a refused key is `auth` whichever way a provider
says it (401, 403, or a client error in the words of a bad key), and nothing else is."""

from __future__ import annotations

import httpx
import litellm
import pytest

from roadeval.tasks.calls.errors import RETRYABLE, classify
from roadeval.tasks.requests.request import ErrorKind

_REQUEST = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")


def _response(status: int) -> httpx.Response:
    return httpx.Response(status, request=_REQUEST)


@pytest.mark.parametrize(
    "exc",
    [
        litellm.AuthenticationError("Incorrect API key provided: sk-...", "openai", "m"),
        litellm.PermissionDeniedError("not allowed", "openai", "m", _response(403)),
        litellm.APIError(401, "Unauthorized", "openai", "m"),
        litellm.APIError(403, "Forbidden", "openai", "m"),
        litellm.BadRequestError("API key not valid. Please pass a valid API key.", "m", "gemini"),
        litellm.BadRequestError('{"code": "invalid_api_key"}', "m", "openai"),
        litellm.BadRequestError("authentication_error: invalid x-api-key", "m", "anthropic"),
        litellm.BadRequestError("API_KEY_INVALID", "m", "vertex_ai"),
        litellm.APIError(400, "Invalid API Key", "openai", "m"),
    ],
    ids=lambda exc: f"{type(exc).__name__}-{getattr(exc, 'status_code', '')}",
)
def test_refused_keys_are_auth_and_not_retried(exc: Exception) -> None:
    assert classify(exc) == ErrorKind.AUTH
    assert ErrorKind.AUTH not in RETRYABLE


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (litellm.BadRequestError("image too large", "m", "openai"), ErrorKind.BAD_REQUEST),
        (
            litellm.BadRequestError("api key accepted; bad image", "m", "openai"),
            ErrorKind.BAD_REQUEST,
        ),
        # A 5xx that mentions a key is the server's failure (retried), not a refused key.
        (litellm.InternalServerError("invalid api key cache", "openai", "m"), ErrorKind.SERVER),
        (litellm.RateLimitError("slow down", "openai", "m"), ErrorKind.RATE_LIMIT),
    ],
)
def test_other_errors_are_not_auth(exc: Exception, kind: str) -> None:
    assert classify(exc) == kind
